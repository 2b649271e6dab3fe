"""What the terminal app says, as plain strings and cell counts.

Kept free of Textual (and of Rich) so the wording and the bar arithmetic are testable on their own
and so the plain views could borrow them.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from oomdoctor.facts import CrashEvent, CrashReport, Estimate, Hardware, Step, TrainingSetup

SHORT_NAMES: Mapping[str, str] = {
    "weights": "weights", "gradients": "grads", "optimizer": "optimizer",
    "activations": "activations", "logits": "logits", "overhead": "overhead", "reserve": "reserve",
}
SHORT_NAMES_ZH: Mapping[str, str] = {
    "weights": "权重", "gradients": "梯度", "optimizer": "优化器状态",
    "activations": "激活值", "logits": "logits", "overhead": "其他开销", "reserve": "分配器预留",
}


def short_name(component: str, lang: str = "en") -> str:
    names = SHORT_NAMES_ZH if lang == "zh" else SHORT_NAMES
    return names.get(component, component)


PHASES: Mapping[str, str] = {
    "load": "while loading the model",
    "forward": "in the forward pass",
    "loss": "while computing the loss",
    "backward": "in the backward pass",
    "optimizer": "in the optimizer step",
    "zero_init": "while DeepSpeed ZeRO partitioned the model",
    "eval": "during evaluation",
    "save": "while saving a checkpoint",
    "generate": "while generating",
}

KINDS: Mapping[str, str] = {
    "cuda_oom": "CUDA ran out of GPU memory",
    "host_oom": "the machine ran out of host RAM and the kernel killed the process",
    "nccl_oom": "NCCL could not allocate its communication buffers",
    "cublas_alloc": "cuBLAS could not allocate its workspace (the GPU was already full)",
    "cudnn_alloc": "cuDNN could not allocate its workspace (the GPU was already full)",
    "mps_oom": "the Apple GPU (MPS) ran out of memory",
    "hip_oom": "the AMD GPU (HIP) ran out of memory",
    "xla_oom": "the XLA device ran out of memory",
    "vllm_cache": "vLLM could not fit its KV cache",
    "bnb_alloc": "bitsandbytes could not allocate GPU memory",
}

DIAGNOSES: Mapping[str, str] = {
    "fragmentation": "Fragmentation: PyTorch had reserved memory it could not use for this request. "
                     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True usually gives it back.",
    "other_process": "Other processes held memory on this GPU, so the run had less than the card's capacity.",
    "eval": "It died in evaluation: the eval batch (and its logits) can be larger than the training one.",
    "save": "It died while saving: gathering the full weights for the checkpoint needs room of its own.",
    "long_samples": "A long sample reached the GPU: the peak follows the longest sequence, not the average one.",
    "host_ram": "Host RAM ran out: offloading and data loading live in the machine's memory, not the GPU's.",
}

COSTS: Mapping[str, str] = {"throughput": "slower", "quality": "quality", "none": "free"}
COSTS_ZH: Mapping[str, str] = {"throughput": "变慢", "quality": "影响效果", "none": "无代价"}

PHASES_ZH: Mapping[str, str] = {
    "load": "加载模型时", "forward": "前向传播时", "loss": "计算损失时", "backward": "反向传播时",
    "optimizer": "优化器更新时", "zero_init": "DeepSpeed ZeRO 切分模型时", "eval": "评估时",
    "save": "保存检查点时", "generate": "生成时",
}

KINDS_ZH: Mapping[str, str] = {
    "cuda_oom": "CUDA 显存不足", "host_oom": "主机内存耗尽，进程被内核杀掉",
    "nccl_oom": "NCCL 无法分配通信缓冲区", "cublas_alloc": "cuBLAS 无法分配工作区（显存已满）",
    "cudnn_alloc": "cuDNN 无法分配工作区（显存已满）", "mps_oom": "Apple GPU（MPS）内存不足",
    "hip_oom": "AMD GPU（HIP）显存不足", "xla_oom": "XLA 设备内存不足", "vllm_cache": "vLLM 放不下 KV 缓存",
    "bnb_alloc": "bitsandbytes 无法分配显存",
}

DIAGNOSES_ZH: Mapping[str, str] = {
    "fragmentation": "碎片：PyTorch 已预留但无法用于这次请求的显存。"
                     "设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 通常能把它要回来。",
    "other_process": "这张 GPU 上还有其他进程占用显存，训练能用的少于整卡容量。",
    "eval": "在评估时崩溃：评估批次（及其 logits）可能比训练批次更大。",
    "save": "在保存时崩溃：为检查点收集完整权重需要额外的空间。",
    "long_samples": "有一条很长的样本到了 GPU：峰值取决于最长的序列，而不是平均长度。",
    "host_ram": "主机内存耗尽：offload 和数据加载用的是机器内存，不是显存。",
}

# The app's own labels: key -> (English, Simplified Chinese). str.format fields are filled by `say`.
LABELS: Mapping[str, tuple[str, str]] = {
    # tabs and footer
    "tab_diagnosis": ("1 Diagnosis", "1 诊断"), "tab_memory": ("2 Memory", "2 显存"),
    "tab_plan": ("3 Plan", "3 方案"), "tab_patch": ("4 Patch", "4 补丁"),
    "key_toggle": ("toggle", "勾选"), "key_plan": ("plan", "方案"), "key_export": ("export", "导出"),
    "key_copies": ("copies", "副本"), "key_apply": ("apply", "应用"), "key_guide": ("guide", "讲解"),
    "key_simulate": ("simulate", "模拟"), "key_matrix": ("matrix", "矩阵"),
    "key_help": ("help", "帮助"), "key_quit": ("quit", "退出"), "key_back": ("back", "返回"),
    # help lines
    "help_toggle": ("keep or drop the highlighted plan step (enter too)", "保留或去掉高亮的方案步骤（回车也可以）"),
    "help_plan": ("switch between the ladder and the least-cost plan", "在阶梯方案和代价最小的方案之间切换"),
    "help_export": ("export the diff of the selected steps to a file", "把所选步骤的 diff 导出到文件"),
    "help_copies": ("write patched copies of the configs into a folder", "把改好的配置副本写到一个文件夹"),
    "help_apply": ("apply the diff to the configs in place, after a confirmation", "确认后直接修改配置文件"),
    "help_guide": ("open the guided walkthrough", "打开分步讲解"),
    "help_simulate": ("trace a real training step on fake tensors (needs torch, transformers, peft)",
                      "用假张量实际跑一步训练，测出显存（需要 torch、transformers、peft）"),
    "help_matrix": ("which GPUs, how many, which strategy: the strategies and the fit matrix",
                    "用哪种卡、几张、哪种策略：策略对比和适配矩阵"),
    "help_help": ("show this list of keys", "显示这份按键列表"),
    "help_quit": ("quit", "退出"),
    "help_tabs": ("show the Diagnosis, Memory, Plan or Patch tab", "切换到诊断、显存、方案或补丁页"),
    "help_keep_all": ("keep every step of the plan", "保留方案的全部步骤"),
    "help_keep_none": ("drop every step of the plan", "去掉方案的全部步骤"),
    "help_arrows": ("move in the step list; pgup/pgdn scroll the diff", "在步骤列表中移动；pgup/pgdn 滚动 diff"),
    "help_tab": ("move the focus", "切换焦点"),
    "help_title": ("Keys", "按键"), "help_close": ("esc or ?: close", "esc 或 ?：关闭"),
    # diagnosis
    "what_died": ("What died", "出了什么问题"), "points_to": ("What it points to", "可能的原因"),
    "the_run": ("The run", "这次训练"), "estimate_per_gpu": ("Estimate per GPU", "每张 GPU 的估算"),
    "good_to_know": ("Good to know", "须知"),
    "no_log": ("No crash log given: this is an estimate of the config alone.", "没有给出崩溃日志：以下只是对配置的估算。"),
    "no_oom": ("{file} holds no out-of-memory error oomdoctor knows.", "{file} 里没有 oomdoctor 认识的显存不足错误。"),
    "as_configured": ("as configured", "当前配置"), "with_the_plan": ("with the plan", "采用方案后"),
    "of_usable": ("{peak} of {cap} usable — ", "{peak}，可用 {cap} — "),
    "after_steps": ("{peak} after {n} step{s} — ", "{n} 步之后 {peak} — "),
    "diag_hint": ("3: the plan's steps · 4: the diff", "3：方案步骤 · 4：diff"),
    # memory
    "now": ("now", "当前"), "plan": ("plan", "方案"),
    "per_gpu": ("per GPU", "每张 GPU"), "change": ("change", "变化"), "peak": ("peak", "峰值"),
    "verdict": ("verdict", "结论"), "fit_limit": ("fit limit ({free} free)", "上限（留 {free}）"),
    "no_estimate": ("No estimate: give the training config to see where the memory goes.",
                    "没有估算：给出训练配置才能看到显存花在哪里。"),
    "memory_foot": ("GiB per GPU; usable capacity {cap:.1f} GiB, {free} kept free for fragmentation and spikes.",
                    "单位是每张 GPU 的 GiB；可用容量 {cap:.1f} GiB，留出 {free} 应对碎片和峰值波动。"),
    "fits_spare": ("fits, {spare} spare", "放得下，还余 {spare}"),
    "over_by": ("over by {over}", "超出 {over}"),
    # plan
    "ladder": ("ladder", "阶梯方案"), "least_plan": ("least-cost plan", "代价最小的方案"),
    "Ladder": ("Ladder", "阶梯方案"), "Least_plan": ("Least-cost plan", "代价最小的方案"),
    "plan_label": ("{name}, {k} of {n} step{s}", "{name}，{n} 步中的 {k} 步"),
    "plan_heading": (" ({n} step{s}, {fit})", "（{n} 步，{fit}）"),
    "fits_word": ("fits", "放得下"), "no_fit_word": ("does not fit", "放不下"),
    "other_plan": (" · l: {other}", " · l：{other}"),
    "nothing_to_change": ("Nothing to change.", "无需改动。"),
    "no_step_applies": ("No step of the ladder applies.", "阶梯方案里没有适用的步骤。"),
    "fits_as_configured": ("The run fits as configured: ", "按当前配置即可放下："),
    "no_step": ("No step applies: ", "没有适用的步骤："),
    "reestimating": ("re-estimating…", "正在重新估算…"),
    "with_plan": ("With {label}: ", "采用{label}："),
    "peak_of": ("{peak} of {cap} — ", "{peak} / {cap} — "),
    "no_config": ("No estimate without a training config.", "没有训练配置就无法估算。"),
    "step_n": ("Step {n}: ", "第 {n} 步："),
    "step_saves": ("saves {saved} · {costs} · rule {rule} ({slug})", "节省 {saved} · {costs} · 规则 {rule}（{slug}）"),
    "step_uses": ("uses {more} more on the GPU · {costs} · rule {rule} ({slug})",
                  "GPU 上多用 {more} · {costs} · 规则 {rule}（{slug}）"),
    "whole_plan_no_fit": ("Even the whole plan does not fit. ", "即使采用全部步骤也放不下。"),
    "asks_consent": ("asks consent", "需要你同意"), "free": ("free", "无代价"),
    # patch
    "no_changes": ("No file changes for this selection.", "这组选择不改动任何文件。"),
    "edits_to": ("{n} edit{s} to ", "{n} 处修改："), "patch": ("Patch", "补丁"),
    "patch_keys": (" · e export · w copies · a apply", " · e 导出 · w 副本 · a 应用"),
    "before_launch": ("\nBefore you launch:\n", "\n启动前：\n"),
    # simulate
    "sim_title": ("Simulation: real training steps on fake tensors", "模拟：用假张量运行真实的训练步骤"),
    "sim_running": ("running… (esc stops it; q quits)", "正在运行…（esc 停止；q 退出）"),
    "sim_done": ("done", "完成"), "sim_unavailable": ("Cannot simulate here", "这里无法模拟"),
    "sim_failed": ("The simulation failed", "模拟失败"),
    "sim_no_config": ("--simulate needs a training config", "模拟需要训练配置"),
    "sim_target_configured": ("as configured", "当前配置"),
    "sim_target_selection": ("with the selected steps", "采用所选步骤后"),
    "sim_peak": ("traced peak {peak} ({where}); the estimate says {est} allocated ({gap:+.1%})",
                 "模拟峰值 {peak}（{where}）；估算的已分配显存为 {est}（相差 {gap:+.1%}）"),
    "sim_peak_only": ("traced peak {peak} ({where})", "模拟峰值 {peak}（{where}）"),
    "sim_stopped": ("Simulation stopped.", "模拟已停止。"),
    # advise
    "adv_title": ("Which GPUs, how many, which strategy", "用哪种卡、几张、哪种策略"),
    "adv_building": ("building the strategies and the fit matrix…", "正在计算策略对比和适配矩阵…"),
    "adv_failed": ("cannot build the fit matrix: {err}", "无法计算适配矩阵：{err}"),
    "adv_strategies": ("Strategies on {n} × {card} (fits: peak ≤ {budget})",
                       "{n} × {card} 上的策略（放得下：峰值 ≤ {budget}）"),
    "adv_strategy": ("strategy", "策略"), "adv_gpus": ("GPUs", "卡数"), "adv_peak": ("peak", "峰值"),
    "adv_fits": ("fits", "放得下"), "adv_host": ("host RAM", "主机内存"), "adv_speed": ("speed", "速度"),
    "adv_step": ("step", "每步"), "adv_run": ("run", "总时长"), "adv_runtime": ("run time", "训练时长"), "adv_cost": ("cost", "费用"),
    "adv_card": ("card", "显卡"),
    "adv_speed_note": ("speed: throughput in units of one card training alone (if it had the memory)",
                       "速度：以单卡独自训练（假设显存够）的吞吐为 1"),
    "adv_matrix": ("Fit matrix: peak per GPU{extra}", "适配矩阵：每张卡的峰值{extra}"),
    "adv_legend": ("✓ fits as configured · N steps: after a plan of N steps · ✗ nothing fits",
                   "✓ 按当前配置放得下 · N 步：按 N 步的方案改后放得下 · ✗ 怎么改都放不下"),
    "adv_yours": ("◀ yours", "◀ 你的"),
    "adv_your_card": ("On your card ({card}):", "在你的卡（{card}）上："),
    "adv_cell_fits": ("{n} GPU{s}: fits as configured, peak {peak}", "{n} 张：按当前配置放得下，峰值 {peak}"),
    "adv_cell_plan": ("{n} GPU{s}: {steps}", "{n} 张：{steps}"),
    "adv_cell_none": ("{n} GPU{s}: nothing fits (peak {peak} as configured)", "{n} 张：怎么改都放不下（当前峰值 {peak}）"),
    "adv_steps": ("{n} step{s}", "{n} 步"),
    "adv_cheapest": ("Cheapest that fits: {n} × {card}, about {hours} and {cost}.",
                     "放得下且最便宜：{n} × {card}，约 {hours}，{cost}。"),
    "adv_assumptions": ("Assumptions", "假设"),
    "adv_keys": ("↑↓ pgup pgdn scroll · esc back", "↑↓ pgup pgdn 滚动 · esc 返回"),
    "adv_not_in_catalog": ("(your card is not in the catalog)", "（你的卡不在目录里）"),
    # notifications
    "still_estimating": ("Still re-estimating; try again in a moment.", "还在重新估算，请稍后再试。"),
    "nothing_to_write": ("Nothing to write: the selected steps change no file.", "没有可写的内容：所选步骤不改动任何文件。"),
}


def say(key: str, lang: str = "en", **values: object) -> str:
    """The app's label `key` in `lang` (English for anything but "zh"), formatted with `values`."""
    en, zh = LABELS[key]
    text = zh if lang == "zh" else en
    return text.format(**values) if values else text


def plural(n: int, lang: str = "en") -> str:
    """The English plural ending for `n` ("" in Chinese, which has none)."""
    return "" if lang == "zh" or n == 1 else "s"


def gib(value: float | None, digits: int = 1) -> str:
    return "?" if value is None else f"{value:.{digits}f} GiB"


def card_phrase(capacity_gib: float | None, hw: Hardware | None, lang: str = "en") -> str:
    """'the A100-SXM4-80GB (79.2 GiB)' / 'a 24.0 GiB GPU'."""
    cap = capacity_gib if capacity_gib is not None else (hw.gpu_gib if hw and hw.gpu_gib else None)
    named = hw is not None and hw.gpu not in ("", "unknown")
    if lang == "zh":
        if named:
            return f"{hw.gpu}（{cap:.1f} GiB）" if cap is not None else hw.gpu
        return f"一张 {cap:.1f} GiB 的 GPU" if cap is not None else "GPU"
    if named and cap is not None:
        return f"the {hw.gpu} ({cap:.1f} GiB)"
    if named:
        return f"the {hw.gpu}"
    if cap is not None:
        return f"{'an' if f'{cap:.0f}'.startswith('8') else 'a'} {cap:.1f} GiB GPU"
    return "the GPU"


def crash_numbers(event: CrashEvent, hw: Hardware | None, lang: str = "en") -> str:
    """The crash's numbers in one plain sentence."""
    if lang == "zh":
        return _crash_numbers_zh(event, hw)
    card = card_phrase(event.capacity_gib, hw)
    if event.tried_gib is not None and event.free_gib is not None:
        text = f"The run asked for {gib(event.tried_gib)} more while {gib(event.free_gib)} was free on {card}."
    elif event.tried_gib is not None:
        text = f"The run asked for {gib(event.tried_gib)} more and {card} could not give it."
    else:
        what = KINDS.get(event.kind, event.kind.replace("_", " "))
        text = what[0].upper() + what[1:] + "."
    held = []
    if event.allocated_gib is not None:
        held.append(f"{gib(event.allocated_gib)} in live tensors")
    if event.reserved_unallocated_gib is not None:
        held.append(f"{gib(event.reserved_unallocated_gib)} reserved but unused")
    if held:
        text += " PyTorch held " + " and ".join(held) + "."
    if event.other_processes_gib:
        text += f" Other processes held {gib(event.other_processes_gib)}."
    return text


def _crash_numbers_zh(event: CrashEvent, hw: Hardware | None) -> str:
    card = card_phrase(event.capacity_gib, hw, "zh")
    if event.tried_gib is not None and event.free_gib is not None:
        text = f"训练还要再申请 {gib(event.tried_gib)}，而 {card} 上只剩 {gib(event.free_gib)} 空闲。"
    elif event.tried_gib is not None:
        text = f"训练还要再申请 {gib(event.tried_gib)}，{card} 给不出来。"
    else:
        text = KINDS_ZH.get(event.kind, event.kind.replace("_", " ")) + "。"
    held = []
    if event.allocated_gib is not None:
        held.append(f"{gib(event.allocated_gib)} 存放活跃张量")
    if event.reserved_unallocated_gib is not None:
        held.append(f"{gib(event.reserved_unallocated_gib)} 已预留但未使用")
    if held:
        text += "PyTorch 占用了：" + "，".join(held) + "。"
    if event.other_processes_gib:
        text += f"其他进程占用了 {gib(event.other_processes_gib)}。"
    return text


def _crash_where_zh(event: CrashEvent, crash: CrashReport) -> str:
    parts = []
    if crash.step is not None:
        parts.append(f"在第 {crash.step} 步" + (f"（共 {crash.total_steps} 步）" if crash.total_steps else ""))
    place = []
    if event.rank is not None:
        place.append(f"rank {event.rank}")
    if event.device is not None:
        place.append(f"cuda:{event.device}")
    if place:
        parts.append("在 " + (f"{place[0]}（{place[1]}）" if len(place) == 2 else place[0]) + " 上")
    if event.phase:
        parts.append(PHASES_ZH.get(event.phase, f"{event.phase} 阶段"))
    what = KINDS_ZH.get(event.kind, event.kind.replace("_", " "))
    text = "".join(parts) + ("，" if parts else "") + f"{what}；见 {crash.file} 第 {event.line} 行。"
    others = [r for r in crash.failed_ranks if r != event.rank]
    if others:
        text += f"rank {'、'.join(str(r) for r in others)} 也失败了。"
    return text


def crash_where(event: CrashEvent, crash: CrashReport, lang: str = "en") -> str:
    """'It died in the backward pass on rank 0 (cuda:0), at step 12 of 500; log line 1234.'"""
    if lang == "zh":
        return _crash_where_zh(event, crash)
    what = KINDS.get(event.kind, event.kind.replace("_", " "))
    parts = [f"{what[0].upper()}{what[1:]}"]
    if event.phase:
        parts.append(PHASES.get(event.phase, f"during {event.phase}"))
    place = []
    if event.rank is not None:
        place.append(f"rank {event.rank}")
    if event.device is not None:
        place.append(f"cuda:{event.device}")
    if place:
        parts.append("on " + (f"{place[0]} ({place[1]})" if len(place) == 2 else place[0]))
    if crash.step is not None:
        parts.append(f"at step {crash.step}" + (f" of {crash.total_steps}" if crash.total_steps else ""))
    text = " ".join(parts) + f"; {crash.file} line {event.line}."
    others = [r for r in crash.failed_ranks if r != event.rank]
    if others:
        text += f" Ranks {', '.join(str(r) for r in others)} failed too."
    return text


def diagnosis_lines(codes: Sequence[str], lang: str = "en") -> list[str]:
    table = DIAGNOSES_ZH if lang == "zh" else DIAGNOSES
    return [table.get(code) or DIAGNOSES.get(code, code.replace("_", " ").capitalize() + ".") for code in codes]


_SETUP_LABELS_ZH = {"model": "模型", "method": "方法", "batch": "批大小", "sequence": "序列长度",
                    "precision": "精度", "optimizer": "优化器", "memory": "显存设置"}


def setup_lines(setup: TrainingSetup, lang: str = "en") -> list[tuple[str, str]]:
    """(label, value) pairs that say what the run is, in the order a person reads a config."""
    if lang == "zh":
        return [(_SETUP_LABELS_ZH.get(label, label), value) for label, value in _setup_lines_zh(setup)]
    return _setup_lines_en(setup)


def _setup_lines_zh(setup: TrainingSetup) -> list[tuple[str, str]]:
    lines = dict(_setup_lines_en(setup))
    lines["batch"] = (f"每张卡 {setup.micro_batch} × 梯度累积 {setup.grad_accum} × {setup.n_gpus} 张卡"
                      f" = {setup.effective_batch}")
    lines["sequence"] = f"{setup.seq_len} 个 token" + ("（packing）" if setup.packing else "")
    lines["memory"] = (lines["memory"].replace("grad checkpointing on", "梯度检查点 开")
                       .replace("grad checkpointing off", "梯度检查点 关").replace("attention ", "注意力 ")
                       .replace("optimizer offload", "优化器 offload").replace("parameter offload", "参数 offload"))
    return list(lines.items())


def _setup_lines_en(setup: TrainingSetup) -> list[tuple[str, str]]:
    method = setup.method + (f" (rank {setup.lora_rank})" if setup.method in ("lora", "qlora") else "")
    batch = (f"{setup.micro_batch} per GPU × {setup.grad_accum} accumulation × {setup.n_gpus} GPU"
             f"{'s' if setup.n_gpus != 1 else ''} = {setup.effective_batch}")
    parallel = []
    if setup.zero_stage:
        parallel.append(f"ZeRO-{setup.zero_stage}")
    if setup.fsdp:
        parallel.append(f"FSDP {setup.fsdp}")
    if setup.offload_optimizer:
        parallel.append("optimizer offload")
    if setup.offload_params:
        parallel.append("parameter offload")
    return [
        ("model", setup.model or "?"),
        ("method", f"{setup.stage} · {method}"),
        ("batch", batch),
        ("sequence", f"{setup.seq_len} tokens" + (" (packed)" if setup.packing else "")),
        ("precision", setup.precision + (" (pure)" if setup.pure_bf16 else "")),
        ("optimizer", setup.optimizer),
        ("memory", ", ".join(
            ["grad checkpointing " + ("on" if setup.grad_ckpt else "off"), f"attention {setup.attention}"]
            + parallel)),
    ]


def verdict(est: Estimate, lang: str = "en") -> str:
    """'fits, 8.8 GiB spare' / 'over by 14.2 GiB' against capacity less headroom."""
    limit = est.capacity_gib * (1.0 - est.headroom)
    if est.fits:
        return say("fits_spare", lang, spare=gib(limit - est.peak_gib))
    return say("over_by", lang, over=gib(est.peak_gib - limit))


def step_costs(step: Step, lang: str = "en") -> str:
    costs = [c for c in step.costs if c != "none"]
    names = COSTS_ZH if lang == "zh" else COSTS
    sep = "，" if lang == "zh" else ", "
    words = sep.join(names.get(c, c) for c in costs) or say("free", lang)
    if step.applicability != "safe":
        words += sep + say("asks_consent", lang)
    return words


def matrix_cell(fits: bool, fits_as_configured: bool, n_steps: int, peak_gib: float, lang: str = "en") -> str:
    """One fit-matrix cell: '✓ 71G' as configured, '2 steps 33G' after a plan, '✗ 139G' when nothing fits."""
    size = f"{peak_gib:.0f}G" if peak_gib >= 10 else f"{peak_gib:.1f}G"
    if not fits:
        return f"✗ {size}"
    if fits_as_configured:
        return f"✓ {size}"
    return f"{say('adv_steps', lang, n=n_steps, s=plural(n_steps, lang))} {size}"


def hours_words(hours: float | None) -> str:
    """'45m', '1.6h', '38h', '12d': the same run-time words as the plain advisor."""
    from oomdoctor.advise.render import hours_text

    return hours_text(hours)


def change_words(step: Step) -> str:
    return "; ".join(f"{c.field} {_show(c.before)} → {_show(c.after)}" for c in step.changes)


def _show(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
