"""Words of `oomdoctor run` (watching a training run) and `oomdoctor history`."""
from __future__ import annotations

WORDS = {
    "watch.usage": ("oomdoctor run [options] -- <command ...>", "oomdoctor run [选项] -- <命令 ...>"),
    "watch.description": (
        "Launch a training command, pass its output through unchanged (and log it), sample GPU memory through "
        "NVML, and diagnose the crash the moment it happens. Everything oomdoctor says goes to stderr.",
        "启动训练命令，原样转发它的输出（并写入日志），通过 NVML 采样显存，并在崩溃的那一刻给出诊断。oomdoctor 自己"
        "的所有输出都写到 stderr。"),
    "watch.help.config": ("the training config (default: found from the command line)",
                          "训练配置文件（默认从命令行中找出）"),
    "watch.help.logs": ("folder for the run's log, timeline and command record (default oomdoctor-runs)",
                        "存放本次运行的日志、时间线和命令记录的文件夹（默认 oomdoctor-runs）"),
    "watch.help.check": ("print the pre-flight line and stop (exit 0 fits, 1 a plan is proposed, 3 nothing fits)",
                         "只打印启动前检查的一行结果后退出（0 放得下，1 给出了方案，3 怎样都放不下）"),
    "watch.help.interval": ("seconds between GPU memory samples (default 0.5: 2 per second)",
                            "两次显存采样之间的秒数（默认 0.5，即每秒 2 次）"),
    "watch.help.retry": ("after a crash, apply the plan (asks first; --yes does not) and launch once more",
                         "崩溃后应用方案（会先征求同意；加 --yes 则不问）并重新启动一次"),
    "watch.help.yes": ("agree to --retry's changes without asking", "不经询问直接同意 --retry 的改动"),
    "watch.help.markdown": ("write the crash report as GitHub-ready Markdown (also saved beside the log)",
                            "把崩溃报告写成可直接贴到 GitHub 的 Markdown（同时保存在日志旁边）"),
    "watch.help.no_history": ("do not record this run's measured peak in the local history",
                              "不把本次运行测得的峰值写入本地历史"),
    "watch.help.history_clear": ("remove every recorded run", "删除所有记录的运行"),
    "watch.history_description": ("The measured peaks of successful runs watched by `oomdoctor run` on this machine.",
                                  "本机上由 `oomdoctor run` 监视且成功结束的运行所测得的显存峰值。"),
    # ---- errors
    "watch.no_command": ("give the command to run after --: oomdoctor run [options] -- <command ...>",
                         "请在 -- 之后给出要运行的命令：oomdoctor run [选项] -- <命令 ...>"),
    "watch.logs_unwritable": ("cannot create the runs folder ({reason})", "无法创建运行记录文件夹（{reason}）"),
    "watch.cannot_start": ("cannot start {command}: {reason}", "无法启动 {command}：{reason}"),
    "watch.no_config": ("no training config found on the command line; give it with --config",
                        "没有在命令行中找到训练配置；请用 --config 指定"),
    # ---- before launch
    "watch.preflight": ("pre-flight: {peak:.1f} GiB per GPU estimated, {n} x {gpu} ({cap:.1f} GiB, from {source}), "
                        "{others}: {verdict}",
                        "启动前检查：估算每张 GPU 需 {peak:.1f} GiB，{n} x {gpu}（{cap:.1f} GiB，来自 {source}），{others}："
                        "{verdict}"),
    "watch.preflight_none": ("pre-flight: no estimate ({why}); the run is watched all the same",
                             "启动前检查：无法估算（{why}）；照常监视这次运行"),
    "watch.others": ("{gib:.1f} GiB already held by other processes", "其他进程已占用 {gib:.1f} GiB"),
    "watch.no_others": ("no other process on the GPUs", "GPU 上没有其他进程"),
    "watch.verdict_fits": ("fits, {spare:.1f} GiB to spare", "放得下，还剩 {spare:.1f} GiB"),
    "watch.verdict_plan": ("does NOT fit; a {steps}-step plan brings it to {gib:.1f} GiB (run oomdoctor on the "
                           "config to see it)",
                           "放不下；一个 {steps} 步的方案可降到 {gib:.1f} GiB（对配置运行 oomdoctor 可查看）"),
    "watch.verdict_no_fit": ("does NOT fit, and no plan makes it fit", "放不下，也没有方案能让它放下"),
    "watch.measured_here": ("measured here: {gib:.1f} GiB last time, {peak:.1f} GiB at most, {runs} run{runs:plural::s} "
                            "(oomdoctor history)",
                            "本机实测：上次 {gib:.1f} GiB，最高 {peak:.1f} GiB，共 {runs} 次运行（oomdoctor history）"),
    "watch.no_timeline": ("no GPU memory timeline: {why}; everything else works",
                          "没有显存时间线：{why}；其余功能照常工作"),
    "watch.no_nvml_module": ("pynvml is not installed (pip install nvidia-ml-py)",
                             "没有安装 pynvml（pip install nvidia-ml-py）"),
    "watch.no_gpus": ("NVML sees no GPU", "NVML 没有看到任何 GPU"),
    "watch.nvml_failed": ("NVML did not start ({error})", "NVML 无法启动（{error}）"),
    "watch.launching": ("launching; output is logged to {log}", "正在启动；输出记录在 {log}"),
    # ---- after
    "watch.finished": ("the run finished (exit 0) after {seconds:.1f} s", "运行已结束（退出码 0），用时 {seconds:.1f} 秒"),
    "watch.failed": ("the run failed (exit {status}) after {seconds:.1f} s; diagnosis:",
                     "运行失败（退出码 {status}），用时 {seconds:.1f} 秒；诊断如下："),
    "watch.stopped": ("the run was stopped by {signal} (exit {status})", "运行被 {signal} 中止（退出码 {status}）"),
    "watch.killed": ("the command was killed by SIGKILL without an error of its own: on Linux that is usually the "
                     "kernel's out-of-memory killer (host RAM, not GPU memory); `dmesg | grep -i oom` tells",
                     "命令被 SIGKILL 杀死，自己没有报错：在 Linux 上这通常是内核的 OOM killer（主机内存不足，而不是显存）；"
                     "可用 `dmesg | grep -i oom` 确认"),
    "watch.timeline_file": ("memory timeline: {path}", "显存时间线：{path}"),
    "watch.internal": ("internal error in the {stage} ({error}); the run itself is not affected "
                       "(set OOMDOCTOR_DEBUG=1 and please report it)",
                       "{stage}时出现内部错误（{error}）；运行本身不受影响（请设置 OOMDOCTOR_DEBUG=1 后报告此问题）"),
    "watch.stage.preflight": ("pre-flight", "启动前检查"),
    "watch.stage.diagnosis": ("diagnosis", "诊断"),
    "watch.history_unwritable": ("could not record the run in {path} ({reason})", "无法把本次运行记录到 {path}（{reason}）"),
    "watch.no_diagnosis": ("no diagnosis: {why}", "无法诊断：{why}"),
    "watch.history_written": ("measured peak {gib:.2f} GiB per GPU recorded in {path}",
                              "测得的每张 GPU 峰值 {gib:.2f} GiB 已记录到 {path}"),
    "watch.markdown_written": ("Markdown report saved to {path}", "Markdown 报告已保存到 {path}"),
    "watch.retry_ask": ("--retry: apply the plan above ({files} file(s) changed, backups kept; environment: {env}) "
                        "and launch once more? [y/N] ",
                        "--retry：应用上面的方案（修改 {files} 个文件，保留备份；环境变量：{env}）并重新启动一次吗？[y/N] "),
    "watch.retry_declined": ("--retry: nothing changed, not launched again", "--retry：没有做任何改动，也没有重新启动"),
    "watch.retry_needs_yes": ("--retry: no terminal to ask for consent; add --yes to apply the plan and launch again",
                              "--retry：没有终端可以征求同意；加上 --yes 才会应用方案并重新启动"),
    "watch.retry_nothing": ("--retry: the plan changes no file, nothing to retry", "--retry：方案不修改任何文件，无需重试"),
    "watch.retrying": ("--retry: launching again: {command}", "--retry：再次启动：{command}"),
    "watch.timeline_heading": ("GPU memory as the watcher saw it ({samples} samples, every {interval:g} s):",
                               "监视器看到的显存（{samples} 次采样，每 {interval:g} 秒一次）："),
    "watch.gpu_line": ("GPU {index} {name}: peak {peak:.2f} GiB of {total:.1f} GiB, {at:.1f} s after launch",
                       "GPU {index} {name}：峰值 {peak:.2f} GiB（共 {total:.1f} GiB），启动后 {at:.1f} 秒"),
    "watch.spark_scale": ("(0 to {total:.0f} GiB)", "（0 到 {total:.0f} GiB）"),
    "watch.other_line": ("other processes held up to {gib:.2f} GiB", "其他进程最多占用 {gib:.2f} GiB"),
    "watch.growth_line": ("the run's memory grew {rate:+.0f} MiB/min in its second half",
                          "运行后半段显存以每分钟 {rate:+.0f} MiB 的速度变化"),
    "watch.first_limit": ("GPU {index} reached 95% of its memory first, {at:.1f} s after launch",
                          "GPU {index} 最先达到显存的 95%，在启动后 {at:.1f} 秒"),
    "watch.tab_timeline": ("5 Timeline", "5 时间线"),
    "watch.key_timeline": ("timeline", "时间线"),
    "watch.help.tui": ("after a crash, open the app (with a timeline tab) instead of the plain report",
                       "崩溃后打开交互界面（带时间线标签页），而不是纯文本报告"),
    # ---- history
    "watch.history_empty": ("no run recorded yet ({path})", "还没有记录任何运行（{path}）"),
    "watch.history_heading": ("{n} run{n:plural::s} recorded in {path}:", "{path} 中记录了 {n} 次运行："),
    "watch.history_row": ("{time}  {model} on {n} x {gpu}: peak {gib:.2f} GiB per GPU (micro-batch {batch}, "
                          "seq {seq})",
                          "{time}  {model}，{n} x {gpu}：每张 GPU 峰值 {gib:.2f} GiB（微批 {batch}，序列长度 {seq}）"),
    "watch.history_cleared": ("removed {n} recorded run{n:plural::s} ({path})", "已删除 {n} 条运行记录（{path}）"),
}
