"""Words of the command line: --help (argparse's own words too), what the CLI prints on stderr, its errors."""
from __future__ import annotations

WORDS = {
    # ------------------------------------------------------------ --help
    "cli.description": ("Explain a CUDA out-of-memory crash of an LLM fine-tuning run and plan the fix that fits.",
                        "解释大模型微调训练的 CUDA 显存不足崩溃，并规划能放得下的修改方案。"),
    "cli.epilog": (
        "examples:\n"
        "  oomdoctor --walkthrough run.log config.yaml\n"
        "      first OOM? a guided, step-by-step explanation that ends in a plan\n"
        "  oomdoctor run.log config.yaml\n"
        "      what went wrong, and the plan that fits (the app in a terminal)\n"
        "  oomdoctor config.yaml --gpu 4090\n"
        "      will it fit, before you launch?\n"
        "  oomdoctor run.log config.yaml --export plan.diff && git apply plan.diff\n"
        "      write the plan as a patch, then apply it\n"
        "  oomdoctor run.log config.yaml --accept quality --export plan.diff\n"
        "      the same, allowing steps that change the experiment\n"
        "  oomdoctor config.yaml --advise --prices prices.yaml\n"
        "      which card to rent, and how many\n"
        "  oomdoctor --demo\n"
        "      try it on the bundled example\n"
        "\n"
        "Steps that change the experiment (shorter cutoff_len, LoRA/QLoRA, a lower rank, shorter packing) are "
        "only proposed; --accept takes them into the plan.\n"
        "\n"
        "exit codes: 0 fits as configured, 1 a plan was proposed, 2 bad input or usage, 3 no plan fits, "
        "4 internal error, 5 incomplete (the model's shape is missing: no estimate, no plan), 130 interrupted\n"
        "\n"
        "prices file (--prices, YAML): one price per card-hour, any one currency, cards named as for --gpu:\n"
        "  currency: USD\n"
        "  A100-80GB: 1.89\n"
        "  H100: 2.99\n"
        "  RTX 4090: 0.44",
        "示例：\n"
        "  oomdoctor --walkthrough run.log config.yaml\n"
        "      第一次遇到 OOM？分步讲解，最后给出方案\n"
        "  oomdoctor run.log config.yaml\n"
        "      哪里出了问题，以及能放下的方案（在终端里打开交互界面）\n"
        "  oomdoctor config.yaml --gpu 4090\n"
        "      启动前先看看放不放得下\n"
        "  oomdoctor run.log config.yaml --export plan.diff && git apply plan.diff\n"
        "      把方案写成补丁，再应用它\n"
        "  oomdoctor run.log config.yaml --accept quality --export plan.diff\n"
        "      同上，并允许改变实验本身的步骤\n"
        "  oomdoctor config.yaml --advise --prices prices.yaml\n"
        "      租哪种卡、租几张\n"
        "  oomdoctor --demo\n"
        "      用自带的例子试一试\n"
        "\n"
        "会改变实验本身的步骤（截短 cutoff_len、改用 LoRA/QLoRA、降低秩、缩短打包长度）只作为建议列出；"
        "加上 --accept 才会放进方案。\n"
        "\n"
        "退出码：0 按当前配置放得下，1 给出了方案，2 输入或用法有误，3 怎么改都放不下，4 内部错误，5 结果不完整（缺少模型结构：没有估算，也没有方案），130 被中断\n"
        "\n"
        "价格文件（--prices，YAML）：每张卡每小时的价格，币种任选一种，卡名写法与 --gpu 相同：\n"
        "  currency: CNY\n"
        "  A100-80GB: 12.5\n"
        "  H100: 21\n"
        "  RTX 4090: 2.2"),
    "cli.group.hardware": ("hardware and model", "硬件与模型"),
    "cli.group.plan": ("plan", "方案"),
    "cli.group.output": ("output", "输出"),
    "cli.group.patch": ("patch", "补丁"),
    "cli.help.files": ("crash log and/or training config, in any order; '-' reads a log from stdin",
                       "崩溃日志和/或训练配置，顺序不限；'-' 表示从标准输入读取日志"),
    "cli.help.demo": ("run on the bundled LLaMA-Factory config and crash log", "用自带的 LLaMA-Factory 配置和崩溃日志演示"),
    "cli.help.gpu": ("GPU name or size when the log does not say (A100-80GB, H100, RTX4090, 24GiB)",
                     "日志里没有写明时，指定 GPU 型号或显存大小（A100-80GB、H100、RTX4090、24GiB）"),
    "cli.help.gpus": ("GPUs per node the run can use; where the inputs name fewer, the plan may spread the run over "
                      "them with its effective batch kept",
                      "每个节点可供训练使用的 GPU 数量；输入文件写的卡数更少时，方案可以在保持有效批大小的前提下把训练分摊到这些卡上"),
    "cli.help.model": ("model hub id, catalog name, or a directory holding config.json",
                       "模型的 Hub ID、目录中的名称，或包含 config.json 的文件夹"),
    "cli.help.framework_version": ("framework version whose defaults apply (e.g. 0.9.3)",
                                   "按哪个框架版本的默认值理解配置（例如 0.9.3）"),
    "cli.help.headroom": ("fraction of GPU memory kept free when judging fit (default 0.10)",
                          "判断能否放下时预留的显存比例（默认 0.10）"),
    "cli.help.rules": ("add or override rules from DIR", "从 DIR 添加或覆盖规则"),
    "cli.help.skip": ("leave this rule out of the plan", "方案中不使用这条规则"),
    "cli.help.accept": ("agree to steps that change the experiment: rule ids or slugs (OOM003,OOM004), or 'quality' "
                        "for all of them; without it they are only proposed",
                        "同意会改变实验本身的步骤：规则编号或名称（OOM003,OOM004），或用 'quality' 表示全部；"
                        "不加时它们只作为建议列出"),
    "cli.help.host_ram": ("for the fit matrix: the host's RAM in GiB (default: 64 GiB per GPU, a typical rental host)",
                          "用于适配矩阵：主机内存大小，单位 GiB（默认每张 GPU 配 64 GiB，常见租用主机的配置）"),
    "cli.help.list_rules": ("print the rules in ladder order and exit (with --json: as JSON)",
                            "按阶梯顺序列出规则后退出（加 --json 输出 JSON）"),
    "cli.help.explain": ("print one rule in full and exit", "完整显示一条规则后退出"),
    "cli.help.plain": ("plain text report, no interactive app", "纯文本报告，不打开交互界面"),
    "cli.help.json": ("machine-readable report on stdout", "在标准输出上输出机器可读的报告"),
    "cli.help.lang": ("language of every message: en or zh (default: from LC_ALL, LC_MESSAGES, LANG)",
                      "所有输出的语言：en 或 zh（默认取自 LC_ALL、LC_MESSAGES、LANG）"),
    "cli.help.walkthrough": ("first OOM? a guided, step-by-step explanation that ends in a plan you can export",
                             "第一次遇到 OOM？分步讲解，最后给出可以导出的方案"),
    "cli.help.simulate": ("trace a real training step of the model code on fake tensors (needs oomdoctor[simulate])",
                          "用假张量实际跑一步模型代码的训练，测出显存（需要 oomdoctor[simulate]）"),
    "cli.help.advise": ("which GPUs, how many, which strategy: the fit matrix", "用哪种卡、几张、哪种策略：适配矩阵"),
    "cli.help.prices": ("for the fit matrix (--advise, or m in the app): YAML of card -> price per hour",
                        "用于适配矩阵（--advise，或界面中的 m）：显卡 -> 每小时价格 的 YAML 文件"),
    "cli.help.tokens": ("for the fit matrix (--advise, or m in the app): tokens to train on",
                        "用于适配矩阵（--advise，或界面中的 m）：要训练的 token 总数"),
    "cli.help.export": ("write the plan's unified diff to FILE, atomically and never over an input ('-' for "
                        "stdout; not with --json, whose \"patch\" field holds the same diff)",
                        "把方案的 unified diff 原子地写入 FILE，绝不覆盖输入文件（'-' 表示标准输出；"
                        "不能与 --json 同用，JSON 的 \"patch\" 字段已包含同一份 diff）"),
    "cli.help.write": ("write patched copies of the touched files into DIR", "把修改后的文件副本写到 DIR"),
    "cli.help.apply": ("edit the files in place after showing the diff: all or none, each original kept as .orig, "
                       "mode and owner kept; read-only or hard-linked files are refused",
                       "显示 diff 后直接修改文件：要么全部修改，要么一个都不改；原文件备份为 .orig，"
                       "保留权限和所有者；只读或有硬链接的文件会被拒绝"),
    "cli.help.yes": ("with --apply: do not ask", "配合 --apply：不再询问"),
    "cli.help.version": ("show the version and exit", "显示版本号后退出"),
    # argparse's own words (msgids of Python 3.9-3.13 mapped in cli.py)
    "cli.argparse.usage": ("usage: ", "用法："),
    "cli.argparse.positionals": ("positional arguments", "位置参数"),
    "cli.argparse.options": ("options", "选项"),
    "cli.argparse.help": ("show this help message and exit", "显示这份帮助后退出"),
    "cli.argparse.heading": ("%(heading)s:", "%(heading)s："),
    "cli.argparse.error": ("%(prog)s: error: %(message)s\n", "%(prog)s：错误：%(message)s\n"),
    "cli.argparse.expected_one": ("expected one argument", "需要一个参数值"),
    "cli.argparse.expected_at_most_one": ("expected at most one argument", "最多只能有一个参数值"),
    "cli.argparse.expected_at_least_one": ("expected at least one argument", "至少需要一个参数值"),
    "cli.argparse.ambiguous": ("ambiguous option: %(option)s could match %(matches)s",
                               "有歧义的选项：%(option)s 可以匹配 %(matches)s"),
    "cli.argparse.invalid_value": ("invalid %(type)s value: %(value)r", "无效的 %(type)s 值：%(value)r"),
    "cli.argparse.invalid_choice": ("invalid choice: %(value)r (choose from %(choices)s)",
                                    "无效的选项值：%(value)r（可选：%(choices)s）"),
    "cli.argparse.not_allowed": ("not allowed with argument %s", "不能与参数 %s 同时使用"),
    "cli.argparse.required": ("the following arguments are required: %s", "缺少以下必需参数：%s"),
    "cli.argparse.unrecognized": ("unrecognized arguments: %s", "无法识别的参数：%s"),
    "cli.argparse.ignored": ("ignored explicit argument %r", "忽略了显式给出的参数值 %r"),
    "cli.argparse.argument": ("argument %(argument_name)s: %(message)s", "参数 %(argument_name)s：%(message)s"),
    # ------------------------------------------------------------ what the CLI says on stderr
    "cli.error": ("oomdoctor: {message}", "oomdoctor：{message}"),
    "cli.usage_error": ("{message} (see oomdoctor --help)", "{message}（见 oomdoctor --help）"),
    "cli.interrupted": ("oomdoctor: interrupted", "oomdoctor：已中断"),
    "cli.internal_error": ("oomdoctor: internal error: {error} (set OOMDOCTOR_DEBUG=1 for the traceback, and please "
                           "report it)",
                           "oomdoctor：内部错误：{error}（设置 OOMDOCTOR_DEBUG=1 可查看调用栈，请把它报告给我们）"),
    "cli.headroom_range": ("--headroom must be a fraction between 0 and 0.9, not {value}",
                           "--headroom 必须是 0 到 0.9 之间的比例，而不是 {value}"),
    "cli.wrote_copies": ("oomdoctor: wrote {n} patched file{n:plural::s} into {folder}",
                         "oomdoctor：已把 {n} 个修改后的文件写入 {folder}"),
    "cli.needs_config": ("{flag} needs a training config", "{flag} 需要训练配置"),
    "cli.advise_needs_gpu": ("--advise needs the GPU: pass --gpu (e.g. --gpu A100-80GB)",
                             "--advise 需要知道 GPU：请用 --gpu 指定（例如 --gpu A100-80GB）"),
    "cli.accept_unknown": ("--accept {name}: no such rule (rule ids or slugs, see --list-rules; or quality, all)",
                           "--accept {name}：没有这条规则（写规则编号或名称，见 --list-rules；或 quality、all）"),
    "cli.demo_copy": ("oomdoctor: the bundled demo stays as shipped; applying to a copy in {folder}",
                      "oomdoctor：自带的演示文件保持原样；改为应用到 {folder} 中的副本"),
    "cli.demo_no_folder": ("no free name for a copy of the demo (oomdoctor-demo-N)",
                           "找不到可用的演示副本目录名（oomdoctor-demo-N）"),
    "cli.epilog_commands": ("commands:\n  oomdoctor run [options] -- <command ...>\n      launch a training run, watch its "
                            "GPU memory, diagnose it when it crashes (oomdoctor run --help)\n  oomdoctor history "
                            "[--clear]\n      the peaks that runs watched on this machine measured",
                            "子命令：\n  oomdoctor run [选项] -- <命令 ...>\n      启动训练，监视显存，崩溃时立即诊断"
                            "（oomdoctor run --help）\n  oomdoctor history [--clear]\n      本机监视过的运行所测得的显存峰值"),
    "cli.help.markdown": ("print the report as GitHub-flavoured Markdown, ready to paste into an issue",
                          "把报告输出为 GitHub 风格的 Markdown，可直接贴到 issue 中"),
    "cli.markdown_alone": ("--markdown cannot be combined with --json or --export -", "--markdown 不能与 --json 或 --export - 同时使用"),
    "cli.help.verify": ("trace the plan's final setup on fake tensors and compare it with the estimate (needs "
                        "oomdoctor[simulate]; Liger's fused loss is traced when liger-kernel is installed)",
                        "用假张量追踪方案的最终配置，并与估算比较（需要 oomdoctor[simulate]；安装了 liger-kernel 时一并追踪 "
                        "Liger 的融合损失）"),
    "cli.help.verify_seconds": ("time limit of --verify's trace in seconds (default 600)",
                                "--verify 追踪的时间上限，单位秒（默认 600）"),
    "cli.simulate_label": ("== {label}", "== {label}"),
    "cli.simulate_configured": ("as configured", "当前配置"),
    "cli.simulate_planned": ("after the plan", "采用方案后"),
    "cli.progress": ("oomdoctor: {message}", "oomdoctor：{message}"),
}
