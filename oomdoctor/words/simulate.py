"""Words for --simulate: the traced step beside the estimate."""
from __future__ import annotations

WORDS = {
    "simulate.heading": ("Simulated {steps} training step(s) on fake tensors ({versions})",
                         "在假张量上模拟了 {steps} 个训练步（{versions}）"),
    "simulate.setup_line": (
        "micro-batch {batch} x {seq} tokens, {attention} attention, weights {load}, trainables {trainable}, "
        "autocast {autocast}, optimizer {optimizer}",
        "微批大小 {batch} x {seq} 个 token，{attention} 注意力，权重 {load}，可训练参数 {trainable}，"
        "autocast {autocast}，优化器 {optimizer}"),
    "simulate.autocast_off": ("off", "关闭"),
    "simulate.params_line": ("{total:,} parameters, {trainable:,} trainable; ran in {seconds:.1f} s",
                             "{total:,} 个参数，其中 {trainable:,} 个可训练；用时 {seconds:.1f} 秒"),
    "simulate.step_phase": ("step {step} {phase}", "第 {step} 步 {phase}"),
    "simulate.col_phase": ("phase", "阶段"),
    "simulate.col_traced_peak": ("traced peak", "追踪峰值"),
    "simulate.col_estimate": ("estimate", "估算"),
    "simulate.peak_marker": ("<- peak", "<- 峰值"),
    "simulate.col_component": ("component", "组成"),
    "simulate.col_traced_at_peak": ("traced at peak", "峰值时追踪值"),
    "simulate.not_traced": ("not traced", "未追踪"),
    "simulate.total_allocated": ("total (allocated)", "合计（已分配）"),
    "simulate.gap": ("estimate is {gap:+.1%} of the traced peak", "估算比追踪峰值 {gap:+.1%}"),
    "simulate.quantized": ("with 4/8-bit weights", "4/8 位权重时"),
    "simulate.quantized_weights": ("(quantised linear weights {gib})", "（量化后的线性层权重 {gib}）"),
    "simulate.choices": ("Choices made:", "所做的选择："),
    "simulate.limits": ("What the simulation cannot see:", "模拟看不到的部分："),
    # ---- cannot run, or stopped
    "simulate.missing": ("--simulate needs torch, transformers and peft ({missing} missing): {hint}",
                         "--simulate 需要 torch、transformers 和 peft（缺少 {missing}）：{hint}"),
    "simulate.interrupted": ("simulation stopped by Ctrl-C before it finished; nothing was written",
                             "模拟在完成前被 Ctrl-C 中止；没有写入任何文件"),
    "simulate.timeout": ("the trace was stopped at its time limit of {seconds:.0f} s (raise it with --verify-seconds)",
                         "追踪到达 {seconds:.0f} 秒的时间上限后被停止（可用 --verify-seconds 调高）"),
    "simulate.failed": ("the simulation failed ({error}): {first}", "模拟失败（{error}）：{first}"),
    "simulate.no_model_type": ("config.json has no model_type: cannot tell which model code to run",
                               "config.json 中没有 model_type，无法确定该运行哪个模型的代码"),
    "simulate.unknown_model_type": (
        "transformers {version} does not know model_type '{model_type}' (it may need the model's remote code)",
        "transformers {version} 不认识 model_type '{model_type}'（该模型可能需要它自带的远程代码）"),
    "simulate.cannot_build": ("transformers cannot build a causal LM from this {model_type} config: {error}",
                              "transformers 无法用这个 {model_type} 配置构建因果语言模型：{error}"),
    "simulate.no_layers": ("could not find the model's list of decoder layers", "找不到模型的解码器层列表"),
    "simulate.lora_missing": ("LoRA target(s) {targets} do not exist in this model (its linear layers: {linears})",
                              "该模型中没有 LoRA 目标 {targets}（它的线性层有：{linears}）"),
    "simulate.nothing_trainable": ("no parameter is trainable with this method and these targets",
                                   "按这种微调方式和这些目标模块，没有任何可训练的参数"),
    "simulate.fake_failed": ("the model code could not run on fake tensors: {error}",
                             "模型代码无法在假张量上运行：{error}"),
    # ---- progress lines while a trace runs
    "simulate.progress.loading": ("loading torch, transformers and peft", "正在加载 torch、transformers 和 peft"),
    "simulate.progress.building": ("building {model_type} on the meta device ({dtype}, {attention} attention)",
                                   "正在 meta 设备上构建 {model_type}（{dtype}，{attention} 注意力）"),
    "simulate.progress.to_fake": ("moving the model to fake tensors", "正在把模型移到假张量上"),
    "simulate.progress.forward": ("step {step}/{steps}: forward", "第 {step}/{steps} 步：前向传播"),
    "simulate.progress.backward": ("step {step}/{steps}: backward", "第 {step}/{steps} 步：反向传播"),
    "simulate.progress.still": ("still tracing: {elapsed:.0f} s of at most {limit:.0f} s",
                                "仍在追踪：已用 {elapsed:.0f} 秒，最多 {limit:.0f} 秒"),
    "simulate.progress.still_unbounded": ("still tracing: {elapsed:.0f} s", "仍在追踪：已用 {elapsed:.0f} 秒"),
    "simulate.progress.optimizer": ("step {step}/{steps}: optimizer step", "第 {step}/{steps} 步：优化器更新"),
    # ---- the optimizer that ran
    "simulate.opt.8bit": ("{name} 8-bit state shapes (bnb kernels not run)", "{name} 8 位状态的形状（未运行 bnb 内核）"),
    "simulate.opt.sgd": ("SGD (no state)", "SGD（无状态）"),
    "simulate.opt.adafactor": ("Adafactor (transformers)", "Adafactor（transformers 实现）"),
    "simulate.opt.lion": ("Lion state shapes", "Lion 状态的形状"),
    "simulate.opt.adamw_fused": ("AdamW fused", "AdamW fused"),
    "simulate.opt.adamw_foreach_default": ("AdamW foreach (torch's CUDA default)", "AdamW foreach（torch 在 CUDA 上的默认实现）"),
    "simulate.opt.adamw_foreach": ("AdamW foreach", "AdamW foreach"),
    "simulate.opt.master": ("{optimizer} on an fp32 master copy (DeepSpeed)", "{optimizer}，更新 fp32 主副本（DeepSpeed）"),
    # ---- choices made on the user's behalf
    "simulate.note.lf_checkpoint_dtype": ("LLaMA-Factory >= 0.9.4 loads the checkpoint's own dtype ({dtype})",
                                          "LLaMA-Factory >= 0.9.4 按检查点自身的精度（{dtype}）加载权重"),
    "simulate.note.trl_fp32": ("TRL loads a model given by name in fp32 unless model_init_kwargs sets a dtype",
                               "除非 model_init_kwargs 指定了 dtype，TRL 会以 fp32 加载按名称给出的模型"),
    "simulate.note.unknown_model_type": ("model_type '{model_type}' is unknown to transformers: traced as a Llama-shaped model",
                                         "transformers 不认识 model_type '{model_type}'：按 Llama 结构的模型追踪"),
    "simulate.note.eager": ("{model_type} refuses {attention} attention in this transformers; ran eager "
                            "(full seq x seq scores)",
                            "当前 transformers 中 {model_type} 不支持 {attention} 注意力；改用 eager 运行（保留完整的 "
                            "seq x seq 注意力分数）"),
    "simulate.note.fa2": ("FlashAttention-2 has no CPU/fake kernel: ran SDPA, which also keeps no seq x seq scores",
                          "FlashAttention-2 没有 CPU/假张量内核：改用 SDPA 运行，它同样不保留 seq x seq 注意力分数"),
    "simulate.note.deepspeed_master": ("DeepSpeed {dtype}: weights and gradients in {dtype}, fp32 master copy and "
                                       "states in the optimizer",
                                       "DeepSpeed {dtype}：权重和梯度为 {dtype}，fp32 主副本和状态保存在优化器中"),
    "simulate.note.liger_traced": ("the loss ran as Liger's fused linear cross-entropy: logits for one chunk of "
                                   "tokens at a time",
                                   "损失按 Liger 的融合线性交叉熵运行：每次只生成一个分块 token 的 logits"),
    "simulate.note.optimizer_as_adamw": ("optimizer '{optimizer}' is not simulated as such: traced with AdamW foreach",
                                         "没有按原样模拟优化器 '{optimizer}'：改用 AdamW foreach 追踪"),
    # ---- what the trace cannot see
    "simulate.limit.no_cuda": (
        "no CUDA context, cuBLAS/NCCL workspaces or caching-allocator reserve: add a few hundred MiB to 1 GiB+",
        "不含 CUDA 上下文、cuBLAS/NCCL 工作区和缓存分配器的预留：需再加几百 MiB 到 1 GiB 以上"),
    "simulate.limit.no_fragmentation": (
        "no allocator fragmentation or 512-byte block rounding: the trace is what max_memory_allocated() would "
        "report at best",
        "不含分配器碎片和 512 字节块取整：追踪结果是 max_memory_allocated() 在最理想情况下的读数"),
    "simulate.limit.cpu_autocast": ("autocast ran with PyTorch's CPU op lists, which differ slightly from the CUDA ones",
                                    "autocast 按 PyTorch 的 CPU 算子列表运行，与 CUDA 的列表略有不同"),
    "simulate.limit.galore": ("GaLore/APOLLO/BAdam optimizers are not simulated: traced with AdamW over the trainables",
                              "未模拟 GaLore/APOLLO/BAdam 优化器：按 AdamW 更新可训练参数追踪"),
    "simulate.limit.bnb8bit": (
        "the 8-bit optimizer's kernel is not simulated: its state shapes are allocated (1 byte per element + fp32 "
        "scales) and the update is a plain in-place step",
        "未模拟 8 位优化器的内核：只按形状分配它的状态（每个元素 1 字节 + fp32 缩放系数），更新是普通的原地运算"),
    "simulate.limit.bnb8bit_paged": (
        "the 8-bit optimizer's kernel is not simulated: its state shapes are allocated (1 byte per element + fp32 "
        "scales) and the update is a plain in-place step; paged states can move to host memory under pressure",
        "未模拟 8 位优化器的内核：只按形状分配它的状态（每个元素 1 字节 + fp32 缩放系数），更新是普通的原地运算；"
        "显存紧张时分页的状态可以移到主机内存"),
    "simulate.limit.lion": ("Lion's kernel is not simulated: one state per parameter, plain in-place update",
                            "未模拟 Lion 的内核：每个参数一个状态，更新是普通的原地运算"),
    "simulate.limit.sharding": ("{scheme} sharding is simulated by dividing {parts} by {n} GPUs, not run "
                                "(no buckets, no gathered layers)",
                                "{scheme} 分片没有实际运行，只是把{parts}除以 {n} 张 GPU（不含通信桶，也不含聚合后的层）"),
    "simulate.limit.optimizer_offload": ("optimizer offload: optimizer states counted in host memory, not on the GPU",
                                         "卸载优化器：优化器状态计入主机内存，不计入 GPU"),
    "simulate.limit.param_offload": ("parameter offload: weights counted in host memory (the layer being computed is not)",
                                     "卸载参数：权重计入主机内存（正在计算的那一层除外）"),
    "simulate.limit.bnb_kernels": ("bitsandbytes {bits}-bit kernels have no fake implementation: the frozen linear "
                                   "weights were traced as dequantised {dtype} copies",
                                   "bitsandbytes {bits} 位内核没有假张量实现：冻结的线性层权重按反量化后的 {dtype} 副本追踪"),
    "simulate.limit.fused_ce": ("fused/chunked cross-entropy is not simulated: the trace keeps HF's full fp32 logits",
                                "未模拟融合/分块交叉熵：追踪中保留了 HF 完整的 fp32 logits"),
    "simulate.limit.preference": ("{stage} is traced as one plain language-model step (no reference model, no "
                                  "chosen+rejected pair)",
                                  "{stage} 按一次普通的语言模型训练步追踪（不含参考模型，也不含 chosen+rejected 样本对）"),
    "simulate.limit.quantized_peak": ("the 4/8-bit peak swaps the dequantised copies for the quantised weights and adds "
                                      "one dequantised weight for the matmul being computed",
                                      "4/8 位峰值把反量化副本换成量化后的权重，并加上正在计算的矩阵乘所需的一份反量化权重"),
}
