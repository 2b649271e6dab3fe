"""Words for --verify: the plan's final setup traced on fake tensors, beside the estimate."""
from __future__ import annotations

WORDS = {
    "verify.heading_plan": ("Verifying the plan's final setup (after {rules}) on fake tensors",
                            "在假张量上验证方案的最终配置（应用 {rules} 之后）"),
    "verify.heading_as_is": ("Verifying the setup as configured (the plan changes nothing) on fake tensors",
                             "在假张量上验证当前配置（方案没有改动任何设置）"),
    "verify.missing": ("--verify needs torch, transformers and peft ({missing} missing): {hint}; run it where the "
                       "training runs",
                       "--verify 需要 torch、transformers 和 peft（缺少 {missing}）：{hint}；请在训练所在的机器上运行"),
    "verify.progress.start": ("tracing the plan's final setup ({n} step{n:plural::s} applied)",
                              "正在追踪方案的最终配置（已应用 {n} 步）"),
    "verify.verdict_agree": ("traced {traced:.2f} GiB, estimated {estimated:.2f} GiB (allocated, {gap:+.1%}): "
                             "they agree within {bound:.0%}",
                             "追踪 {traced:.2f} GiB，估算 {estimated:.2f} GiB（已分配，{gap:+.1%}）：两者相差在 {bound:.0%} 以内"),
    "verify.verdict_differ": ("traced {traced:.2f} GiB, estimated {estimated:.2f} GiB (allocated, {gap:+.1%}): "
                              "they differ by more than {bound:.0%}; trust the trace for what it covers",
                              "追踪 {traced:.2f} GiB，估算 {estimated:.2f} GiB（已分配，{gap:+.1%}）：两者相差超过 "
                              "{bound:.0%}；在追踪覆盖的范围内以追踪为准"),
    "verify.plan_figure": ("the plan's own figure for this setup: {gib:.2f} GiB allocated (as the plan states it: "
                           "with the fused loss it asks for and any correction from the crash log)",
                           "方案对该配置给出的数字：已分配 {gib:.2f} GiB（按方案的口径：包括它要求的融合损失，以及按崩溃日志所做的校正）"),
    "verify.fused.traced": ("fused loss: {kernel} is installed; its fused linear cross-entropy was traced as its "
                            "chunked algorithm (its Triton kernels cannot run on fake tensors); its RMSNorm and "
                            "SwiGLU kernels were not, so the estimate compared keeps the model's own layers",
                            "融合损失：已安装 {kernel}；按它的分块算法追踪了融合线性交叉熵（它的 Triton 内核无法在假张量上运行）；"
                            "它的 RMSNorm 和 SwiGLU 内核未追踪，因此用于比较的估算保留模型自带的层"),
    "verify.fused.not_installed": ("fused loss NOT traced: the plan uses Liger's fused linear cross-entropy but "
                                   "liger-kernel is not installed here; the model's own loss was traced and compared "
                                   "with the estimate for that loss (pip install liger-kernel, which the run needs "
                                   "anyway, to trace it)",
                                   "融合损失未追踪：方案使用 Liger 的融合线性交叉熵，但本机没有安装 liger-kernel；追踪的是模型"
                                   "自带的损失，并与该损失的估算比较（运行本来就需要 liger-kernel，安装后即可追踪它：pip install "
                                   "liger-kernel）"),
    "verify.fused.not_modelled": ("fused loss NOT traced: this chunked or cut cross-entropy has no traced model; the "
                                  "model's own loss was traced and compared with the estimate for that loss",
                                  "融合损失未追踪：这种分块或裁剪交叉熵没有可追踪的实现；追踪的是模型自带的损失，并与该损失的估算比较"),
}
