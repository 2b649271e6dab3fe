import os
from dataclasses import dataclass, field
from typing import Dict, Optional
import json
import torch
from accelerate import Accelerator
from datasets import Dataset, load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser, TrainingArguments, set_seed

from trl import DPOTrainer
os.environ["WANDB_DISABLED"]="true"
class ScriptArguments():
    beta = 0.1
    model_name_or_path= "/public/home/zhouxiabing/data/xinj/RL_Model/model"
    learning_rate= 1.4e-6
    lr_scheduler_type = "cosine"

    warmup_steps = 100 
    optimizer_type = "adamw_torch" 
    per_device_train_batch_size = 1
    per_device_eval_batch_size =  1 
    batch_size=1
    gradient_accumulation_steps = 4 

    lora_alpha = 16 
    lora_dropout=0.05
    lora_r = 64

    max_prompt_length=256
    max_length= 512
    max_steps=1000
    logging_steps=10
    save_steps= 100
    eval_steps= 100

    output_dir="./results"
    load_best_model_at_end=True
    save_total_limit=3

def get_dataset(
    data_dir:str
):
    
    dataset = load_dataset('json',data_files=data_dir, split="train")
    def map_data(samples):
        instruct="Given a piece of code, output the corresponding implementation idea.\n"
        return {
            "prompt":instruct + samples['text'],
            "chosen":samples
