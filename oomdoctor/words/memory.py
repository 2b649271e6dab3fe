"""Words for the memory model: components, moments, regimes, caveats, the crash reconciled with the estimate."""
from __future__ import annotations

WORDS = {
    # component names, short (bars, tables) and long (sentences)
    "memory.component.weights": ('weights', '权重'),
    "memory.component.gradients": ('grads', '梯度'),
    "memory.component.optimizer": ('optimizer', '优化器状态'),
    "memory.component.activations": ('activations', '激活值'),
    "memory.component.logits": ("logits", "logits"),
    "memory.component.overhead": ('overhead', '其他开销'),
    "memory.component.reserve": ('reserve', '分配器预留'),
    "memory.component_long.weights": ('weights', '权重'),
    "memory.component_long.gradients": ('gradients', '梯度'),
    "memory.component_long.optimizer": ('optimizer states', '优化器状态'),
    "memory.component_long.activations": ('activations', '激活值'),
    "memory.component_long.logits": ('logits and loss', 'logits 与损失'),
    "memory.component_long.overhead": ('runtime overhead', '运行时开销'),
    "memory.component_long.reserve": ('allocator reserve', '分配器预留'),
    # the moments of one training step (estimate and trace share them)
    "memory.moment.forward": ("forward", "前向传播"),
    "memory.moment.loss": ("loss", "计算损失"),
    "memory.moment.logits_backward": ("logits backward", "logits 反向传播"),
    "memory.moment.layers_backward": ("layers backward", "各层反向传播"),
    "memory.moment.optimizer": ("optimizer step", "优化器更新"),
    "memory.moment.eval": ("evaluation", "评估"),
    "memory.moment.load": ("model loading", "模型加载"),
    "memory.moment.log_prob": ("log-prob pass", "log-prob 计算"),
    "memory.moment.rollout": ("rollout", "rollout 生成"),
    # regimes: which dtype each tensor lives in
    "memory.regime.lf_loads_fp32_checkpoint": (
        "LLaMA-Factory >= 0.9.4 loads the checkpoint's own dtype (float32 here): frozen weights take 4 bytes "
        "per parameter.",
        "LLaMA-Factory >= 0.9.4 按检查点自身的 dtype 加载（这里是 float32）：冻结的权重每个参数占 4 字节。"),
    "memory.regime.trl_loads_fp32": (
        "TRL loads a model given by name in float32 unless model_init_kwargs sets dtype.",
        "按名称指定的模型，TRL 默认以 float32 加载，除非 model_init_kwargs 设置了 dtype。"),
    "memory.regime.lf_upcasts_adapters": (
        "LLaMA-Factory upcasts the LoRA adapters to fp32.",
        "LLaMA-Factory 会把 LoRA 适配器升为 fp32。"),
    "memory.regime.lf_upcasts_trainables": (
        "LLaMA-Factory upcasts trainable parameters to fp32: 16 bytes per parameter (weights 4 + gradients 4 + "
        "AdamW states 8).",
        "LLaMA-Factory 把可训练参数升为 fp32：每个参数 16 字节（权重 4 + 梯度 4 + AdamW 优化器状态 8）。"),
    "memory.regime.axolotl_fp32_embeddings": (
        "axolotl keeps embed_tokens and lm_head in fp32 (eager/SDPA attention, no FSDP).",
        "axolotl 把 embed_tokens 和 lm_head 保持为 fp32（eager/SDPA 注意力，未用 FSDP）。"),
    "memory.regime.deepspeed_mixed": (
        "DeepSpeed mixed precision: half weights and gradients, fp32 master weights, fp32 gradient partition "
        "and fp32 optimizer states.",
        "DeepSpeed 混合精度：半精度的权重和梯度，fp32 主权重、fp32 梯度分片和 fp32 优化器状态。"),
    "memory.regime.half_loaded_trainer": (
        "The model was loaded in half precision: the HF Trainer keeps bf16 weights, gradients and AdamW states "
        "(8 bytes per parameter, no fp32 master copy).",
        "模型以半精度加载：HF Trainer 保持 bf16 的权重、梯度和 AdamW 优化器状态（每个参数 8 字节，没有 fp32 主副本）。"),
    "memory.regime.fsdp_upcast": (
        "FSDP under accelerate with mixed precision: the trainable parameters' shards are upcast to fp32, so "
        "their gradients and AdamW states are fp32 too; compute runs on half-precision gathered copies.",
        "accelerate 管理的 FSDP 开启混合精度时，可训练参数的分片被升为 fp32，其梯度和 AdamW 优化器状态也是 fp32；"
        "计算使用收集来的半精度副本。"),
    "memory.regime.pure_half": (
        "Pure half precision: weights, gradients and optimizer states all in 2 bytes.",
        "纯半精度：权重、梯度和优化器状态都是 2 字节。"),
    "memory.regime.adamw_half_states": (
        "AdamW states are kept in the parameters' half dtype.",
        "AdamW 优化器状态保持为参数的半精度 dtype。"),
    # sharding and what the estimate assumes
    "memory.note.zero_full_weights": (
        "ZeRO-{stage} keeps full weights on every GPU: more GPUs lower only the sharded {parts} part.",
        "ZeRO-{stage} 在每张 GPU 上都保留完整权重：增加 GPU 只会降低被切分的{parts}部分。"),
    "memory.note.zero_parts_optimizer": ("optimizer", "优化器状态"),
    "memory.note.zero_parts_optimizer_gradients": ("optimizer and gradient", "优化器状态和梯度"),
    "memory.note.zero3_quantized_load": (
        "A quantized model is not created under DeepSpeed's zero.Init: every GPU loads the whole quantized model "
        "({gib:.1f} GiB) before ZeRO-3 partitions it, and the peak counters keep that moment.",
        "量化模型不在 DeepSpeed 的 zero.Init 下创建：每张 GPU 先加载完整的量化模型（{gib:.1f} GiB），"
        "之后 ZeRO-3 才将其切分，峰值计数会保留这一时刻。"),
    "memory.note.device_quantized_init": (
        "torchtune before 0.2 builds the model on the GPU and quantizes it to NF4 there with torchao 0.1, whose "
        "quantizer holds 32 bytes an element twice over: loading peaks at {gib:.1f} GiB allocated and leaves "
        "{reserved:.1f} GiB reserved, which training starts from (the cache is never emptied).",
        "0.2 之前的 torchtune 在 GPU 上构建模型并用 torchao 0.1 就地量化为 NF4，其量化过程每个元素两次占用 32 字节："
        "加载时分配峰值 {gib:.1f} GiB，留下 {reserved:.1f} GiB 已保留显存，训练从此开始（缓存从未清空）。"),
    "memory.note.ddp_full_copy": (
        "DDP keeps full weights, gradients and optimizer states on every GPU: more GPUs do not lower per-GPU "
        "memory.",
        "DDP 在每张 GPU 上都保留完整的权重、梯度和优化器状态：增加 GPU 不会降低每卡显存。"),
    "memory.note.reference_model": (
        "DPO/KTO with full or freeze tuning loads a second, frozen reference model.",
        "全参数或冻结微调的 DPO/KTO 会再加载一个冻结的参考模型。"),
    "memory.note.verl_engine": (
        "verl colocates its {engine} rollout engine on every training GPU (gpu_memory_utilization {frac}): "
        "{gib:.1f} GiB while it generates; {idle:.1f} GiB stays beside the actor's update.",
        "verl 在每张训练 GPU 上同置 {engine} rollout 引擎（gpu_memory_utilization {frac}）：生成时占 {gib:.1f} GiB；"
        "actor 更新时仍留有 {idle:.1f} GiB。"),
    "memory.note.verl_critic": (
        "The PPO critic trains on the same GPUs: {gib:.1f} GiB of fp32 shards and AdamW states per GPU, "
        "{on:.1f} GiB of them on the card during the actor's update.",
        "PPO 的 critic 在同一批 GPU 上训练：每卡 {gib:.1f} GiB 的 fp32 分片和 AdamW 状态，"
        "actor 更新时其中 {on:.1f} GiB 在显存中。"),
    "memory.note.verl_reference": (
        "verl's reference model is CPU-offloaded by FSDP: {gib:.1f} GiB per GPU in host RAM, one unit at a time "
        "on the card.",
        "verl 的参考模型由 FSDP 卸载到 CPU：每卡 {gib:.1f} GiB 在主机内存中，每次只把一个单元放到显存。"),
    "memory.note.verl_packed_fit": (
        "use_remove_padding packs each micro-batch's real tokens, which the config cannot know: {gib:.1f} GiB of "
        "the peak is counted at the full {seq} tokens a sample may have, so the peak is an upper bound. It fits if "
        "the samples average at most about {tokens} of those {seq} tokens; use_dynamic_bsz with "
        "ppo_max_token_len_per_gpu bounds them whatever the data.",
        "use_remove_padding 只打包每个微批中的真实 token，而配置无法得知其长度：峰值中有 {gib:.1f} GiB 按每条样本最多 "
        "{seq} 个 token 计算，因此峰值是上界。若样本平均不超过约 {tokens} 个 token（共 {seq}），就放得下；"
        "开启 use_dynamic_bsz 并设置 ppo_max_token_len_per_gpu，可在任何数据下限定其大小。"),
    "memory.note.verl_packed_bound": (
        "use_remove_padding packs each micro-batch's real tokens, which the config cannot know: {gib:.1f} GiB of "
        "the peak is counted at the full {seq} tokens a sample may have, so the peak is an upper bound; what else "
        "the step holds does not fit even with shorter samples.",
        "use_remove_padding 只打包每个微批中的真实 token，而配置无法得知其长度：峰值中有 {gib:.1f} GiB 按每条样本最多 "
        "{seq} 个 token 计算，因此峰值是上界；但即使样本更短，这一步的其余部分也放不下。"),
    "memory.note.verl_peak": (
        "The {moment} phase, not the actor's update, sets the peak.",
        "峰值出现在{moment}阶段，而不是 actor 更新时。"),
    "memory.note.litgpt_resident_copy": (
        "LitGPT under FSDP keeps a full, unsharded copy of the weights on every rank besides its shard: more "
        "GPUs shrink only the sharded part.",
        "LitGPT 在 FSDP 下，每个进程除了自己的分片，还保留一份完整未切分的权重：增加 GPU 只会缩小分片部分。"),
    "memory.note.megatron": (
        "Megatron-Core splits the model itself (tensor parallel {tp}, pipeline {pp}, expert {ep}, context {cp}; "
        "{dp} data-parallel replicas): this GPU holds its shard in bf16 with fp32 main gradients, and the fp32 "
        "main weights and Adam states {optimizer}. The {stage} sets the peak.",
        "Megatron-Core 自行切分模型（张量并行 {tp}、流水线 {pp}、专家 {ep}、上下文 {cp}；数据并行 {dp} 份）："
        "每张 GPU 以 bf16 保存自己的分片，主梯度为 fp32，fp32 主权重和 Adam 状态{optimizer}。峰值出现在{stage}。"),
    "memory.megatron_optimizer.distributed": ("split over the data-parallel ranks (distributed optimizer)",
                                              "由分布式优化器切分到各数据并行 rank"),
    "memory.megatron_optimizer.replicated": ("whole on every data-parallel rank (no distributed optimizer)",
                                             "在每个数据并行 rank 上完整保存（未用分布式优化器）"),
    "memory.megatron_stage.first": ("first pipeline stage (embedding, micro-batches in flight)",
                                    "第一个流水线阶段（词嵌入、在途微批次）"),
    "memory.megatron_stage.last": ("last pipeline stage (output layer and logits)", "最后一个流水线阶段（输出层和 logits）"),
    "memory.note.eval_peak": (
        "Evaluation sets the peak: eval batch {batch} x {seq} tokens of logits.",
        "峰值出现在评估时：评估批次 {batch} x {seq} 个 token 的 logits。"),
    "memory.note.llama_style": (
        "Activations follow HF Llama-style blocks; other architectures and fused/compiled kernels are "
        "approximate.",
        "激活值按 HF 的 Llama 式结构计算；其他结构以及融合或编译过的算子只是近似。"),
    "memory.note.paged_states": (
        "Paged optimizer states live in CUDA unified memory: torch.cuda.max_memory_allocated does not count "
        "them, the card does.",
        "分页优化器状态位于 CUDA 统一内存中：torch.cuda.max_memory_allocated 不计入它们，但显卡要承担。"),
    "memory.note.autocast_copies": (
        "Autocast keeps a bf16 copy of every fp32 weight during forward (2 more bytes per parameter).",
        "前向传播期间 autocast 为每个 fp32 权重保留一份 bf16 副本（每个参数多 2 字节）。"),
    "memory.note.offload_host_ram": (
        "CPU offload needs about {gib:.1f} GiB of host RAM per node.",
        "CPU 卸载每个节点大约需要 {gib:.1f} GiB 主机内存。"),
    "memory.note.grad_accum_carry": (
        "Gradient accumulation keeps the gradients of earlier micro-batches through every later forward and "
        "backward ({gib:.1f} GiB).",
        "梯度累积期间，前面微批的梯度会一直保留到后续每次前向和反向传播（{gib:.1f} GiB）。"),
    "memory.note.modules_to_save": (
        "modules_to_save trains full copies of {params:.0f}M parameters (embedding/output layer) beside the frozen "
        "originals: {gib:.1f} GiB of weights, gradients and optimizer states.",
        "modules_to_save 会在冻结原模块之外，再完整训练一份 {params:.0f}M 参数的副本（嵌入层/输出层）："
        "权重、梯度和优化器状态共 {gib:.1f} GiB。"),
    "memory.note.optimizer_in_backward": (
        "The optimizer steps inside backward (optimizer_in_bwd): each gradient is freed as soon as its parameter "
        "is updated, so the gradients never all exist at once.",
        "优化器在反向传播中逐个参数更新（optimizer_in_bwd）：每个梯度在参数更新后立即释放，所有梯度不会同时存在。"),
    "memory.note.low_memory_optimizer": (
        "{name} keeps {gib:.2f} GiB of optimizer states: low-rank or reduced moments for the decoder's linear "
        "weights, AdamW's for the embeddings, output layer and norms.",
        "{name} 的优化器状态共 {gib:.2f} GiB：解码层的线性权重只保留低秩或精简的动量，嵌入层、输出层和归一化层仍用 AdamW 的状态。"),
    "memory.note.activation_offload": (
        "Activation offloading moves saved activations to host RAM; about two layers' worth stay on the GPU.",
        "激活值卸载会把保存的激活值移到主机内存，只有大约两层的激活值留在 GPU 上。"),
    # the advisor's long-context row
    # the crash reconciled with the estimate
    "memory.crash.held_and_asked": (
        "At the crash PyTorch held {held:.2f} GiB and asked for {tried:.2f} GiB more ({demanded:.2f} GiB); the "
        "estimate's allocated peak is {estimate:.2f} GiB ({rel:+.0%}).",
        "崩溃时 PyTorch 已占用 {held:.2f} GiB，又申请 {tried:.2f} GiB（共 {demanded:.2f} GiB）；估算的分配峰值为 "
        "{estimate:.2f} GiB（{rel:+.0%}）。"),
    "memory.crash.floor": (
        "The run died before reaching its peak: the log's figure is a lower bound, so an estimate above it is "
        "expected.",
        "训练还没到峰值就崩溃了：日志里的数字只是下限，估算比它高是正常的。"),
    "memory.crash.floor_at": (
        "The run died {where}, before reaching its peak: the log's figure is a lower bound, so an estimate "
        "above it is expected.",
        "训练{where}就崩溃了，还没到峰值：日志里的数字只是下限，估算比它高是正常的。"),
    "memory.crash.where_optimizer": ("while the optimizer was creating its states", "在优化器创建优化器状态时"),
    "memory.crash.where_backward": ("part-way through the backward pass", "在反向传播途中"),
    "memory.crash.where_forward": ("part-way through the forward pass", "在前向传播途中"),
    "memory.crash.held": (
        "At the crash PyTorch held {held:.2f} GiB; the estimate's allocated peak is {estimate:.2f} GiB.",
        "崩溃时 PyTorch 已占用 {held:.2f} GiB；估算的分配峰值为 {estimate:.2f} GiB。"),
    "memory.crash.fragmented": (
        "{gib:.2f} GiB was reserved by PyTorch but unallocated: the cache is fragmented; "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets it reuse that memory.",
        "有 {gib:.2f} GiB 被 PyTorch 预留却未分配：缓存出现了碎片；设置 "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 可以让它重新利用这部分显存。"),
    "memory.crash.other_processes": (
        "Other processes held {gib:.2f} GiB on the card; usable capacity is {usable:.2f} GiB.",
        "其他进程在这张卡上占用了 {gib:.2f} GiB；可用容量为 {usable:.2f} GiB。"),
    "memory.crash.capacity_differs": (
        "The log reports a capacity of {logged:.2f} GiB; the estimate used {used:.2f} GiB.",
        "日志显示的容量是 {logged:.2f} GiB；估算使用的是 {used:.2f} GiB。"),
    # a measured peak from the log corrects the estimate
    "memory.calibrate.raised": (
        "The log measured a peak of {measured:.2f} GiB allocated ({where}); the estimate said {estimate:.2f} GiB, "
        "so every estimate for this run is raised by {gap:.2f} GiB (memory the model does not account for).",
        "日志测得的分配峰值为 {measured:.2f} GiB（{where}）；估算是 {estimate:.2f} GiB，因此本次训练的所有估算都提高 "
        "{gap:.2f} GiB（模型没有算到的显存）。"),
    "memory.calibrate.kept": (
        "The log measured a peak of {measured:.2f} GiB allocated ({where}), not above the estimate's "
        "{estimate:.2f} GiB; the estimate is kept.",
        "日志测得的分配峰值为 {measured:.2f} GiB（{where}），没有超过估算的 {estimate:.2f} GiB；估算保持不变。"),
    "memory.calibrate.where_step": ("line {line}, after step {step}", "第 {line} 行，第 {step} 步之后"),
    "memory.calibrate.where_training": ("line {line}, during training", "第 {line} 行，训练期间"),
    # the crash as a measurement: a floor under the peak of the phase that crashed (memory/reconcile.py)
    "memory.floor.peak": ("run's peak", "训练峰值"),
    "memory.floor.raised": (
        "The crash is a measurement: at line {line} PyTorch held {held:.2f} GiB and asked for {tried:.2f} GiB more, "
        "so the {moment} needs at least {observed:.2f} GiB per GPU; the config's estimate of it was "
        "{estimate:.2f} GiB. It is raised by {gap:.2f} GiB, and the plan is built on the raised figure.",
        "崩溃本身就是一次测量：第 {line} 行显示 PyTorch 已占用 {held:.2f} GiB，又申请了 {tried:.2f} GiB，"
        "所以{moment}阶段每张 GPU 至少需要 {observed:.2f} GiB；按配置的估算只有 {estimate:.2f} GiB。"
        "估算因此提高 {gap:.2f} GiB，方案按提高后的数字制定。"),
    "memory.floor.covered": (
        "At line {line} PyTorch held {held:.2f} GiB and asked for {tried:.2f} GiB more ({observed:.2f} GiB in "
        "the {moment}); the estimate of that phase, {estimate:.2f} GiB, already covers it.",
        "第 {line} 行显示 PyTorch 已占用 {held:.2f} GiB，又申请了 {tried:.2f} GiB（{moment}阶段共 "
        "{observed:.2f} GiB）；该阶段的估算 {estimate:.2f} GiB 已经覆盖了它。"),
    "memory.floor.device": (
        "The crash is a measurement: at line {line} the card could not give {tried:.2f} GiB more, so it held at "
        "least {observed:.2f} GiB, all but what was asked (the message printed no figure of its own); the "
        "config's estimate of the {moment} was {estimate:.2f} GiB.",
        "崩溃本身就是一次测量：第 {line} 行显卡连 {tried:.2f} GiB 都分配不出，说明它至少已占用 {observed:.2f} GiB"
        "（报错信息本身没有打印占用数字）；按配置对{moment}阶段的估算只有 {estimate:.2f} GiB。"),
    "memory.floor.device_unsized": (
        "The crash is a measurement: at line {line} the card could not give what the run asked (the message printed "
        "neither the size nor a figure of its own), so it was full: it held about {observed:.2f} GiB, its capacity, "
        "less an allocation of unknown size; the config's estimate of the {moment} was {estimate:.2f} GiB.",
        "崩溃本身就是一次测量：第 {line} 行显卡分配不出训练请求的显存（报错信息既没有请求大小也没有占用数字），说明卡已占满："
        "约 {observed:.2f} GiB，即显卡容量减去一次大小未知的分配；按配置对{moment}阶段的估算只有 {estimate:.2f} GiB。"),
    "memory.floor.host": (
        "The host ran out of memory (line {line}): the run needed more than the machine's {ram:.1f} GiB of RAM; "
        "the estimate of host memory was {estimate:.1f} GiB.",
        "主机内存耗尽（第 {line} 行）：这次训练需要的内存超过了机器的 {ram:.1f} GiB；"
        "按估算主机内存只需 {estimate:.1f} GiB。"),
}
