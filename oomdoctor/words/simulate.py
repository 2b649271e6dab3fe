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
}
