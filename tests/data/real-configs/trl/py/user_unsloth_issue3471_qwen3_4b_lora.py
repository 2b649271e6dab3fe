import os

os.environ["UNSLOTH_VLLM_STANDY"] = "1"

from unsloth import FastLanguageModel
import torch

from datasets import load_dataset, Dataset
import pandas as pd
import numpy as np

from trl import SFTTrainer, SFTConfig

#import transformers


def main():
    max_seq_length = 2048
    lora_rank = 32

#    tokenizer = transformers.AutoTokenizer.from_pretrained("unsloth/Qwen3-4B-Base")

    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name = "unsloth/Qwen3-4B-Base",
        max_seq_length = max_seq_length,
        load_in_4bit = True,
        fast_inference = True,
        max_lora_rank = lora_rank,
        gpu_memory_utilization = 0.9
    )

    model = FastLanguageModel.get_peft_model(
        model,
        r = lora_rank, # Choose any number > 0 ! Suggested 8, 16, 32, 64, 128
        target_modules = [
            "q_proj", "k_proj", "v_proj", "o_proj",
            "gate_proj", "up_proj", "down_proj",
        ],
        lora_alpha = lora_rank*2, # *2 speeds up training
        use_gradient_checkpointing = "unsloth", # Reduces memory usage
        random_state = 3407,
    )

    reasoning_start = "<start_working_out>" # Acts as <think>
    reasoning_end   = "<end_working_out>"   # Acts as </think>
    solution_start  = "<SOLUTION>"
    solution_end    = "</SOLUTION>"
