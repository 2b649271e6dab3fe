"""Words of the advisor (--advise, the app's `m`): strategies, speed reasons, the fit matrix, assumptions."""
from __future__ import annotations

WORDS = {
    # ------------------------------------------------------------ the strategies
    "advise.strategy.single": ("single GPU", "单卡"),
    "advise.strategy.ddp": ("DDP (full copy on every card)", "DDP（每张卡一份完整副本）"),
    "advise.strategy.naive_mp": ("naive model parallel", "朴素模型并行"),
    "advise.strategy.zero1": ("ZeRO-1", "ZeRO-1"),
    "advise.strategy.zero2": ("ZeRO-2", "ZeRO-2"),
    "advise.strategy.zero3": ("ZeRO-3", "ZeRO-3"),
    "advise.strategy.zero3_offload_opt": ("ZeRO-3 + optimizer offload", "ZeRO-3 + 优化器卸载"),
    "advise.strategy.zero3_offload_all": ("ZeRO-3 + optimizer+param offload", "ZeRO-3 + 优化器和参数卸载"),
    "advise.strategy.fsdp": ("FSDP full_shard", "FSDP full_shard"),
    "advise.strategy.zero3_sp": ("ZeRO-3 + sequence parallel", "ZeRO-3 + 序列并行"),
    "advise.why.sequence_split": ("each sequence split over {cards} cards", "每条序列切分到 {cards} 张卡上"),
    "advise.naive_mp_note": ("Naive model parallel: the layers are split over {n} cards in one process; each card "
                             "holds 1/{n} of the weights, gradients and optimizer states and the activations of its "
                             "layers, the last card also the logits, and the cards work one at a time.",
                             "朴素模型并行：在一个进程里把各层分到 {n} 张卡上；每张卡放 1/{n} 的权重、梯度和优化器状态，"
                             "以及自己那几层的激活值，最后一张卡还要放 logits，各卡轮流工作。"),
    # ------------------------------------------------------------ why a row is that fast
    "advise.why.one_card": ("one card", "单卡"),
    "advise.why.one_card_does_all": ("one card does all the work", "一张卡完成全部计算"),
    "advise.why.sep": ("; ", "；"),
    "advise.why.fp32": ("fp32 matmuls run at about 1/{n} of the bf16 rate", "fp32 矩阵乘法的速度约为 bf16 的 1/{n}"),
    "advise.why.naive_mp": ("layers split over {n} cards that work one at a time: the speed of one card",
                            "各层分在 {n} 张卡上轮流计算：速度相当于一张卡"),
    "advise.why.scaling_gather": ("{n} cards at ~{eff:.0%} scaling (parameters gathered in forward and backward, "
                                  "{link})", "{n} 张卡，扩展效率约 {eff:.0%}（前向和反向时收集参数，{link}）"),
    "advise.why.scaling_reduce": ("{n} cards at ~{eff:.0%} scaling (gradients all-reduced, {link})",
                                  "{n} 张卡，扩展效率约 {eff:.0%}（梯度 all-reduce，{link}）"),
    "advise.link.nvlink": ("NVLink", "NVLink"),
    "advise.link.pcie": ("PCIe between cards", "卡间走 PCIe"),
    "advise.why.offload_optimizer": ("optimizer offload: {gb:.1f} GB over PCIe and CPU Adam on {bparams:.2f}B "
                                     "parameters add {s:.1f} s per step",
                                     "优化器卸载：{gb:.1f} GB 走 PCIe，加上 CPU 上对 {bparams:.2f}B 参数的 Adam 更新，"
                                     "每步多 {s:.1f} 秒"),
    "advise.why.offload_params": ("parameter offload: weights stream from host memory {passes}x per micro-batch, "
                                  "{gb:.0f} GB over PCIe adds {s:.1f} s per step",
                                  "参数卸载：每个微批从主机内存读取权重 {passes} 次，{gb:.0f} GB 走 PCIe，每步多 {s:.1f} 秒"),
    # ------------------------------------------------------------ where the token count comes from
    "advise.tokens.flag": ("{n:,.0f} tokens (--tokens)", "{n:,.0f} 个 token（--tokens）"),
    "advise.tokens.max_steps": ("{n:,.0f} tokens: max_steps {steps} x effective batch {eb} x {seq} tokens",
                                "{n:,.0f} 个 token：max_steps {steps} × 有效批大小 {eb} × {seq} 个 token"),
    "advise.tokens.samples": ("{n:,.0f} tokens: {samples:,} samples x {epochs:g} epochs, each filling {seq}-token "
                              "sequences (an upper bound: shorter samples train faster)",
                              "{n:,.0f} 个 token：{samples:,} 条样本 × {epochs:g} 轮，每条按 {seq} 个 token 计"
                              "（上限：更短的样本训练更快）"),
    "advise.tokens.samples_packed": ("{n:,.0f} tokens: {samples:,} samples x {epochs:g} epochs, packed into {seq}-token "
                                     "sequences (an upper bound: shorter samples train faster)",
                                     "{n:,.0f} 个 token：{samples:,} 条样本 × {epochs:g} 轮，打包成 {seq} 个 token 的序列"
                                     "（上限：更短的样本训练更快）"),
    "advise.tokens.unknown": ("the config does not say how many samples it trains on: pass --tokens N for run time "
                              "and cost", "配置里没有写训练多少条样本：用 --tokens N 指定，才能算出训练时长和费用"),
    # ------------------------------------------------------------ what a card makes us assume
    "advise.assumed.fp16": ("{gpu} has no bf16: fp16 mixed precision assumed (same memory).",
                            "{gpu} 不支持 bf16：按 fp16 混合精度计算（显存相同）。"),
    "advise.assumed.pure_fp16": ("{gpu} has no bf16: pure_bf16 becomes fp16 mixed precision with fp32 weights.",
                                 "{gpu} 不支持 bf16：pure_bf16 改为 fp16 混合精度，权重为 fp32。"),
    "advise.assumed.sdpa": ("{gpu} cannot run FlashAttention-2: PyTorch SDPA assumed.",
                            "{gpu} 不能运行 FlashAttention-2：按 PyTorch SDPA 计算。"),
    # ------------------------------------------------------------ assumptions
    "advise.assume.work": ("Run times are estimates: work per token (6 x matmul parameters for full fine-tuning, "
                           "4 x frozen + 6 x adapter parameters for LoRA, one more forward with gradient checkpointing, "
                           "causal attention at the configured length) over the card's dense bf16 peak at {mfu:.0%} "
                           "utilisation (MFU); a micro-batch of fewer than 4096 tokens leaves the card partly idle.",
                           "训练时长是估算：每个 token 的计算量（全参数微调为 6 × 矩阵乘参数量，LoRA 为 4 × 冻结参数 + 6 × "
                           "适配器参数，开启梯度检查点时再多一次前向，按配置长度计因果注意力）除以显卡稠密 bf16 峰值算力的 "
                           "{mfu:.0%}（MFU）；一个微批少于 4096 个 token 时显卡会有一部分空闲。"),
    "advise.assume.tokens": ("Tokens: {source}.", "token 数：{source}。"),
    "advise.assume.batch": ("More GPUs keep the per-device batch and accumulation as written (the effective batch "
                            "grows with the cards); the plan for a cell may change that.",
                            "卡数增加时，每卡批大小和梯度累积保持配置中的值（有效批大小随卡数增大）；某个格子的方案可能会改变这一点。"),
    "advise.assume.scaling": ("Data parallel scales at {ddp_nv:.0%} (DDP, ZeRO-1/2) and {z3_nv:.0%} (ZeRO-3, FSDP) "
                              "with NVLink, {ddp_pcie:.0%} and {z3_pcie:.0%} on PCIe-only cards; one node of up to 8 "
                              "cards.",
                              "数据并行的扩展效率：有 NVLink 时为 {ddp_nv:.0%}（DDP、ZeRO-1/2）和 {z3_nv:.0%}"
                              "（ZeRO-3、FSDP），只有 PCIe 的卡为 {ddp_pcie:.0%} 和 {z3_pcie:.0%}；单节点最多 8 张卡。"),
    "advise.assume.offload": ("Offload: host transfers at 25 GB/s (PCIe 4) or 50 GB/s (PCIe 5), not hidden behind "
                              "compute; CPU Adam at {rate:g}B parameters/s per node.",
                              "卸载：与主机之间的传输按 25 GB/s（PCIe 4）或 50 GB/s（PCIe 5）计，且不与计算重叠；"
                              "每个节点的 CPU Adam 按每秒 {rate:g}B 参数计。"),
    "advise.assume.no_bf16": ("Cards without bf16 train in fp16; cards without FlashAttention-2 use SDPA.",
                              "不支持 bf16 的卡用 fp16 训练；不支持 FlashAttention-2 的卡用 SDPA。"),
    "advise.assume.recompute": ("Gradient checkpointing runs the forward once more: +{frac:.0%} work in every row.",
                                "梯度检查点要多跑一次前向：每一行的计算量都多 {frac:.0%}。"),
    "advise.assume.measured": ("Every row and cell carries the {gib:.2f} GiB the log measured above the estimate "
                               "(the same extra on every card and strategy).",
                               "每一行、每个格子都加上了日志实测比估算多出的 {gib:.2f} GiB（所有卡和策略都加同样的量）。"),
    "advise.assume.unknown_card": ("{gpu} is not in the GPU catalog: its speed is unknown, so the strategy rows have "
                                   "no time; pass --gpu with a card name.",
                                   "{gpu} 不在 GPU 目录里：不知道它的速度，所以策略对比里没有时长；请用 --gpu 指定型号。"),
    "advise.assume.no_card": ("No GPU was given: the strategy rows say the peak per GPU and the host RAM each needs; "
                              "which cards hold that is the fit matrix.",
                              "没有指定 GPU：策略对比只列出每张卡的峰值和所需主机内存；哪些卡放得下见适配矩阵。"),
    "advise.assume.host_ram": ("Host RAM: a rented machine is taken to have {gib:.0f} GiB per GPU (a typical rental "
                               "host; --host-ram GIB says what yours has); ! marks what needs more.",
                               "主机内存：租用的机器按每张 GPU 配 {gib:.0f} GiB 计（常见租用主机的配置；用 --host-ram GIB "
                               "指定你的机器）；! 表示需要的更多。"),
    "advise.assume.host_ram_flag": ("Host RAM: {gib:.0f} GiB (--host-ram); ! marks what needs more.",
                                    "主机内存：{gib:.0f} GiB（--host-ram）；! 表示需要的更多。"),
    "advise.assume.consent": ("Plans in the matrix never change the experiment (no shorter cutoff_len, LoRA/QLoRA or "
                              "lower rank): add --accept quality to allow that.",
                              "矩阵里的方案不会改变实验本身（不截短 cutoff_len、不改用 LoRA/QLoRA、不降低秩）；"
                              "加上 --accept quality 才允许。"),
    "advise.strategies_any": ("Strategies on {n} GPU{n:plural::s} (no card given: the peak per GPU and the host RAM "
                              "each needs)",
                              "{n} 张 GPU 上的策略（未指定显卡：每张卡的峰值和所需主机内存）"),
    "advise.host_given": ("{gib:.0f} GiB of host RAM (--host-ram)", "主机内存 {gib:.0f} GiB（--host-ram）"),
    "advise.host_default": ("{gib:.0f} GiB of host RAM per GPU, a typical rental host; --host-ram to change",
                            "每张 GPU 配 {gib:.0f} GiB 主机内存，常见租用主机的配置；可用 --host-ram 修改"),
    "advise.host_flag_rows": ("! = needs more host RAM than the machine has ({budget}).",
                              "! = 需要的主机内存超过机器所有（{budget}）。"),
    "advise.legend_host": ("! = the plan offloads more to host RAM than the machine has ({budget}); see below",
                           "! = 方案卸载到主机内存的量超过机器所有（{budget}）；见下方"),
    "advise.host_needed": ("Host RAM the offloading plans need (!):", "卸载方案需要的主机内存（!）："),
    "advise.host_cell": ("{n} GPU{n:plural::s} need{n:plural:s:} {need:.0f} GiB (the host has {has:.0f} GiB)",
                         "{n} 张卡需要 {need:.0f} GiB（主机只有 {has:.0f} GiB）"),
    "advise.cost_title": ("Cost of the run ({currency}, * = cheapest that fits)", "整次训练的费用（{currency}，* = 放得下且最便宜）"),
    "advise.no_currency": ("currency as in the prices file", "币种同价格文件"),
    "advise.cards_title": ("Cards (as the catalog has them):", "显卡（目录中的参数）："),
    "advise.col.memory": ("memory", "显存"),
    "advise.col.bandwidth": ("bandwidth", "显存带宽"),
    "advise.col.tflops": ("bf16 dense", "bf16 稠密"),
    "advise.col.link": ("between cards", "卡间互连"),
    "advise.link.pcie_short": ("PCIe", "PCIe"),
    "advise.estimate_note": ("all memory, time and cost figures are estimates; see assumptions",
                             "所有显存、时间和费用都是估算；见假设"),
    # ------------------------------------------------------------ the plain view
    "advise.title": ("oomdoctor advise - {model}", "oomdoctor 选卡建议 - {model}"),
    "advise.method.full": ("full fine-tune", "全参数微调"),
    "advise.method.lora": ("LoRA r{rank}", "LoRA r{rank}"),
    "advise.method.qlora": ("QLoRA {bits}-bit r{rank}", "QLoRA {bits} 位 r{rank}"),
    "advise.method.freeze": ("freeze tuning", "冻结微调"),
    "advise.batch": ("micro-batch {mb} x accum {ga}", "微批大小 {mb} × 梯度累积 {ga}"),
    "advise.seq": ("seq {seq}", "序列长度 {seq}"),
    "advise.ckpt_on": ("grad ckpt", "梯度检查点"),
    "advise.ckpt_off": ("no grad ckpt", "无梯度检查点"),
    "advise.every_estimate": ("Every figure below is an estimate; the assumptions are listed at the end.",
                              "以下所有数字都是估算；假设列在最后。"),
    "advise.measured": ("Measured: ", "实测："),
    "advise.measured_curve": ("measured curve (step or line: GiB) {points}", "实测曲线（步数或行号：GiB）{points}"),
    "advise.strategies_on": ("Strategies on {n} x {card}", "{n} × {card} 上的策略"),
    "advise.strategies_fit": (" (fits: peak <= {budget:.1f} GiB, {share:.0%} of the card)",
                              "（放得下：峰值 <= {budget:.1f} GiB，即整卡的 {share:.0%}）"),
    "advise.col.strategy": ("strategy", "策略"),
    "advise.col.gpus": ("GPUs", "卡数"),
    "advise.col.peak": ("peak GiB", "峰值 GiB"),
    "advise.col.fits": ("fits", "放下"),
    "advise.col.host": ("host RAM", "主机内存"),
    "advise.col.speed": ("speed", "速度"),
    "advise.col.step": ("step", "每步"),
    "advise.col.run": ("run", "总时长"),
    "advise.col.cost": ("cost", "费用"),
    "advise.col.card": ("card", "显卡"),
    "advise.speed_note": ("speed: throughput in units of one card training alone (if it had the memory)",
                          "速度：以单卡独自训练（假设显存够）的吞吐为 1"),
    "advise.matrix_title": ("Fit matrix ({what})", "适配矩阵（{what}）"),
    "advise.matrix_what": ("peak per GPU", "每张卡的峰值"),
    "advise.matrix_time": (", run time", "、训练时长"),
    "advise.matrix_cost": (", cost", "、费用"),
    "advise.legend": ("ok = fits as configured, A-Z = fits with that plan (below), x = nothing fits (peak as "
                      "configured); GiB per GPU, then the run time", "ok = 按当前配置放得下，A-Z = 按下面对应的方案放得下，"
                      "x = 怎么改都放不下（显示当前配置的峰值）；先是每张卡的 GiB，然后是训练时长"),
    "advise.legend_price": ("* = the cheapest that fits without changing the experiment; - = no price for that card",
                            "* = 不改变实验就能放下的最便宜选择；- = 这张卡没有价格"),
    "advise.gpus_head": ("{n} GPU{n:plural::s}", "{n} 张"),
    "advise.plans": ("Plans:", "方案："),
    "advise.changes_experiment": (" (changes the experiment)", "（会改变实验）"),
    "advise.ladder_cells": ("(some cells took the ladder plan: the least-cost search ran out of its time budget)",
                            "（部分格子用的是阶梯方案：代价最小方案的搜索超出了时间预算）"),
    "advise.as_configured": ("as configured", "按当前配置"),
    "advise.with_plan": ("with plan {letter}", "按方案 {letter}"),
    "advise.cheapest": ("Cheapest that fits: {n} x {card} {how}, about {hours} and {cost}.",
                        "放得下且最便宜：{n} × {card}，{how}，约 {hours}，{cost}。"),
    "advise.no_priced_fit": ("No priced card fits; add prices for more cards.", "有价格的卡都放不下；请为更多的卡添加价格。"),
    "advise.assumptions": ("Assumptions:", "假设："),
}
