"""Words of one run as a whole: what the pipeline needs and could not find, and what the session says."""
from __future__ import annotations

WORDS = {
    "run.no_inputs": ("give a crash log, a training config, or both (try: oomdoctor --demo)",
                      "请给出崩溃日志、训练配置，或两者都给（可以先试试：oomdoctor --demo）"),
    "run.log_only": ("no training config given and the log does not say which model was trained: only the crash "
                     "itself is diagnosed; pass the config for an estimate and a plan",
                     "没有给出训练配置，日志里也看不出训练的是哪个模型：只能诊断崩溃本身；请带上训练配置，才能估算显存并给出方案"),
    "run.no_gpu": ("cannot tell the GPU's memory: the log names no capacity and no GPU was detected; pass --gpu "
                   "(e.g. --gpu A100-80GB or --gpu 24GiB)",
                   "无法确定显存大小：日志里没有写容量，本机也没有检测到 GPU；请用 --gpu 指定（例如 --gpu A100-80GB 或 "
                   "--gpu 24GiB）"),
    "run.no_model": ("names no model (a launcher or DeepSpeed config?): give the training config beside it, or "
                     "--model NAME",
                     "没有写明模型（是启动器或 DeepSpeed 配置吗？）：请同时给出训练配置，或用 --model NAME 指定"),
    "run.incomplete": ("no memory estimate and no plan: the estimate needs the model's shape; give --model DIR (a "
                       "directory holding the model's config.json) or --model ID of a model in the Hugging Face cache",
                       "没有显存估算，也没有方案：估算需要模型结构；请用 --model DIR 指定含有该模型 config.json 的目录，"
                       "或用 --model ID 指定已在 Hugging Face 缓存中的模型"),
}
