"""The training entry points oomdoctor knows, each with the flag table of its own argument parser.

A script's command line is read through the table of its entry point (read and patch alike); a script
oomdoctor does not know is read through HF TrainingArguments names and the conventions of
trainer_args.CONVENTIONS, each guess said in a note. Defaults are those of each project's own
dataclasses, read from its repository:
- Qwen finetune.py (QwenLM/Qwen, Qwen2 examples/sft): model_max_length 8192, LoRA only with --use_lora,
  lora_r 64, lora_alpha 16, --q_lora a 4-bit (GPTQ / bnb) base;
- MiniCPM-V finetune/finetune.py (OpenBMB/MiniCPM-V): Qwen's flag names, model_max_length 2048, lora_r 64,
  lora_alpha 64, told apart by --llm_type / --max_slice_nums / --tune_vision / --tune_llm;
- InternLM-XComposer finetune.py (InternLM/InternLM-XComposer): --max_length 8192, LoRA only with --use_lora,
  lora_r 64, lora_alpha 64, told apart by --hd_num / --fix_vit / --fix_sampler / --given_num;
- FastChat (lm-sys/FastChat fastchat/train): model_max_length 512; train_lora.py lora_r 8, lora_alpha 16,
  --q_lora bnb NF4, --flash_attn its own bool; train_mem.py patches in FlashAttention;
- Chinese-LLaMA-Alpaca(-2) run_clm_*_with_peft.py: LoRA unless --full_finetuning, lora_rank 8,
  lora_alpha 32, max_seq_length 1024 (block_size for pretraining), --load_in_kbits 4/8 quantises;
- DeepSpeed-Chat training/step*/main.py (deepspeedai/DeepSpeedExamples, argparse): max_seq_len 512, per-device
  batch 16, --dtype fp16 (or bf16), --zero_stage 0, --offload (optimizer, and parameters at stage 3, to CPU);
  --lora_dim adds LoRA layers but every weight still trains unless --only_optimize_lora;
- MedicalGPT (shibing624/MedicalGPT training/*.py, HfArgumentParser): LoRA unless --use_peft False, lora_rank 8;
  supervised_finetuning.py model_max_length 512; pretraining.py block_size 1024 with packing on;
  dpo_training.py / orpo_training.py a pair as long as max_source_length 2048 + max_target_length 512;
- ChatGLM(2/3)-6B ptuning/main.py (THUDM): a sample is max_source_length 1024 + max_target_length 128 long;
  --pre_seq_len is P-tuning v2 (frozen base, half precision), else a full fine-tune; --quantization_bit
  quantises the base (ChatGLM's own kernels); gradient checkpointing always on;
- ChatGLM3 finetune_demo/finetune_hf.py, GLM-4 finetune/finetune.py (THUDM, typer): `DATA_DIR MODEL_DIR CONFIG`,
  the YAML read by configs/chatglm.py, the model the second positional word;
- HF examples run_clm*.py: --block_size, None = min(1024, the tokenizer's maximum);
- Chinese-Vicuna finetune.py (Facico/Chinese-Vicuna, argparse): Alpaca-LoRA's constants written in the script
  (MICRO_BATCH_SIZE 4, BATCH_SIZE 128, CUTOFF_LEN 256, LORA_R 8, the base in 8-bit); only paths and --test_size are flags;
  its finetune_chat.py: --micro_batch / --total_batch are flags, CUTOFF_LEN 2048 and LoRA on all seven projections;
- Alpaca-LoRA finetune.py (tloen/alpaca-lora, fire flags): the base always loads in 8-bit under LoRA
  (load_in_8bit=True, prepare_model_for_int8_training: checkpointing on), fp16, cutoff_len 256, lora_r 8,
  --batch_size is the total batch: accumulation = batch_size // micro_batch_size // world size;
- ms-swift `swift sft`: train_type (sft_type in 2.x) lora, lora_rank 8, lora_alpha 32, max_length 2048,
  per-device batch 1, accumulation 16 / (batch × processes) unless given, gradient checkpointing on, --quant_bits (--quantization_bit in 2.x), --packing; without
  --bf16/--fp16 it autocasts in the load dtype (bf16 for bfloat16, else fp16; model_args _init_mixed_precision);
  `swift rlhf --rlhf_type dpo|kto|orpo|cpo|simpo|rm|ppo` is that stage (grpo, gkd: one sequence per sample);
  --tuner_backend peft|unsloth (swift/arguments/base_args/base_args.py) loads and wraps the model with unsloth;
  --use_galore (swift/trainers/arguments.py) trains with GaLore's low-rank optimizer states;
  --use_dora (swift/arguments/tuner_args.py, default False) makes the LoRA adapters DoRA;
- OpenRLHF `openrlhf.cli.train_{sft,dpo,rm,kto,ppo,ppo_ray}` (OpenRLHF/OpenRLHF openrlhf/cli/*.py, argparse, run as
  `deepspeed --module`): flat options up to 2026-04 (--pretrain, --micro_train_batch_size, --train_batch_size the
  global batch, --max_len 2048, --zero_stage 2, --bf16 else fp32, --adam_offload the optimizer only,
  --gradient_checkpointing off, --lora_rank 0 = full, --load_in_4bit, --packing_samples, --ring_attn_size), then
  the same in dotted groups (--model.model_name_or_path, --train.micro_batch_size, --data.max_len, --ds.zero_stage,
  --ds.param_dtype bf16 by default, --ds.lora.rank, --model.gradient_checkpointing_enable); PPO's sample is
  --prompt_max_len + --generate_max_len;
- LLaMA-Factory, TRL (`trl sft`, alignment-handbook, open-r1), axolotl, torchtune: their own readers.
"""
from __future__ import annotations

from oomdoctor.configs.trainer_args import Entry
from oomdoctor.facts import msg

_QWEN = {"model_max_length": "seq", "use_lora": "use_lora", "q_lora": "q_lora", "lora_r": "rank",
         "lora_alpha": "alpha", "lora_target_modules": "targets"}
_FASTCHAT = {"model_max_length": "seq", "lora_r": "rank", "lora_alpha": "alpha", "q_lora": "q_lora",
             "flash_attn": "flash", "lora_target_modules": "targets"}
_CLA = {"max_seq_length": "seq", "block_size": "seq", "lora_rank": "rank", "lora_alpha": "alpha",
        "trainable": "targets", "load_in_kbits": "bits", "load_in_8bit": "load8", "full_finetuning": "full",
        "torch_dtype": "dtype", "use_flash_attention_2": "flash"}
_SWIFT = {"model_type": "model", "max_length": "seq", "train_type": "train_type", "sft_type": "train_type", "tuner_type": "train_type",
          "lora_rank": "rank", "lora_alpha": "alpha", "quant_bits": "bits", "quantization_bit": "bits",
          "torch_dtype": "dtype", "dtype": "dtype", "target_modules": "targets", "lora_target_modules": "targets",
          "attn_impl": "attn", "use_flash_attn": "flash", "batch_size": "micro", "packing": "packing",
          "rlhf_type": "stage", "sequence_parallel_size": "sp", "tuner_backend": "backend", "use_galore": "galore",
          "use_dora": "dora"}
# ms-swift's Megatron-SWIFT (`megatron sft|pt|rlhf`, swift/megatron/arguments/megatron_args.py MegatronArguments):
# the same model/LoRA/length flags as `swift sft`, Megatron's own batch and parallelism names.
_SWIFT_MEGATRON = {**{k: v for k, v in _SWIFT.items() if k not in ("batch_size", "sequence_parallel_size")},
                   # the converted Megatron weights (swift export --to_mcore): --mcore_model, --load in earlier releases
                   "mcore_model": "model", "load": "model", "model_name": "self_cognition_name",
                   "micro_batch_size": "micro", "global_batch_size": "total",
                   "tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp",
                   "virtual_pipeline_model_parallel_size": "vpp", "expert_model_parallel_size": "ep",
                   "context_parallel_size": "cp", "sequence_parallel": "megatron_sp",
                   "use_distributed_optimizer": "dist_opt", "recompute_granularity": "recompute",
                   "recompute_method": "recompute_method", "recompute_num_layers": "recompute_layers"}
_MEGATRON_BRIDGE = {"checkpoint.pretrained_checkpoint": "model", "model.seq_length": "seq", "dataset.seq_length": "seq",
                    "seq_length": "seq", "train.micro_batch_size": "micro", "micro_batch_size": "micro",
                    "train.global_batch_size": "total", "global_batch_size": "total",
                    "model.tensor_model_parallel_size": "tp", "tensor_model_parallel_size": "tp",
                    "model.pipeline_model_parallel_size": "pp", "pipeline_model_parallel_size": "pp",
                    "model.context_parallel_size": "cp", "context_parallel_size": "cp",
                    "model.expert_model_parallel_size": "ep", "expert_model_parallel_size": "ep",
                    "model.sequence_parallel": "megatron_sp", "model.recompute_granularity": "recompute",
                    "ddp.use_distributed_optimizer": "dist_opt", "mode": "bridge_mode", "recipe": "bridge_mode"}
_ALPACA_LORA = {"cutoff_len": "seq", "lora_r": "rank", "lora_alpha": "alpha", "lora_target_modules": "targets",
                "micro_batch_size": "micro", "batch_size": "total"}
_DSCHAT = {"max_seq_len": "seq", "lora_dim": "rank", "only_optimize_lora": "use_lora", "zero_stage": "zero",
           "offload": "offload", "dtype": "precision"}
_MEDICALGPT = {"model_max_length": "seq", "use_peft": "use_lora", "qlora": "q_lora", "lora_rank": "rank",
               "lora_alpha": "alpha", "target_modules": "targets", "load_in_4bit": "load4", "load_in_8bit": "load8",
               "torch_dtype": "dtype", "flash_attn": "flash"}
_CHATGLM = {"max_source_length": "prompt", "max_target_length": "answer", "quantization_bit": "bits",
            "pre_seq_len": "prefix"}
_OPENRLHF_FLAT = {"pretrain": "model", "max_len": "seq", "micro_train_batch_size": "micro", "train_batch_size": "total",
                  "zero_stage": "zero", "bf16": "bf16", "adam_offload": "adam_offload", "lora_rank": "rank",
                  "lora_alpha": "alpha", "target_modules": "targets", "load_in_4bit": "load4",
                  "packing_samples": "packing", "flash_attn": "flash", "attn_implementation": "attn",
                  "gradient_checkpointing": "ckpt", "ring_attn_size": "sp", "prompt_max_len": "prompt",
                  "generate_max_len": "answer", "use_liger_kernel": "liger"}
# The dotted groups of OpenRLHF from 2026-04 (cli: "dotted config hierarchy"): the same options, renamed.
_OPENRLHF = {**_OPENRLHF_FLAT, "model.model_name_or_path": "model", "data.max_len": "seq",
             "train.micro_batch_size": "micro", "train.batch_size": "total", "ds.zero_stage": "zero",
             "ds.param_dtype": "precision", "ds.adam_offload": "adam_offload", "ds.lora.rank": "rank",
             "ds.lora.alpha": "alpha", "ds.lora.target_modules": "targets", "ds.load_in_4bit": "load4",
             "ds.packing_samples": "packing", "ds.attn_implementation": "attn",
             "model.gradient_checkpointing_enable": "ckpt", "ds.ring_attn_size": "sp",
             "data.prompt_max_len": "prompt", "rollout.generate_max_len": "answer", "ds.use_liger_kernel": "liger"}
_OPENRLHF_DEFAULTS = (("method", "full"), ("seq_len", 2048), ("micro_batch", 8), ("total_batch", 128),
                      ("zero_stage", 2), ("attention", "fa2"))


# train_ppo_ray's dotted groups name the trained policy `actor` and place it on Ray workers itself:
# --actor.num_nodes × --actor.num_gpus_per_node GPUs (1 × 8 by default; openrlhf/cli/train_ppo_ray.py).
_OPENRLHF_PPO_RAY = {**_OPENRLHF, "actor.model_name_or_path": "model", "actor.gradient_checkpointing_enable": "ckpt",
                     "actor.num_gpus_per_node": "gpus", "actor.num_nodes": "nodes",
                     "actor_num_gpus_per_node": "gpus", "actor_num_nodes": "nodes"}


# Where OpenRLHF kept its entry points: examples/train_*.py until 2024-07-15 (commit c23b8750 "use entrypoints"
# moved them), openrlhf/entrypoints/ after, openrlhf/cli/ since. A script path is taken for OpenRLHF's only with one
# of its own flags, since examples/train_sft.py is a common name.
_OPENRLHF_OWN = ("pretrain", "micro_train_batch_size", "model.model_name_or_path", "actor.model_name_or_path",
                 "train.micro_batch_size", "actor_num_gpus_per_node")


def _openrlhf(task: str, stage: str) -> Entry:
    ray = task == "train_ppo_ray"
    return Entry(f"openrlhf_{task}", f"OpenRLHF {task}", flags=_OPENRLHF_PPO_RAY if ray else _OPENRLHF,
                 modules=(f"openrlhf.cli.{task}", f"openrlhf.entrypoints.{task}"),
                 scripts=(f"openrlhf/cli/{task}.py", f"openrlhf/entrypoints/{task}.py", f"examples/{task}.py"),
                 needs_flags=_OPENRLHF_OWN, rank_implies_lora=True, framework="openrlhf",
                 defaults=_OPENRLHF_DEFAULTS + (("stage", stage),) + ((("gpus_per_node", 8),) if ray else ()),
                 dotted_defaults=(("precision", "bf16"),), seq_flag="max_len", trainer_fields=("grad_ckpt",))


_LLAMA_RECIPES = {"model_name": "model", "batch_size_training": "micro", "use_peft": "use_lora"}
_AUTOTRAIN = {"model": "model", "train_batch_size": "micro", "use_peft": "use_lora", "lora_r": "rank",
              "lora_alpha": "alpha", "use_int4": "load4", "use_int8": "load8", "block_size": "seq",
              "target_modules": "targets"}
_HF_EXAMPLES = {"block_size": "seq", "max_seq_length": "seq", "torch_dtype": "dtype"}
# lit-gpt finetune/lora.py (Lightning-AI/lit-gpt at 064fd52, 2023-08): jsonargparse over setup(checkpoint_dir,
# precision, quantize, ...); batch_size 128, micro_batch_size 4, lora_r 8, lora_alpha 16 are module constants,
# the precision defaults to bf16-mixed where the card has bf16 (lit_gpt/utils.py get_default_supported_precision)
# and each sample is as long as the data's longest (no flag).
_LITGPT = {"checkpoint_dir": "model", "precision": "lightning_precision", "quantize": "bits",
           # the module constants it prints (lit-gpt finetune/lora.py `hparams`, fabric.print(hparams)): the batch
           # per device, its micro-batch, the length cap and the LoRA shape
           "micro_batch_size": "micro", "batch_size": "total", "override_max_seq_length": "seq", "lora_r": "rank",
           "lora_alpha": "alpha"}

_FSDP_QLORA = {"model_name": "model", "context_length": "seq", "train_type": "train_type", "batch_size": "micro",
               "lora_rank": "rank", "lora_alpha": "alpha", "precision": "fsdp_qlora_precision",
               "use_gradient_checkpointing": "ckpt", "sharding_strategy": "fsdp", "use_cpu_offload": "cpu_offload",
               "n_bits": "bits", "world_size": "gpus"}     # it spawns --world_size processes itself (-1: every GPU)
_TRL_SFT_TRAINER_2023 = {"model_name": "model", "batch_size": "micro", "peft_lora_r": "rank", "peft_lora_alpha": "alpha",
                         "use_peft": "use_lora", "load_in_4bit": "load4", "load_in_8bit": "load8"}
_UNSLOTH_CLI = {"model_name": "model", "max_seq_length": "seq", "load_in_4bit": "load4", "r": "rank",
                "lora_alpha": "alpha", "use_gradient_checkpointing": "ckpt", "packing": "packing", "dtype": "dtype"}

ENTRIES: tuple[Entry, ...] = (
    Entry("llamafactory", "llamafactory-cli train", reader="llamafactory",
          # sft / dpo / rm: the v1 launcher's training commands (src/llamafactory/v1/launcher.py)
          commands=(("llamafactory-cli", "train"), ("lmf", "train"), ("llamafactory-cli", "sft"),
                    ("llamafactory-cli", "dpo"), ("llamafactory-cli", "rm")), modules=("llamafactory.cli",),
          config_positional=True, overrides=True),
    Entry("llamafactory_bash", "LLaMA-Factory src/train_bash.py", reader="llamafactory",
          scripts=("train_bash.py",), modules=("llmtuner",), config_positional=True,
          version_hint=("0.7.1", "train_bash.py")),
    Entry("llamafactory_train", "LLaMA-Factory src/train.py", reader="llamafactory", scripts=("src/train.py", "train.py"),
          needs_flags=("stage", "finetuning_type", "template"), config_positional=True),
    # MiniCPM-V finetune/finetune.py (OpenBMB/MiniCPM-V@0dbb566 finetune.py:41-67): the same flag names as Qwen's
    # finetune.py, its own defaults: model_max_length 2048, LoRA only with --use_lora, lora_r 64, lora_alpha 64;
    # --q_lora only prepares the model for k-bit training (no quantisation of its own), so it is not read as QLoRA.
    # Told apart by the flags no other finetune.py takes.
    Entry("minicpm_v", "MiniCPM-V finetune.py", scripts=("finetune.py",),
          flags={k: v for k, v in _QWEN.items() if k != "q_lora"},
          needs_flags=("llm_type", "max_slice_nums", "tune_vision", "tune_llm"),
          defaults=(("method", "full"), ("seq_len", 2048), ("lora_rank", 64), ("lora_alpha", 64)),
          seq_flag="model_max_length"),
    # InternLM-XComposer finetune.py (InternLM/InternLM-XComposer@0f70c3e finetune/finetune.py:24-74, the same in
    # InternLM-XComposer-2.5-Reward/training and InternLM-XComposer-2.0/finetune): --use_lora and LoraArguments
    # lora_r 64, lora_alpha 64, the length --max_length (8192; 4096 in 2.0's copy). Told apart by the flags of its
    # own DataArguments / TrainingArguments no other finetune.py takes.
    Entry("internlm_xcomposer", "InternLM-XComposer finetune.py", scripts=("finetune.py",),
          flags={"max_length": "seq", "use_lora": "use_lora", "lora_r": "rank", "lora_alpha": "alpha",
                 "lora_target_modules": "targets"},
          needs_flags=("hd_num", "fix_vit", "fix_sampler", "given_num"),
          defaults=(("method", "full"), ("seq_len", 8192), ("lora_rank", 64), ("lora_alpha", 64)),
          seq_flag="max_length"),
    Entry("qwen", "Qwen finetune.py", scripts=("finetune.py",), flags=_QWEN,
          needs_flags=("use_lora", "q_lora", "model_max_length", "lazy_preprocess"),
          defaults=(("method", "full"), ("seq_len", 8192), ("lora_rank", 64), ("lora_alpha", 16), ("quant_bits", 4)),
          seq_flag="model_max_length"),
    Entry("fastchat_lora", "FastChat train_lora.py", scripts=("train_lora.py", "train_lora_t5.py"),
          modules=("fastchat.train.train_lora",), flags=_FASTCHAT,
          defaults=(("method", "lora"), ("seq_len", 512), ("lora_rank", 8), ("lora_alpha", 16), ("quant_bits", 4)),
          seq_flag="model_max_length"),
    Entry("fastchat_mem", "FastChat train_mem.py", scripts=("train_mem.py",), modules=("fastchat.train.train_mem",),
          flags=_FASTCHAT, defaults=(("method", "full"), ("seq_len", 512)), attention="fa2",
          seq_flag="model_max_length"),
    Entry("fastchat", "FastChat train.py", scripts=("fastchat/train/train.py", "train_xformers.py",
                                                     "fastchat/train/train_with_template.py"),
          modules=("fastchat.train.train", "fastchat.train.train_xformers"), flags=_FASTCHAT,
          defaults=(("method", "full"), ("seq_len", 512)), seq_flag="model_max_length"),
    Entry("chinese_llama_alpaca", "Chinese-LLaMA-Alpaca run_clm_sft_with_peft.py",
          scripts=("run_clm_sft_with_peft.py", "run_clm_pt_with_peft.py"), flags=_CLA,
          defaults=(("method", "lora"), ("seq_len", 1024), ("lora_rank", 8), ("lora_alpha", 32)),
          seq_flag="max_seq_length"),
    # Chinese-Vicuna finetune.py (Facico/Chinese-Vicuna, argparse): only paths and --test_size are flags; MICRO_BATCH_SIZE 4,
    # BATCH_SIZE 128, CUTOFF_LEN 256 (padded to it), LORA_R 8 / alpha 16 and the 8-bit base are module constants
    Entry("chinese_vicuna", "Chinese-Vicuna finetune.py", scripts=("finetune.py",), flags={"model_path": "model"},
          needs_flags=("test_size", "model_path", "output_path", "lora_remote_checkpoint", "ignore_data_skip"),
          defaults=(("method", "qlora"), ("quant_bits", 8), ("seq_len", 256), ("lora_rank", 8), ("lora_alpha", 16),
                    ("micro_batch", 4), ("total_batch", 128), ("precision", "fp16"), ("grad_ckpt", True)),
          trainer_fields=()),     # no TrainingArguments flag: its batch and accumulation are the script's constants
    # Chinese-Vicuna finetune_chat.py (Facico/Chinese-Vicuna, argparse): --micro_batch 4 and --total_batch 128 are
    # flags; CUTOFF_LEN 2048, LORA_R 8 / alpha 16 on all seven projections and the 8-bit base (prepared by peft's
    # prepare_model_for_int8_training, which turns gradient checkpointing on) are module constants; fp16
    Entry("chinese_vicuna_chat", "Chinese-Vicuna finetune_chat.py", scripts=("finetune_chat.py",),
          flags={"model_path": "model", "micro_batch": "micro", "total_batch": "total"},
          needs_flags=("prompt_type", "micro_batch", "total_batch", "model_path", "lora_remote_checkpoint"),
          defaults=(("method", "qlora"), ("quant_bits", 8), ("seq_len", 2048), ("lora_rank", 8), ("lora_alpha", 16),
                    ("lora_targets", ("q_proj", "v_proj", "k_proj", "o_proj", "down_proj", "gate_proj", "up_proj")),
                    ("micro_batch", 4), ("total_batch", 128), ("precision", "fp16"), ("grad_ckpt", True)),
          trainer_fields=()),     # its argparse takes no TrainingArguments field under that field's name
    Entry("alpaca_lora", "Alpaca-LoRA finetune.py", scripts=("finetune.py",), flags=_ALPACA_LORA,
          needs_flags=("base_model", "micro_batch_size", "cutoff_len", "lora_r"),
          defaults=(("method", "qlora"), ("quant_bits", 8), ("seq_len", 256), ("lora_rank", 8), ("lora_alpha", 16),
                    ("micro_batch", 4), ("total_batch", 128), ("precision", "fp16"), ("grad_ckpt", True)),
          seq_flag="cutoff_len"),
    Entry("deepspeed_chat", "DeepSpeed-Chat main.py", scripts=("main.py",), flags=_DSCHAT,
          needs_flags=("zero_stage", "lora_dim", "only_optimize_lora", "data_split", "max_seq_len"),
          defaults=(("method", "full"), ("seq_len", 512), ("micro_batch", 16), ("precision", "fp16")),
          seq_flag="max_seq_len", trainer_fields=("micro_batch", "grad_accum", "eval_batch")),
    Entry("medicalgpt_sft", "MedicalGPT supervised_finetuning.py", scripts=("supervised_finetuning.py",),
          flags=_MEDICALGPT, needs_flags=("train_file_dir", "validation_file_dir"),
          defaults=(("method", "lora"), ("seq_len", 512), ("lora_rank", 8), ("lora_alpha", 32)),
          seq_flag="model_max_length"),
    Entry("medicalgpt_pt", "MedicalGPT pretraining.py", scripts=("pretraining.py",),
          flags={**_MEDICALGPT, "block_size": "seq", "packing": "packing"}, needs_flags=("train_file_dir", "validation_file_dir"),
          defaults=(("method", "lora"), ("seq_len", 1024), ("lora_rank", 8), ("lora_alpha", 32), ("packing", True),
                    ("stage", "pt")),
          seq_flag="block_size"),
    Entry("medicalgpt_pref", "MedicalGPT dpo_training.py", scripts=("dpo_training.py", "orpo_training.py"),
          flags={**_MEDICALGPT, "max_source_length": "prompt", "max_target_length": "answer"},
          needs_flags=("train_file_dir", "validation_file_dir"),
          defaults=(("method", "lora"), ("prompt_len", 2048), ("answer_len", 512), ("lora_rank", 8), ("lora_alpha", 16),
                    ("stage", "dpo"))),
    # MedicalGPT training/reward_modeling.py (shibing624/MedicalGPT@2f1008c:107-148): a pair of max_source_length 2048
    # + max_target_length 512 tokens, LoRA (use_peft True) r 8 / alpha 32, a reward model
    Entry("medicalgpt_rm", "MedicalGPT reward_modeling.py", scripts=("reward_modeling.py",),
          flags={**_MEDICALGPT, "max_source_length": "prompt", "max_target_length": "answer"},
          needs_flags=("train_file_dir", "validation_file_dir"),
          defaults=(("method", "lora"), ("prompt_len", 2048), ("answer_len", 512), ("lora_rank", 8), ("lora_alpha", 32),
                    ("stage", "rm"))),
    Entry("chatglm_ptuning", "ChatGLM ptuning/main.py", scripts=("main.py",), flags=_CHATGLM,
          needs_flags=("prompt_column", "response_column", "pre_seq_len", "max_source_length"),
          defaults=(("method", "full"), ("prompt_len", 1024), ("answer_len", 128), ("grad_ckpt", True))),
    Entry("chatglm_finetune", "ChatGLM3 finetune_hf.py / GLM-4 finetune.py", reader="chatglm",
          scripts=("finetune_hf.py", "finetune.py"), config_positional=True, model_positional=1,
          needs_flags=("config_file",)),       # typer arguments only: taken with its positional YAML
    Entry("litgpt_lora", "lit-gpt finetune/lora.py", scripts=("finetune/lora.py",), flags=_LITGPT,
          needs_flags=("checkpoint_dir",), framework="litgpt", prints_hparams=True,   # lit-gpt, renamed litgpt in 2024
          defaults=(("method", "lora"), ("lora_rank", 8), ("lora_alpha", 16), ("micro_batch", 4), ("total_batch", 128),
                    ("lightning_precision", ("bf16", "fp32"))),
          trainer_fields=()),     # no TrainingArguments flag: its batch and accumulation are the script's constants
    # Answer.AI fsdp_qlora train.py (AnswerDotAI/fsdp_qlora@05ed9f2 train.py:1185, fastcore call_parse): it wraps the
    # model in FSDP itself (sharding_strategy full_shard, use_cpu_offload True, use_gradient_checkpointing True),
    # train_type qlora, lora_rank 64 / alpha 16, context_length 512, batch_size 1 per GPU, precision bf16
    Entry("fsdp_qlora", "fsdp_qlora train.py", scripts=("train.py",), flags=_FSDP_QLORA,
          needs_flags=("context_length", "use_cpu_offload", "low_memory", "sharding_strategy", "reentrant_checkpointing",
                       "apply_gradient_clipping", "llama_pro_path", "use_activation_cpu_offload"),
          defaults=(("method", "qlora"), ("quant_bits", 4), ("lora_rank", 64), ("lora_alpha", 16), ("seq_len", 512),
                    ("micro_batch", 1), ("grad_ckpt", True), ("fsdp", "full_shard"), ("offload_params", True),
                    ("offload_optimizer", True), ("fsdp_qlora_precision", ("bf16", "bf16"))),
          seq_flag="context_length", trainer_fields=("grad_accum",)),
    # unsloth's unsloth-cli.py (unslothai/unsloth@015bdef0, argparse): get_peft_model always (r 16, alpha 16,
    # use_gradient_checkpointing "unsloth"), --load_in_4bit off unless given, max_seq_length 2048, per-device batch 2,
    # accumulation 4, optim adamw_8bit, bf16 where the card has it (_build_sft_config)
    Entry("unsloth_cli", "unsloth-cli.py", scripts=("unsloth-cli.py",), flags=_UNSLOTH_CLI,
          defaults=(("method", "lora"), ("lora_rank", 16), ("lora_alpha", 16), ("seq_len", 2048), ("micro_batch", 2),
                    ("grad_accum", 4), ("grad_ckpt", True), ("optimizer", "adamw_8bit"), ("precision", "bf16")),
          seq_flag="max_seq_length", trainer_fields=("micro_batch", "grad_accum", "eval_batch", "optimizer")),
    Entry("hf_examples", msg("config.entry.hf_examples"),
          scripts=("run_clm.py", "run_clm_no_trainer.py", "run_mlm.py", "run_plm.py", "run_fim.py"),
          flags=_HF_EXAMPLES, defaults=(("method", "full"), ("seq_len", 1024)), seq_flag="block_size"),
    Entry("firefly", "Firefly train.py", reader="firefly", scripts=("train.py", "train_qlora.py"),
          needs_flags=("train_args_file",), config_flag="train_args_file",
          flags={"max_seq_length": "seq", "train_mode": "train_type", "lora_rank": "rank", "lora_alpha": "alpha"},
          defaults=(("method", "qlora"), ("lora_rank", 64), ("lora_alpha", 16), ("quant_bits", 4), ("seq_len", 1024)),
          seq_flag="max_seq_length"),
    # TRL's examples/scripts/sft_trainer.py before TrlParser (huggingface/trl@d0fe348a, 2023-07; sft.py from 0.7.x): its
    # own ScriptArguments (model_name, batch_size 64, gradient_accumulation_steps 16, load_in_8bit / load_in_4bit,
    # use_peft, peft_lora_r 64, peft_lora_alpha 16); the TrainingArguments it builds set no precision (fp32), and its
    # seq_length is never handed to SFTTrainer, whose max_seq_length is then min(the tokenizer's maximum, 1024)
    Entry("trl_sft_trainer_2023", "TRL examples/scripts/sft_trainer.py (2023)",
          scripts=("examples/scripts/sft_trainer.py",), flags=_TRL_SFT_TRAINER_2023, framework="trl",
          needs_flags=("model_name", "batch_size", "peft_lora_r", "peft_lora_alpha", "seq_length", "use_peft",
                       "load_in_4bit", "load_in_8bit"),
          defaults=(("method", "full"), ("lora_rank", 64), ("lora_alpha", 16), ("seq_len", 1024), ("micro_batch", 64),
                    ("grad_accum", 16), ("precision", "fp32")),
          trainer_fields=("grad_accum",)),
    # `trl <name>` runs trl/scripts/<name>.py (trl/cli/commands/training.py); every script there and in TRL's
    # examples/scripts/ parses with TrlParser(ScriptArguments, <Trainer>Config, ModelConfig).
    Entry("trl", msg("config.entry.trl"), trl=True,
          commands=(("trl", "sft"), ("trl", "dpo"), ("trl", "kto"), ("trl", "grpo"), ("trl", "reward"), ("trl", "rloo")),
          modules=("trl.scripts.sft", "trl.scripts.dpo", "trl.scripts.kto", "trl.scripts.reward", "trl.scripts.grpo",
                   "trl.scripts.rloo", "trl.commands.cli"), config_flag="config",
          scripts=("examples/scripts/sft.py", "examples/scripts/dpo.py", "trl/scripts/*.py")),
    # An examples/scripts/ file (or one in its subfolders: ppo/, openenv/) is TRL's when a flag only TrlParser's
    # dataclasses define is there: ScriptArguments (trl/scripts/utils.py: dataset_name, dataset_config,
    # dataset_streaming) or ModelConfig
    # (trl/trainer/model_config.py: use_peft, lora_task_type, use_rslora, use_bnb_nested_quant, model_revision), or
    # a field of SFTConfig no TrainingArguments has (trl/trainer/sft_config.py dataset_text_field).
    Entry("trl_examples", msg("config.entry.trl"), trl=True, scripts=("examples/scripts/**/*.py",),
          needs_flags=("dataset_name", "dataset_config", "dataset_streaming", "use_peft", "lora_task_type", "use_rslora",
                       "use_bnb_nested_quant", "model_revision", "dataset_text_field"), config_flag="config"),
    Entry("alignment_handbook", "alignment-handbook run_*.py", trl=True,
          scripts=("scripts/run_sft.py", "scripts/run_dpo.py", "scripts/run_orpo.py", "scripts/run_cpt.py", "run_sft.py",
                   "run_dpo.py"), config_positional=True),
    Entry("open_r1", "open-r1 sft.py", trl=True,
          scripts=("open_r1/sft.py", "open_r1/grpo.py"), modules=("open_r1.sft", "open_r1.grpo"), config_flag="config"),
    Entry("swift", "ms-swift swift sft", flags=_SWIFT, framework="ms-swift",
          commands=(("swift", "sft"), ("swift", "pt"), ("swift", "rlhf")),
          modules=("swift.cli.sft", "swift.cli.pt", "swift.cli.rlhf"),
          scripts=("swift/cli/sft.py", "swift/cli/pt.py", "swift/cli/rlhf.py", "llm_sft.py"),
          # gradient_accumulation_steps None = ceil(16 / per-device batch / world size): 16 sequences a step
          # (swift/trainers/arguments.py __post_init__; 2.x swift/llm/utils/argument.py the same with batch_size),
          # split as a total batch over the launcher's processes (which rounds down where b × world does not divide 16)
          # per_device_eval_batch_size 1, not TrainingArguments' 8 (swift/trainers/arguments.py:130 at 3602360a5;
          # 3.0 swift/llm/argument/train_args.py:32 at b40f31df7; 2.x eval_batch_size None = batch_size, default 1)
          defaults=(("method", "lora"), ("seq_len", 2048), ("lora_rank", 8), ("lora_alpha", 32), ("micro_batch", 1),
                    ("grad_ckpt", True), ("quant_bits", 4), ("total_batch", 16), ("eval_batch", 1)),
          seq_flag="max_length", precision_from_dtype=True,
          # ms-swift's own argument names (swift/arguments: tuner_type, rlhf_type; 3.x train_type; 2.x sft_type)
          own_flags=("rlhf_type", "train_type", "tuner_type", "sft_type", "tuner_backend")),
    # Megatron-SWIFT: MegatronArguments' defaults (swift/megatron/arguments/megatron_args.py at 3602360a:
    # tuner_type full, micro_batch_size 1, global_batch_size 16, recompute_granularity selective,
    # use_distributed_optimizer True; parallel sizes 1, sequence_parallel False), max_length as `swift sft`'s.
    Entry("swift_megatron", "megatron sft", flags=_SWIFT_MEGATRON, framework="ms-swift",
          commands=(("megatron", "sft"), ("megatron", "pt"), ("megatron", "rlhf"), ("swift", "megatron", "sft"),
                    ("swift", "megatron", "pt"), ("swift", "megatron", "rlhf")),
          # the scripts `megatron` runs under torchrun (swift/cli/_megatron/main.py ROUTE_MAPPING)
          scripts=("swift/cli/_megatron/sft.py", "swift/cli/_megatron/pt.py", "swift/cli/_megatron/rlhf.py"),
          modules=("swift.cli._megatron.sft", "swift.cli._megatron.pt", "swift.cli._megatron.rlhf"),
          defaults=(("method", "full"), ("seq_len", 2048), ("lora_rank", 8), ("lora_alpha", 32), ("micro_batch", 1),
                    ("total_batch", 16), ("megatron", True), ("distributed_optimizer", True),
                    ("recompute", "selective")),
          seq_flag="max_length", precision_from_dtype=True, trainer_fields=()),
    # Megatron-LM's own pretraining scripts (NVIDIA/Megatron-LM pretrain_gpt.py, pretrain_mamba.py at d98e8a64): the
    # same Megatron-Core arguments with dashes (megatron/training/arguments.py: --micro-batch-size, --global-batch-size,
    # --tensor-/--pipeline-/--expert-model-parallel-size, --use-distributed-optimizer and --sequence-parallel off,
    # no recompute, fp32 without --bf16/--fp16); the model is the shape its flags give, no hub name.
    # A trainer that extends that parser may name the architecture itself: AIAK's --model-name (LLaVA-OneVision-2
    # aiak_training_llm/train/arguments.py:94 at 2c3c25e, "the name of model to be trained"), the model over the
    # checkpoint folder --load reads.
    Entry("megatron_lm", "Megatron-LM pretrain_gpt.py", flags={**_SWIFT_MEGATRON, "seq_length": "seq", "model_name": "model"},
          scripts=("pretrain_gpt.py", "pretrain_mamba.py", "pretrain_gpt_hybrid.py"),
          needs_flags=("micro_batch_size", "tensor_model_parallel_size", "pipeline_model_parallel_size", "num_layers"),
          # its validate_args turns --sequence-parallel off when the tensor-parallel size is 1
          defaults=(("method", "full"), ("micro_batch", 1), ("megatron", True), ("sp_needs_tp", True)),
          trainer_fields=("bf16", "fp16")),
    # NeMo Megatron-Bridge's recipe runner (NVIDIA-NeMo/Megatron-Bridge scripts/training/run_recipe.py at 067f987df):
    # `--recipe NAME` and trailing `section.key=value` ConfigContainer overrides, its convenience flags the same
    # fields (-mb train.micro_batch_size, -gb train.global_batch_size, -sl dataset.seq_length, -tp/-pp/-cp/-ep the
    # model's parallel sizes); the model is Megatron-Core's, the recipe's own defaults for what is not given. A
    # LoRA run's adapter is the bridge's LoRA (src/megatron/bridge/peft/lora.py:146-147: dim 32, alpha 32).
    Entry("megatron_bridge", "Megatron-Bridge run_recipe.py", scripts=("scripts/training/run_recipe.py",),
          overrides=True, flags=_MEGATRON_BRIDGE, trainer_fields=(),
          defaults=(("method", "full"), ("micro_batch", 1), ("megatron", True), ("sp_needs_tp", True),
                    ("lora_rank", 32), ("lora_alpha", 32))),
    _openrlhf("train_sft", "sft"), _openrlhf("train_dpo", "dpo"), _openrlhf("train_rm", "rm"),
    _openrlhf("train_kto", "kto"), _openrlhf("train_ppo", "ppo"), _openrlhf("train_ppo_ray", "ppo"),
    # verl (volcengine/verl): Hydra mains whose every option is a `key=value` override of verl's own config
    # (verl/trainer/config/*.yaml), or of `--config-path DIR --config-name NAME`; configs/verl.py reads them.
    Entry("verl_ppo", "verl main_ppo", reader="verl", framework="verl", overrides=True,
          modules=("verl.trainer.main_ppo",), scripts=("verl/trainer/main_ppo.py",)),
    # EasyR1 (hiyouga/EasyR1), verl's fork with its own schema: `python3 -m verl.trainer.main config=FILE k=v …`
    # (verl/trainer/main.py); configs/easyr1.py renames its keys to verl's.
    Entry("easyr1", "EasyR1 verl.trainer.main", reader="verl", framework="verl", overrides=True,
          modules=("verl.trainer.main",), scripts=()),
    Entry("verl_sft", "verl fsdp_sft_trainer", reader="verl", framework="verl", overrides=True,
          modules=("verl.trainer.fsdp_sft_trainer", "verl.trainer.sft_trainer"),
          scripts=("verl/trainer/fsdp_sft_trainer.py", "verl/trainer/sft_trainer.py")),
    # mlx-lm (ml-explore/mlx-lm mlx_lm/lora.py): `mlx_lm.lora` (console script), `mlx_lm lora`, `python -m mlx_lm.lora`,
    # argparse flags with dashes over an optional `--config` YAML of the same names; configs/mlx_lm.py reads both.
    # (`mlx_lm lora` is the subcommand form of mlx_lm/cli.py.)
    Entry("mlx_lm", "mlx_lm.lora", reader="mlx_lm", framework="mlx-lm", config_flag="config",
          commands=(("mlx_lm.lora",), ("mlx_lm", "lora")), modules=("mlx_lm.lora",),
          scripts=("mlx_lm/lora.py", "llms/mlx_lm/lora.py")),
    # mlx-examples lora/lora.py (ml-explore/mlx-examples, 2023-12 on), run from its folder as `python lora.py`:
    # mlx_lm.lora began as this script and kept its argparse flags (--train, --model, --batch-size 4, --lora-layers
    # 16, --iters); a common name, so the flag only these two define must be there.
    Entry("mlx_examples_lora", "mlx-examples lora.py", reader="mlx_lm", framework="mlx-lm",
          scripts=("lora/lora.py", "lora.py"), needs_flags=("lora-layers",)),
    Entry("axolotl", "axolotl train", reader="axolotl", commands=(("axolotl", "train"),),
          modules=("axolotl.cli.train",), config_positional=True),
    Entry("torchtune", "tune run", reader="torchtune", commands=(("tune", "run"),), config_flag="config",
          overrides=True),
    # autotrain-advanced `autotrain llm --train` (src/autotrain/cli/run_llm.py at 11b05f4, 2023-07): its own flags
    # over the HF Trainer (trainers/clm.py): --train_batch_size 2, --lora_r 16, --lora_alpha 32, --use_peft LoRA,
    # --use_int4/--use_int8 the quantised base, --block_size -1 = the tokenizer's length capped at 1024, --fp16.
    Entry("autotrain_llm", "autotrain llm", commands=(("autotrain", "llm"),), flags=_AUTOTRAIN,
          defaults=(("micro_batch", 2), ("lora_rank", 16), ("lora_alpha", 32), ("seq_len", 1024), ("grad_ckpt", False)),
          trainer_fields=("gradient_accumulation_steps", "fp16", "learning_rate", "num_train_epochs", "optimizer")),
    # The litgpt CLI (Lightning-AI/litgpt litgpt/__main__.py): `finetune_full`, `finetune_lora` and bare `finetune`
    # (finetune_lora_fn), written `finetune full|lora` before 0.4; jsonargparse flags over setup() (the names of the
    # config-hub YAML, `--train.micro_batch_size` dotted), `--config` a YAML, the model the first positional word.
    # llama-recipes (now llama-cookbook) finetuning.py: fire flags over train_config (meta-llama/llama-recipes
    # src/llama_recipes/configs/training.py): batch_size_training 4 per GPU, gradient_accumulation_steps 1, use_peft
    # False with peft_method lora, context_length 4096 only when batching_strategy packs; a common script name, so
    # one of its own flags must be there.
    Entry("llama_recipes", "llama-recipes finetuning.py", scripts=("finetuning.py", "llama_finetuning.py"),
          modules=("llama_recipes.finetuning", "llama_cookbook.finetuning"), flags=_LLAMA_RECIPES,
          needs_flags=("batch_size_training", "enable_fsdp", "peft_method", "batching_strategy",
                       "dist_checkpoint_root_folder"),
          defaults=(("method", "full"), ("micro_batch", 4), ("grad_accum", 1)),
          trainer_fields=("gradient_accumulation_steps",)),
    Entry("litgpt_cli_full", "litgpt finetune_full", reader="litgpt", config_flag="config", model_positional=0,
          commands=(("litgpt", "finetune_full"), ("litgpt", "finetune", "full")), defaults=(("method", "full"),)),
    Entry("litgpt_cli_lora", "litgpt finetune_lora", reader="litgpt", config_flag="config", model_positional=0,
          commands=(("litgpt", "finetune_lora"), ("litgpt", "finetune", "lora"), ("litgpt", "finetune")),
          defaults=(("method", "lora"),)),
)

# A script oomdoctor does not know: TrainingArguments names and the conventions, each guess a note.
GENERIC = Entry("script", msg("config.entry.script"), rank_implies_lora=True)

_BY_NAME = {e.name: e for e in ENTRIES + (GENERIC,)}


def by_name(name: str | None) -> Entry | None:
    return _BY_NAME.get(name or "")
