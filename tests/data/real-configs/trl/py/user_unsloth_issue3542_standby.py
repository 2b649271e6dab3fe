import os
os.environ["UNSLOTH_VLLM_STANDBY"] = "1"
from unsloth import FastLanguageModel
import torch

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/Qwen3-4B-Thinking-2507",
    max_seq_length=2000,
    load_in_4bit=True,
    load_in_8bit=False,
    fast_inference=True,
    full_finetuning=False,
    gpu_memory_utilization=0.8,
)
