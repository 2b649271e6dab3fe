# The reporter's run (unslothai/unsloth#4175, March 2026): unsloth's official 500K-context gpt-oss-20b notebook
# run unchanged on Colab with one A100 80GB. Its settings, as the notebook held them before the thread
# (unslothai/notebooks 34753cb, nb/gpt_oss_(20B)_500K_Context_Fine_tuning.ipynb).
from trl import SFTConfig, SFTTrainer
from unsloth import FastLanguageModel

max_seq_length = 500_000

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/gpt-oss-20b",
    dtype=None,
    max_seq_length=max_seq_length,
    load_in_4bit=True,
    full_finetuning=False,
    unsloth_tiled_mlp=True,
)
model = FastLanguageModel.get_peft_model(
    model,
    r=8,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    lora_alpha=16,
    lora_dropout=0,
    use_gradient_checkpointing="unsloth",
)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    train_dataset=dataset,  # noqa: F821  (the notebook's data)
    args=SFTConfig(
        per_device_train_batch_size=1,
        gradient_accumulation_steps=1,
        max_steps=1,
        learning_rate=2e-4,
        optim="adamw_8bit",
        output_dir="outputs",
    ),
)
trainer.train()
