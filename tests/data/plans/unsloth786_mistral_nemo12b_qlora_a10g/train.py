# The reporter's run as the thread states it (unslothai/unsloth#786, July 2024): the unsloth example notebook for
# Mistral-Nemo with the pre-quantised instruct model, batch size 1 and a maximum sequence of 2048 on one A10G.
# The LoRA settings are the example notebook's (unslothai/notebooks, nb/Mistral_Nemo_(12B)-Alpaca.ipynb).
from transformers import TrainingArguments
from trl import SFTTrainer
from unsloth import FastLanguageModel

max_seq_length = 2048

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/Mistral-Nemo-Instruct-2407-bnb-4bit",
    max_seq_length=max_seq_length,
    dtype=None,
    load_in_4bit=True,
)
model = FastLanguageModel.get_peft_model(
    model,
    r=16,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    lora_alpha=16,
    lora_dropout=0,
    use_gradient_checkpointing="unsloth",
)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    train_dataset=dataset,  # noqa: F821  (the reporter's data)
    dataset_text_field="text",
    max_seq_length=max_seq_length,
    packing=False,
    args=TrainingArguments(
        per_device_train_batch_size=1,
        gradient_accumulation_steps=4,
        learning_rate=2e-4,
        bf16=True,
        optim="adamw_8bit",
        output_dir="outputs",
    ),
)
trainer.train()
