The following script would get stuck indefinitely on the second rollout collection:
```python
import trlx
from trlx.data.default_configs import default_ppo_config

def main():
    config = default_ppo_config()
    config.train.seq_length = 1024
    config.model.model_path = "gpt2"
    config.method.gen_kwargs["top_k"] = 1

    prompts = ["*" * 256] * 1024

    trlx.train(
        reward_fn=lambda samples, **kwargs: [0] * len(samples),
        prompts=prompts,
        eval_prompts=prompts,
        config=config,
        stop_sequences=["*"],
    )

if __name__ == "__main__":
    main()
```
```bash
accelerate launch --num_processes 1 --config_file configs/accelerate/zero2-bf16.yaml examples/ppo_stuck.py
```
