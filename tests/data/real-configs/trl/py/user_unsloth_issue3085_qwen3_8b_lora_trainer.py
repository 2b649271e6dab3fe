 model, tokenizer = FastLanguageModel.from_pretrained(model_id, dtype=torch.bfloat16, use_cache=False, max_seq_length=2048,
                                                             load_in_4bit=False, full_finetuning=False, load_in_8bit=False,
                                                             use_gradient_checkpointing=False)
 model = FastLanguageModel.get_peft_model(model, r=32, lora_alpha=16,
                                                 lora_dropout=0, bias="none",
                                                 random_state=seed,
                                                 use_gradient_checkpointing= False,
                                                 target_modules=line_modules,
                                                 use_dora=False, init_lora_weights=True)
