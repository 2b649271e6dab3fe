"""Words for the finding: whether the training config explains the crash, and the clues in the log when it does not."""
from __future__ import annotations

WORDS = {
    "finding.title": ("Cause", "原因"),
    "finding.checks": ("Check first", "先检查"),
    "finding.cause.config": ("the training config", "训练配置"),
    "finding.cause.beyond_config": ("beyond the config", "配置之外"),
    "finding.config": (
        "The training config explains this crash: the crash shows {observed:.2f} GiB per GPU against the config's "
        "estimate of {estimate:.2f} GiB.",
        "训练配置可以解释这次崩溃：崩溃显示每张 GPU {observed:.2f} GiB，配置的估算为 {estimate:.2f} GiB。"),
    "finding.config_plain": (
        "The log shows a memory failure; the plan below answers it from the training config.",
        "日志显示发生了内存不足；下面的方案按训练配置给出。"),
    "finding.beyond": (
        "The config alone does not explain this crash: its own estimate of the {moment} is {estimate:.2f} GiB per "
        "GPU, the crash shows {observed:.2f} GiB ({ratio:.1f}x). Something outside the config took the memory; "
        "check the points below before changing the config. The plan is still built on the crash's figure.",
        "仅凭配置无法解释这次崩溃：配置自身对{moment}阶段的估算是每张 GPU {estimate:.2f} GiB，崩溃显示 "
        "{observed:.2f} GiB（{ratio:.1f} 倍）。显存被配置之外的东西占用了；修改配置之前请先检查下面几点。"
        "方案仍按崩溃显示的数字制定。"),
    "finding.beyond_taken": (
        "The config alone does not explain this crash: memory on the card was taken by something this config does "
        "not hold. Check the points below before changing the config.",
        "仅凭配置无法解释这次崩溃：卡上的显存被这个配置之外的东西占用了。修改配置之前请先检查下面几点。"),
    "finding.phase.eval": ("evaluation", "评估"),
    "finding.phase.generate": ("generation", "生成"),
    "finding.clue.shared_device": (
        "Several processes or ranks use GPU {device}: the log shows more than one process on one card, or a launcher "
        "that started copies of a single-GPU run.",
        "多个进程或 rank 在使用 GPU {device}：日志显示同一张卡上有多个进程，或启动器启动了多份单卡训练。"),
    "finding.check.shared_device": (
        "Run nvidia-smi while the run starts: each rank should sit on its own GPU. Launch with torchrun, deepspeed "
        "or accelerate launch (FORCE_TORCHRUN=1 for llamafactory-cli), and check CUDA_VISIBLE_DEVICES and any "
        "device_map=\"auto\" or .to(\"cuda:0\") in the code.",
        "训练启动时运行 nvidia-smi：每个 rank 应各占一张 GPU。用 torchrun、deepspeed 或 accelerate launch 启动"
        "（llamafactory-cli 设置 FORCE_TORCHRUN=1），并检查 CUDA_VISIBLE_DEVICES 以及代码里的 device_map=\"auto\" "
        "或 .to(\"cuda:0\")。"),
    "finding.clue.data_parallel": (
        "The Trainer ran DataParallel: one process drove {gpus} GPUs (\"Training with DataParallel\"), so each step "
        "copies the model to every card and gathers the outputs on GPU 0; this is not distributed training.",
        "Trainer 使用了 DataParallel：一个进程驱动 {gpus} 张 GPU（\"Training with DataParallel\"），每一步都把模型复制到每张"
        "卡上并把输出汇总到 GPU 0；这不是分布式训练。"),
    "finding.check.data_parallel": (
        "Start one process per GPU: torchrun, deepspeed or accelerate launch (FORCE_TORCHRUN=1 llamafactory-cli "
        "train ...), not plain python with several visible cards.",
        "每张 GPU 启动一个进程：用 torchrun、deepspeed 或 accelerate launch（FORCE_TORCHRUN=1 llamafactory-cli "
        "train ...），而不是在多张可见卡上直接用 python 启动。"),
    "finding.clue.outside_pytorch": (
        "This process had {in_use:.2f} GiB in use but PyTorch held only {torch:.2f} GiB: {gib:.2f} GiB is memory "
        "outside PyTorch (another library's allocator, NCCL buffers, a leak of non-PyTorch memory).",
        "这个进程占用了 {in_use:.2f} GiB，而 PyTorch 只持有 {torch:.2f} GiB：有 {gib:.2f} GiB 是 PyTorch 之外的"
        "显存（其他库的分配器、NCCL 缓冲区，或非 PyTorch 显存泄漏）。"),
    "finding.check.outside_pytorch": (
        "Look for other libraries that allocate on the GPU in this process (vLLM, bitsandbytes paged memory, cuDNN "
        "benchmark workspaces, NCCL): NCCL_BUFFSIZE, a smaller vLLM gpu_memory_utilization, or one library per card.",
        "检查这个进程里其他在 GPU 上分配显存的库（vLLM、bitsandbytes 分页内存、cuDNN benchmark 工作区、NCCL）："
        "调小 NCCL_BUFFSIZE 或 vLLM 的 gpu_memory_utilization，或让每张卡只用一个库。"),
    "finding.clue.other_process": (
        "Other processes held {gib:.2f} GiB on the card when it failed.",
        "崩溃时其他进程在这张卡上占用了 {gib:.2f} GiB。"),
    "finding.check.other_process": (
        "Run nvidia-smi before launching: stop the other jobs on the card (a notebook kernel, an earlier run that "
        "did not exit), or train on a free GPU.",
        "启动前运行 nvidia-smi：停掉这张卡上的其他任务（notebook 内核、没有退出的上一次训练），或换一张空闲的 GPU。"),
    "finding.clue.fragmentation": (
        "{gib:.2f} GiB was reserved by PyTorch but unallocated: the cache was fragmented.",
        "有 {gib:.2f} GiB 被 PyTorch 预留但未分配：缓存已碎片化。"),
    "finding.check.fragmentation": (
        "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1 or newer) and run again.",
        "设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True（PyTorch 2.1 或更新版本）后重新运行。"),
    "finding.clue.growth": (
        "Memory rose over the run: from {first:.2f} GiB to {last:.2f} GiB across {steps} readings in the log.",
        "显存在训练中不断上升：日志中的 {steps} 次读数从 {first:.2f} GiB 升到 {last:.2f} GiB。"),
    "finding.check.growth": (
        "Memory that rises step after step is held on to: tensors kept across steps (a loss appended without "
        ".item(), metrics kept on the GPU), or batches that grow longer. Compare the first and the last steps.",
        "逐步上升的显存说明有东西没被释放：跨步保留的张量（没有 .item() 就追加的 loss、留在 GPU 上的指标），"
        "或越来越长的批次。对比最初和最后几步。"),
    "finding.clue.eval": (
        "The crash came in {phase}, which has its own batch (per_device_eval_batch_size: {batch}) and keeps the "
        "logits.",
        "崩溃发生在{phase}阶段，它有自己的批大小（per_device_eval_batch_size: {batch}），还会保留 logits。"),
    "finding.check.eval": (
        "Lower per_device_eval_batch_size, set eval_accumulation_steps, or prediction_loss_only when no metric "
        "needs the logits.",
        "调小 per_device_eval_batch_size，设置 eval_accumulation_steps；不需要 logits 计算指标时设置 "
        "prediction_loss_only。"),
    "finding.clue.version_bug": (
        "{package} {version} has a known memory problem: {what}",
        "{package} {version} 有已知的显存问题：{what}"),
    "finding.check.version_bug": (
        "Try another release (good again: {fixed}); see {source}.",
        "换一个版本试试（恢复正常的版本：{fixed}）；见 {source}。"),
    "finding.bug.transformers_llama_438": (
        "Llama uses markedly more memory than under 4.37 with the same code.",
        "在代码相同的情况下，Llama 的显存占用明显高于 4.37。"),
    "finding.bug.transformers_gc_436": (
        "gradient checkpointing does not take effect for several model types, so its saving is lost.",
        "梯度检查点对多种模型不生效，省下的显存没有省下来。"),
    "finding.bug.deepspeed_z3_gc_0164": (
        "with ZeRO-3 and gradient checkpointing, gathered parameters are not released after the recomputed forward.",
        "ZeRO-3 与梯度检查点同时使用时，重算前向之后聚合的参数没有被释放。"),
}
