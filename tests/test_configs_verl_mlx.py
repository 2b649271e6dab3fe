"""verl and mlx-lm, read by their own configs' rules: verl's Hydra `key=value` overrides over its shipped
defaults (PPO's accumulation from ppo_mini_batch_size × rollout.n over the data-parallel ranks, SFT's global batch
split over torchrun's processes), a verl YAML, a recipe's own main over verl's config; mlx_lm.lora's dashed flags
and YAML (the last num_layers blocks, a quantised checkpoint as QLoRA, the unified-memory note)."""
from __future__ import annotations

from pathlib import Path

from oomdoctor.configs import load_config
from oomdoctor.configs.edits import edits_for
from oomdoctor.facts import Change

CORPUS = Path(__file__).parent / "data" / "real-configs"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_verl_grpo_overrides_give_the_actors_batch_accumulation_and_sample_length():
    s = load_config(str(CORPUS / "verl" / "head_grpo_qwen2_5_3b_lora.sh"))
    assert (s.framework, s.model, s.stage, s.method, s.lora_rank, s.lora_alpha) == \
        ("verl", "Qwen/Qwen2.5-3B-Instruct", "ppo", "lora", 64, 32)
    assert (s.seq_len, s.micro_batch, s.grad_accum, s.n_gpus) == (512 + 1024, 40, 1, 2)
    assert s.sources["micro_batch"].key == "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"
    assert s.extras["rollout_gpu_memory_utilization"] == "0.6" and s.extras["rollout_engine"] == "vllm"
    assert edits_for(s, [Change("micro_batch", 40, 20)]) == []      # overrides: the values are shown, not patched


def test_verl_defaults_fill_what_the_overrides_leave_out(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python3 -m verl.trainer.main_ppo \\\n"
                                               "  actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                                               "  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n"
                                               "  actor_rollout_ref.rollout.n=8\n"))
    # 256 × 8 sequences a step over 8 GPUs (trainer.n_gpus_per_node 8), 4 a forward: 64 micro-batches
    assert (s.method, s.seq_len, s.n_gpus, s.grad_accum, s.grad_ckpt, s.offload_params) == \
        ("full", 1024, 8, 64, True, False)
    assert not s.stated("n_gpus")


def test_verl_old_global_micro_batch_is_divided_by_the_data_parallel_ranks(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python3 -m verl.trainer.main_ppo "
                                               "actor_rollout_ref.model.path=m/x actor_rollout_ref.actor.ppo_micro_batch_size=16 "
                                               "trainer.n_gpus_per_node=4 trainer.nnodes=2 "
                                               "actor_rollout_ref.actor.fsdp_config.param_offload=True\n"))
    assert (s.n_gpus, s.micro_batch, s.offload_params) == (8, 2, True)


def test_a_recipe_main_over_verls_config_is_verl(tmp_path):
    s = load_config(_write(tmp_path, "dapo.sh", "python3 -m recipe.dapo.main_dapo "
                                                "actor_rollout_ref.model.path=Qwen/Qwen2.5-32B "
                                                "+actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "
                                                "data.max_prompt_length=2048 data.max_response_length=8192\n"))
    assert (s.framework, s.micro_batch, s.seq_len) == ("verl", 2, 10240)


def test_verl_sft_batch_is_split_over_torchruns_processes():
    s = load_config(str(CORPUS / "verl" / "head_sft_qwen_05_peft.sh"))
    assert (s.stage, s.model, s.method, s.lora_rank, s.seq_len, s.micro_batch) == \
        ("sft", "Qwen/Qwen2.5-0.5B-Instruct", "lora", 32, 1024, 4)
    # its GPU count is the script's $1: one assumed, 256 / 4 a step
    assert (s.n_gpus, s.grad_accum) == (1, 64)


def test_verl_sft_with_a_known_process_count(tmp_path):
    s = load_config(_write(tmp_path, "sft.sh", "torchrun --nproc_per_node=8 -m verl.trainer.fsdp_sft_trainer "
                                               "model.partial_pretrain=google/gemma-2b data.micro_batch_size_per_gpu=2 "
                                               "data.train_batch_size=128 data.max_length=4096\n"))
    assert (s.n_gpus, s.micro_batch, s.grad_accum, s.seq_len, s.method) == (8, 2, 8, 4096, "full")


def test_a_verl_yaml_is_read_by_its_groups(tmp_path):
    s = load_config(_write(tmp_path, "ppo.yaml", "actor_rollout_ref:\n  model:\n    path: Qwen/Qwen3-8B\n"
                                                 "  actor:\n    ppo_micro_batch_size_per_gpu: 2\n    strategy: fsdp2\n"
                                                 "data:\n  max_prompt_length: 1024\n  max_response_length: 3072\n"
                                                 "trainer:\n  n_gpus_per_node: 4\n"))
    assert (s.framework, s.model, s.micro_batch, s.seq_len, s.n_gpus, s.fsdp) == \
        ("verl", "Qwen/Qwen3-8B", 2, 4096, 4, "full_shard")


def test_mlx_lm_cli_flags_with_dashes_and_a_quantised_checkpoint():
    s = load_config(str(CORPUS / "scripts" / "user_mlx_examples_pr1209_dpo_lora.sh"))
    assert (s.framework, s.method, s.quant_bits, s.micro_batch, s.seq_len, s.grad_ckpt, s.stage) == \
        ("mlx-lm", "qlora", 4, 1, 1024, True, "dpo")
    assert "config.mlx_unified" in [w.code for w in s.warnings]
    assert s.extras["unified_memory"] is True


def test_mlx_lm_yaml_keys_and_full_fine_tune_of_the_last_layers(tmp_path):
    s = load_config(str(CORPUS / "mlx" / "head_lora_config.yaml"))
    assert (s.lora_rank, s.lora_targets, s.micro_batch, s.seq_len, s.optimizer) == \
        (8, ("q_proj", "v_proj"), 4, 2048, "adamw")
    full = load_config(_write(tmp_path, "full.yaml", "model: mlx-community/Qwen3-4B-bf16\nfine_tune_type: full\n"
                                                     "num_layers: 8\nbatch_size: 2\ngrad_checkpoint: true\n"))
    assert (full.method, full.freeze_trainable_layers, full.micro_batch) == ("freeze", 8, 2)
    every = load_config(_write(tmp_path, "every.yaml", "model: m/x-bf16\nfine_tune_type: full\nnum_layers: -1\n"
                                                       "adapter_path: a\n"))
    assert every.method == "full"


def test_a_verl_model_only_the_running_script_knows_takes_the_users_model(tmp_path):
    path = _write(tmp_path, "run.sh", "MODEL_PATH=$1\npython3 -m verl.trainer.main_ppo "
                                      "actor_rollout_ref.model.path=$MODEL_PATH actor_rollout_ref.rollout.n=4\n")
    alone = load_config(path)
    assert (alone.model, alone.model_unresolved) == ("", "$MODEL_PATH")
    given = load_config(path, model="Qwen/Qwen3-8B")
    assert (given.model, given.model_unresolved) == ("Qwen/Qwen3-8B", None)


def test_verls_megatron_config_by_name_is_its_own_not_a_missing_file(tmp_path):
    s = load_config(_write(tmp_path, "m.sh", "python3 -m verl.trainer.main_ppo --config-path=config "
                                             "--config-name='ppo_megatron_trainer.yaml' "
                                             "actor_rollout_ref.model.path=Qwen/Qwen2-7B-Instruct\n"))
    codes = [w.code for w in s.warnings]
    assert "config.verl_megatron" in codes and "config.verl_overrides_only" not in codes
    assert s.fsdp is None and s.extras["verl_strategy"] == "megatron"
