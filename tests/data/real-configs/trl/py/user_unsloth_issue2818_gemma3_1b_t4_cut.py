from unsloth import FastLanguageModel
import torch

model_id = "unsloth/gemma-3-1b-it"
# Load the model and tokenizer

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name=model_id,
    max_seq_length=2048,
    dtype=None,
    load_in_4bit=True,
)
arguments = TrainingArguments(  
                # resume_from_checkpoint="./abc",
                per_device_train_batch_size=2,  
                per_device_eval_batch_size=2,  
                gradient_accumulation_steps=1,  
                eval_strategy="steps",
                eval_steps=0.2,
                logging_steps=20,
                save_steps=20,
                warmup_steps=10,  
                # num_train_epochs=1, 
                max_steps=60,
                learning_rate=2e-4,  
                fp16=not is_bfloat16_supported(),  
                bf16=is_bfloat16_supported(),  
                optim="adamw_8bit",  
                weight_decay=0.01,
