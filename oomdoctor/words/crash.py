"""Words for what a crash log shows: kinds of failure, phases, diagnoses, and how the log was read."""
from __future__ import annotations

WORDS = {
    # kind
    "crash.kind.cuda_oom": ('CUDA ran out of GPU memory',
        'CUDA 显存不足'),
    "crash.kind.host_oom": ('the machine ran out of host RAM and the kernel killed the process',
        '主机内存耗尽，进程被内核杀掉'),
    "crash.kind.nccl_oom": ('NCCL could not allocate its communication buffers',
        'NCCL 无法分配通信缓冲区'),
    "crash.kind.cublas_alloc": ('cuBLAS could not allocate its workspace (the GPU was already full)',
        'cuBLAS 无法分配工作区（显存已满）'),
    "crash.kind.cudnn_alloc": ('cuDNN could not allocate its workspace (the GPU was already full)',
        'cuDNN 无法分配工作区（显存已满）'),
    "crash.kind.mps_oom": ('the Apple GPU (MPS) ran out of memory',
        'Apple GPU（MPS）内存不足'),
    "crash.kind.hip_oom": ('the AMD GPU (HIP) ran out of memory',
        'AMD GPU（HIP）显存不足'),
    "crash.kind.xla_oom": ('the XLA device ran out of memory',
        'XLA 设备内存不足'),
    "crash.kind.vllm_cache": ('vLLM could not fit its KV cache',
        'vLLM 放不下 KV 缓存'),
    "crash.kind.bnb_alloc": ('bitsandbytes could not allocate GPU memory',
        'bitsandbytes 无法分配显存'),
    "crash.kind.npu_oom": ('the Ascend NPU ran out of memory',
        '昇腾 NPU 内存不足'),
    "crash.kind.xpu_oom": ('the Intel GPU (XPU) ran out of memory',
        'Intel GPU（XPU）显存不足'),
    "crash.kind.tf_oom": ('TensorFlow ran out of device memory',
        'TensorFlow 设备内存不足'),
    "crash.kind.hpu_oom": ('the Gaudi HPU ran out of device memory',
        'Gaudi HPU 设备内存不足'),
    "crash.kind.mlx_oom": ('Metal (MLX) ran out of memory',
        'Metal（MLX）内存不足'),
    "crash.kind.batch_size_exhausted": ('the batch-size search found no batch size small enough to fit',
        '批大小搜索找不到能放得下的批大小'),
    # phase
    "crash.phase.load": ('while loading the model',
        '加载模型时'),
    "crash.phase.forward": ('in the forward pass',
        '前向传播时'),
    "crash.phase.loss": ('while computing the loss',
        '计算损失时'),
    "crash.phase.backward": ('in the backward pass',
        '反向传播时'),
    "crash.phase.optimizer": ('in the optimizer step',
        '优化器更新时'),
    "crash.phase.zero_init": ('while DeepSpeed ZeRO partitioned the model',
        'DeepSpeed ZeRO 切分模型时'),
    "crash.phase.eval": ('during evaluation',
        '评估时'),
    "crash.phase.save": ('while saving a checkpoint',
        '保存检查点时'),
    "crash.phase.generate": ('while generating',
        '生成时'),
    "crash.phase.data": ('while preparing the dataset',
        '处理数据集时'),
    "crash.phase.train": ('during a training step (which part, the log does not say)',
        '训练步中（日志没有说明是哪一部分）'),
    # diagnosis
    "crash.diagnosis.fragmentation": ('Fragmentation: PyTorch had reserved memory it could not use for this request. PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True usually gives it back.',
        '碎片：PyTorch 已预留但无法用于这次请求的显存。设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 通常能把它要回来。'),
    "crash.diagnosis.other_process": ("Other processes held memory on this GPU, so the run had less than the card's capacity.",
        '这张 GPU 上还有其他进程占用显存，训练能用的少于整卡容量。'),
    "crash.diagnosis.eval": ('It died in evaluation: the eval batch (and its logits) can be larger than the training one.',
        '在评估时崩溃：评估批次（及其 logits）可能比训练批次更大。'),
    "crash.diagnosis.save": ('It died while saving: gathering the full weights for the checkpoint needs room of its own.',
        '在保存时崩溃：为检查点收集完整权重需要额外的空间。'),
    "crash.diagnosis.long_samples": ('A long sample reached the GPU: the peak follows the longest sequence, not the average one.',
        '有一条很长的样本到了 GPU：峰值取决于最长的序列，而不是平均长度。'),
    "crash.diagnosis.host_ram": ("Host RAM ran out: offloading and data loading live in the machine's memory, not the GPU's.",
        '主机内存耗尽：offload 和数据加载用的是机器内存，不是显存。'),
    # a setup read from the log's own command line
    "crash.setup.from_log": ("the setup was read from the training arguments the log printed; no file of yours is patched",
        '训练设置取自日志里打印的训练参数；不会修改你的任何文件'),
    "crash.setup.no_gpu": ("the log's command line gives a setup, but neither the log nor this machine tells the GPU's "
                           "memory: only the crash itself is diagnosed; pass --gpu (e.g. --gpu A100-80GB) for an estimate",
        '日志里的命令行给出了训练设置，但日志和本机都看不出 GPU 的显存大小：只诊断崩溃本身；加上 --gpu（例如 --gpu A100-80GB）即可估算显存'),
    "crash.setup.unusable": ("the setup the log's command line gives cannot be used here ({reason}): only the crash itself "
                             "is diagnosed; pass the training config (or --model) for an estimate and a plan",
        '日志命令行给出的训练设置在这台机器上用不了（{reason}）：只诊断崩溃本身；给出训练配置（或 --model）才能估算显存并给出方案'),
    "crash.setup.path_missing": ("{path}, named by the log's {key}, is not on this machine: judged without it",
        '日志中 {key} 指向的 {path} 不在这台机器上：按没有它来判断'),
    # how the log was read
    "crash.note.repeats": ("the log repeats {marker!r} {count} times: only the first and the last {keep} were read",
        '日志里 {marker!r} 出现了 {count} 次：只读取了最前和最后各 {keep} 处'),
    "crash.note.big_log": ("a big log: {names} searched in every line; the other markers in the first {head}, the last "
                           "{tail} and {around} either side of {which}",
        '大日志：{names} 在每一行里都搜索了；其余标记只在开头 {head}、结尾 {tail} 以及{which}前后各 {around} 范围内搜索'),
    "crash.note.repeats_many": ("the log repeats {marker!r} more than {more} times: only the first and the last {keep} "
                                "were read (the rest were not counted)",
        '日志里 {marker!r} 出现了超过 {more} 次：只读取了最前和最后各 {keep} 处（其余没有计数）'),
    "crash.note.each_traceback": ("each traceback", '每个 traceback'),
    "crash.note.many_tracebacks": ("the first and the last {keep} of more than {total} tracebacks",
        '超过 {total} 个 traceback 中最前和最后各 {keep} 个'),
    "crash.note.some_tracebacks": ("the first and the last {keep} of {total} tracebacks",
        '{total} 个 traceback 中最前和最后各 {keep} 个'),
    # what to check outside the log
    "crash.check.host_kill": ("The log shows the process was killed, not why: the usual cause is the kernel's OOM killer "
                              "when host RAM runs out. Check `dmesg -T | grep -i -E 'killed process|out of memory'` "
                              "(or `journalctl -k`), and watch `free -g` while the run starts.",
        '日志只显示进程被杀掉了，没有说明原因：最常见的原因是主机内存耗尽后内核的 OOM killer 出手。'
        "用 `dmesg -T | grep -i -E 'killed process|out of memory'`（或 `journalctl -k`）确认，并在训练启动时用 `free -g` 观察内存。"),
    # how sure a verdict is
    "crash.confidence.certain": ("the log states it", '日志明确写出'),
    "crash.confidence.likely": ("likely: the log shows a kill, not its cause", '很可能：日志只显示进程被杀，没有写明原因'),
    # where a phase was read from
    "crash.evidence.frame": ("from a traceback line", '依据 traceback 中的一行'),
    "crash.evidence.progress": ("from what the run printed before the crash", '依据崩溃前打印的内容'),
    "crash.evidence.message": ("from the error message", '依据错误信息本身'),
    "crash.evidence.line": ("phase from line {line}: {text}", '阶段依据第 {line} 行：{text}'),
    # reading the log
    "crash.input.missing": ("no such file", '文件不存在'),
    "crash.input.directory": ("is a directory, not a log file", '这是一个目录，不是日志文件'),
    "crash.input.cannot_read": ("cannot read the log: {reason}", '无法读取日志：{reason}'),
    "crash.input.gzip_broken": ("cannot read the gzip log: {reason}", '无法读取 gzip 压缩的日志：{reason}'),
    "crash.input.empty": ("the log is empty", '日志是空的'),
    "crash.input.binary": ("is a binary file, not a text log", '这是二进制文件，不是文本日志'),
    "crash.input.stream_too_big": ("more than {cap} came through the pipe: oomdoctor keeps at most {cap} of a piped log "
                                   "in {folder}; save the log to a file and pass its path (a file of any size is read in place)",
        '管道里传来的内容超过了 {cap}：oomdoctor 最多在 {folder} 里暂存 {cap} 的管道日志；请把日志存成文件再传入路径（文件多大都可以直接读取）'),
    "crash.input.gzip_too_big": ("decompresses to more than {cap}: oomdoctor keeps at most {cap} of a compressed log in "
                                 "{folder}; decompress it and pass the file (a file of any size is read in place)",
        '解压后超过了 {cap}：oomdoctor 最多在 {folder} 里暂存 {cap} 的压缩日志；请先解压，再传入解压后的文件（文件多大都可以直接读取）'),
    "crash.input.copy_too_big": ("needs a converted copy (UTF-16/32 text, bare CR line ends or a sparse file) and "
                                 "holds more than {cap}: oomdoctor keeps at most {cap} of such a copy in {folder}; "
                                 "convert it to UTF-8 with LF line ends first",
        '需要先转换出一份副本（UTF-16/32 文本、只用 CR 换行或稀疏文件），但内容超过了 {cap}：oomdoctor 最多在 {folder} 里暂存 {cap}；'
        '请先把它转换成以 LF 换行的 UTF-8 文本'),
    "crash.input.config_stream": ("{path} came through a pipe, not from a file: the plan is shown, but there is no "
                                  "file to patch",
        '{path} 来自管道而不是文件：方案照常给出，但没有可以修改的文件'),
    # sorting the positional files
    "crash.input.sort_directory": ("is a directory, not a log or a training config", '这是一个目录，不是日志或训练配置'),
    "crash.input.sort_three_configs": ("a third config: {first} and {second} were already given (a training config and "
                                       "at most one launcher config)",
        '又多了一个配置：已经给了 {first} 和 {second}（最多一个训练配置加一个启动器配置）'),
    "crash.input.sort_two_logs": ("a second log ({first} was already given): pass one", '又多了一份日志（已经给了 {first}）：只传一份'),
}
