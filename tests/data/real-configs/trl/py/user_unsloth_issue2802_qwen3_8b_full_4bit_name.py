qwen, tokenizer = FastLanguageModel.from_pretrained(
    model_name = "unsloth/Qwen3-8B-unsloth-bnb-4bit",
    max_seq_length = 8196,   # Context length - can be longer, but uses more memory
    load_in_4bit = True,     # 4bit uses much less memory
    load_in_8bit = False,    # A bit more accurate, uses 2x memory
    full_finetuning = True, # We have full finetuning now!
    # token = "hf_...",      # use one if using gated models
)

training_args = TrainingArguments(
    output_dir="./results",
    overwrite_output_dir=True,
    num_train_epochs=3,
    per_device_train_batch_size=1, // I had set this origially to 32, but reduced to see why I am OOMing
    gradient_accumulation_steps=1,
    save_steps=25,
    logging_steps=5,
    save_total_limit=2,
    prediction_loss_only=True,
    bf16=True,
    gradient_checkpointing=True,
    remove_unused_columns=False,
    learning_rate=2e-4,
    warmup_steps=25,
    weight_decay=0.01,
    optim = "adamw_8bit",
    report_to = "none"
)

trainer = Trainer(
    model=qwen,
    args=training_args,
    data_collator=data_collator,
    train_dataset=train,
    eval_dataset=val,
    callbacks=[ZeroLossAbortCallback()]
)
