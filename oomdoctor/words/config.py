"""Words for reading training configs and launch scripts: errors, notes, and why a file was read as it was."""
from __future__ import annotations

WORDS = {
    # ---- files that cannot be read
    "config.no_such_file": ("no such file", "文件不存在"),
    "config.binary": ("binary file, expected a YAML/JSON config or a shell script",
                      "这是二进制文件，应为 YAML/JSON 配置或 shell 脚本"),
    "config.not_utf8": ("not UTF-8 text (byte {offset})", "不是 UTF-8 文本（第 {offset} 字节）"),
    "config.control_char": ("control character {char} is not allowed in a config file",
                            "配置文件中不允许出现控制字符 {char}"),
    "config.empty": ("the file is empty", "文件为空"),
    "config.ds_zero_not_mapping": ("zero_optimization must be a mapping ({{\"stage\": 2, ...}}), found a {kind}",
                                   "zero_optimization 必须是映射（{{\"stage\": 2, ...}}），实际是 {kind}"),
    "config.not_a_mapping": ("expected a mapping of training keys, found a {kind}",
                             "应为训练参数的键值映射，实际是 {kind}"),
    "config.unknown_kind": (
        "not a training config oomdoctor knows: expected LLaMA-Factory (model_name_or_path + stage/finetuning_type), "
        "HF/TRL TrainingArguments, axolotl (base_model), a torchtune recipe, an accelerate config, a DeepSpeed JSON, "
        "a verl or mlx-lm config, or a launch script",
        "不是 oomdoctor 认识的训练配置：应为 LLaMA-Factory（model_name_or_path + stage/finetuning_type）、"
        "HF/TRL TrainingArguments、axolotl（base_model）、torchtune recipe、accelerate 配置、DeepSpeed JSON、"
        "verl 或 mlx-lm 配置，或启动脚本"),
    "config.python": ("a Python file: Python configs other than xtuner's and training scripts are not read; give the "
                      "YAML/JSON config or the shell script that launches the training",
                      "这是 Python 文件：除 xtuner 配置外，不读取 Python 配置和训练脚本；请给出 YAML/JSON 配置或启动训练的 "
                      "shell 脚本"),
    "config.torchtitan": ("a torchtitan config ({form}): torchtitan runs are not read yet",
                          "这是 torchtitan 配置（{form}）：暂不读取 torchtitan 的运行配置"),
    "config.torchtune_resolved": ("{where}: the config torchtune printed as it started {recipe} (every override "
                                  "applied); read as the run's config",
                                  "{where}：torchtune 启动 {recipe} 时打印的配置（已应用全部覆盖项）；按本次运行的配置读取"),
    "config.torchtune_header": ("{where}: the config's header runs it as `tune run {recipe}` on {n} GPUs; read "
                                "that as the GPU count (--gpus changes it)",
                                "{where}：配置文件开头的注释以 `tune run {recipe}` 在 {n} 张 GPU 上运行；按此读取 GPU 数"
                                "（可用 --gpus 修改）"),
    "config.lf_v1": ("an early LLaMA-Factory v1 draft (model: a mapping) is not supported; write model: as a hub "
                     "id or a path, as LLaMA-Factory's examples/v1 do, or use the flat YAML with model_name_or_path",
                     "不支持早期的 LLaMA-Factory v1 草案格式（model: 为映射）；请像 LLaMA-Factory 的 examples/v1 那样把 "
                     "model: 写成模型 ID 或路径，或使用带 model_name_or_path 的平铺 YAML"),
    "config.markdown_read": ("{where}: read from the Markdown it was pasted with ({how}); no patch is written into a "
                             "paste: save the code block as its own file to get one, or set the plan's values by hand",
                             "{where}：已去掉粘贴时带的 Markdown（{how}）后读取；不为粘贴内容生成补丁：把代码块单独保存成文件"
                             "即可生成补丁，或按方案手动修改这些值"),
    "config.python_read": ("{where}: read from the literal arguments of its TrainingArguments / TRL config, LoraConfig, "
                           "BitsAndBytesConfig, from_pretrained and trainer calls, without running it; no patch is "
                           "written into a Python script: set the plan's values by hand",
                           "{where}：未运行脚本，仅从 TrainingArguments / TRL 配置、LoraConfig、BitsAndBytesConfig、"
                           "from_pretrained 和 Trainer 调用的字面参数读取；不为 Python 脚本生成补丁：请按方案手动修改这些值"),
    "config.python_command": ("{where}: the launch command its string literals spell (adjacent strings joined, or a "
                              "list of arguments), read as the shell would run it; no patch is written into a Python "
                              "file: set the plan's values by hand",
                              "{where}：按其字符串字面量拼出的启动命令（相邻字符串拼接，或参数列表）读取，等同 shell 执行的命令；"
                              "不为 Python 文件生成补丁：请按方案手动修改这些值"),
    "config.axolotl_unfrozen_all": ("{where}: unfrozen_parameters leaves every decoder layer trainable: read as a "
                                    "full fine-tune", "{where}：unfrozen_parameters 使所有解码层都可训练：按全参微调处理"),
    "config.python_adapter_unseen": ("{where}: the base is loaded in {bits}-bit and the file makes no get_peft_model "
                                     "call; a purely quantised model is not fine-tuned (transformers refuses it), so "
                                     "an adapter with unsloth's defaults (r 16, alpha 16) is assumed",
                                     "{where}：基座以 {bits} 位加载，但文件中没有 get_peft_model 调用；纯量化模型无法微调"
                                     "（transformers 会拒绝），因此按 unsloth 的默认适配器（r 16，alpha 16）处理"),
    "config.torchtune_frozen_parts": ("{where}: the {parts} is frozen (no gradients, no optimizer state); the "
                                      "estimate still counts every weight as trained, so it is an upper bound",
                                      "{where}：{parts} 被冻结（无梯度、无优化器状态）；估算仍按全部权重参与训练计算，"
                                      "因此是上限"),
    "config.python_value": ("{where}: {key} is computed when the script runs; its default is used",
                            "{where}：{key} 要到脚本运行时才能确定；按默认值处理"),
    "config.lf_v1_read": ("{where}: read as the LLaMA-Factory v1 format (model, peft_config, quant_config, "
                          "dist_config, micro_batch_size, cutoff_len); no patch is written into a v1 file yet: set "
                          "the plan's values by hand",
                          "{where}：按 LLaMA-Factory v1 格式读取（model、peft_config、quant_config、dist_config、"
                          "micro_batch_size、cutoff_len）；暂不为 v1 文件生成补丁：请按方案手动修改这些值"),
    "config.no_model": ("no {key} in this training config", "训练配置中没有 {key}"),
    "config.torchtune_batch_required": ("batch_size is required in a torchtune recipe config",
                                        "torchtune recipe 配置必须设置 batch_size"),
    # ---- values of the wrong kind
    "config.not_a_bool": ("{key} must be true or false, got {value}", "{key} 必须是 true 或 false，实际是 {value}"),
    "config.not_a_scalar": ("{key} must be a single value, got a {kind}", "{key} 必须是单个值，实际是 {kind}"),
    "config.not_a_choice": ("{key} must be one of {choices}, got {value}", "{key} 必须是 {choices} 之一，实际是 {value}"),
    "config.foreign_value": ("{where}: {why}; this script's own parser may take it, so {key} keeps its default",
                             "{where}：{why}；该脚本自己的参数解析器可能接受这个值，因此 {key} 保持默认值"),
    "config.flag_assumed": ("{where}: read --{flag} as {field}, as HF-based training scripts commonly use it",
                            "{where}：按 HF 系训练脚本的常见用法，把 --{flag} 读作“{field}”"),
    "config.kind.seq": ("the sequence length", "样本截断长度"),
    "config.kind.rank": ("the LoRA rank", "LoRA 秩"),
    "config.kind.alpha": ("the LoRA alpha", "LoRA alpha"),
    "config.kind.targets": ("the LoRA target modules", "LoRA 目标模块"),
    "config.kind.use_lora": ("the LoRA switch", "LoRA 开关"),
    "config.kind.q_lora": ("the QLoRA switch", "QLoRA 开关"),
    "config.kind.full": ("the full fine-tuning switch", "全参数微调开关"),
    "config.kind.bits": ("the quantisation bits", "量化位数"),
    "config.kind.load4": ("4-bit loading", "4 位加载"),
    "config.kind.load8": ("8-bit loading", "8 位加载"),
    "config.kind.train_type": ("the fine-tuning method", "微调方式"),
    "config.kind.dtype": ("the load dtype", "加载精度"),
    "config.kind.flash": ("the FlashAttention switch", "FlashAttention 开关"),
    "config.kind.attn": ("the attention implementation", "注意力实现"),
    "config.kind.micro": ("the micro-batch size", "微批大小"),
    "config.kind.packing": ("sequence packing", "序列打包"),
    "config.kind.zero": ("the DeepSpeed ZeRO stage", "DeepSpeed ZeRO 阶段"),
    "config.kind.offload": ("ZeRO offload to CPU", "ZeRO 卸载到 CPU"),
    "config.kind.precision": ("the mixed-precision dtype", "混合精度类型"),
    "config.kind.prompt": ("the prompt length", "提示长度"),
    "config.kind.prefix": ("the P-tuning prefix length", "P-tuning 前缀长度"),
    "config.kind.stage": ("the training stage", "训练阶段"),
    "config.kind.backend": ("the tuner backend (unsloth)", "微调后端（unsloth）"),
    "config.kind.galore": ("the GaLore switch", "GaLore 开关"),
    "config.kind.gpus": ("the GPUs per node", "每节点 GPU 数"),
    "config.kind.nodes": ("the number of nodes", "节点数"),
    "config.ptuning": ("{where}: --{flag} is P-tuning v2: only a prefix encoder trains, estimated as a small LoRA "
                       "adapter on the frozen base", "{where}：--{flag} 表示 P-tuning v2：只训练前缀编码器，"
                       "按冻结基座上的小型 LoRA 适配器估算"),
    "config.ptuning_yaml": ("{where}: peft_type {kind} trains only its virtual tokens: estimated on the frozen base with "
                            "the sequence (prompt tuning, p-tuning) or the keys and values (prefix tuning) "
                            "num_virtual_tokens longer",
                            "{where}：peft_type {kind} 只训练虚拟 token：按冻结基座估算，序列（prompt tuning、p-tuning）"
                            "或键值（prefix tuning）加长 num_virtual_tokens 个位置"),
    "config.peft_as_lora": ("{where}: peft_type {kind} is estimated as plain LoRA at the configured rank and targets: "
                            "its own layout is not modelled",
                            "{where}：peft_type {kind} 按所配秩与目标模块的普通 LoRA 估算，未对其自身结构建模"),
    "config.trl_accelerate_shipped": ("{where}: {name} is not here; read as the accelerate config TRL ships under "
                                      "that path (8 processes, bf16, the ZeRO stage or FSDP its name says)",
                                      "{where}：{name} 不在此处；按 TRL 以该路径随附的 accelerate 配置读取"
                                      "（8 个进程、bf16，ZeRO 阶段或 FSDP 如其名称所示）"),
    "config.trl_no_model": ("this TRL config names no model (model_name_or_path): its script takes it from the "
                            "command line or its own code; give --model NAME",
                            "此 TRL 配置不含模型名（model_name_or_path）：其脚本从命令行或自身代码取得模型；"
                            "请用 --model NAME 指定"),
    "config.chatglm_no_model": ("this YAML names no model: {script} takes it on its command line (its second argument, "
                                "e.g. THUDM/chatglm3-6b); give --model NAME, or the script that runs it",
                                "此 YAML 不含模型名：{script} 从命令行（第二个参数，如 THUDM/chatglm3-6b）读取模型；"
                                "请用 --model NAME 指定，或给出运行它的脚本"),
    "config.kind.answer": ("the answer length", "回答长度"),
    "config.dschat_lora_full": ("{where}: --{flag} adds LoRA layers, but DeepSpeed-Chat still trains every weight "
                                "unless --only_optimize_lora is given: read as a full fine-tune",
                                "{where}：--{flag} 会加入 LoRA 层，但除非给出 --only_optimize_lora，DeepSpeed-Chat "
                                "仍训练全部权重：按全参数微调读取"),
    # ---- DeepSpeed
    "config.ds_not_found": ("DeepSpeed config {ref} not found (looked beside {config} and in the current directory)",
                            "找不到 DeepSpeed 配置 {ref}（已在 {config} 同目录和当前目录查找）"),
    "config.script.lora_by_name": ("{where}: {script} names no method among its flags; LoRA, as its name says",
                                   "{where}：{script} 的参数未指明训练方式；按脚本名称视为 LoRA"),
    "config.config_pasted": ("{where}: {ref} is not here; the config pasted below the command read as it",
                             "{where}：{ref} 不在此处；按命令下方粘贴的配置读取"),
    "config.ds_pasted": ("{where}: {ref} is not here; the DeepSpeed JSON pasted below the command read as it",
                         "{where}：{ref} 不在此处；按命令下方粘贴的 DeepSpeed JSON 读取"),
    "config.ds_shipped": ("{where}: {name} not found; used the framework's shipped {name}",
                          "{where}：找不到 {name}，按框架自带的 {name} 处理"),
    "config.json_mended": ("{where}: not JSON as pasted (Python's True/False/None, a trailing comma, members without "
                           "their braces, or cut off); read as mended, up to its last complete value",
                           "{where}：粘贴内容不是合法 JSON（Python 的 True/False/None、多余的逗号、缺少外层花括号或被截断）；"
                           "按修补后的内容读取，截断处只读到最后一个完整的值"),
    "config.labelled": ("{where}: the config pasted under \"{label}\" read as the file itself",
                        "{where}：粘贴在“{label}”标题下的配置按配置文件本身读取"),
    "config.yaml_cut": ("{where}: line {line} is cut off mid-line, a key before its value or a value inside its quotes "
                        "(the paste ends there); read without it",
                        "{where}：第 {line} 行不完整（粘贴在此行中途截断）；忽略该行读取"),
    "config.ds_missing_guess": ("{where}: {ref} is not here; ZeRO stage {stage} assumed from its name",
                                "{where}：{ref} 不在此处，按文件名推断为 ZeRO-{stage}"),
    "config.ds_missing_unknown": ("{where}: {ref} is not here and its name does not say the ZeRO stage; "
                                  "estimated without ZeRO (pass the JSON too)",
                                  "{where}：{ref} 不在此处，文件名也看不出 ZeRO 阶段；按不使用 ZeRO 估算（请一并提供该 JSON）"),
    "config.ds_inline": ("{where}: an inline DeepSpeed JSON on the command line is not read; "
                         "estimated without ZeRO", "{where}：命令行中内联的 DeepSpeed JSON 不会被读取，按不使用 ZeRO 估算"),
    "config.ds_offload_param_ignored": (
        "{where}: offload_param only works with ZeRO stage 3, so DeepSpeed ignores it at stage {stage}: "
        "parameters stay on the GPU",
        "{where}：offload_param 只在 ZeRO-3 下生效，ZeRO-{stage} 时 DeepSpeed 会忽略它：参数仍留在 GPU 上"),
    "config.ds_mismatch": ("{where}: {key} {value} disagrees with the training config's {other}; "
                           "the HF Trainer refuses to start on such a mismatch",
                           "{where}：{key} 为 {value}，与训练配置中的 {other} 不一致；HF Trainer 遇到这种不一致会拒绝启动"),
    "config.ds_alone": ("{where}: a DeepSpeed JSON alone names no model; pass the training config or --model",
                        "{where}：单独的 DeepSpeed JSON 不含模型名；请同时提供训练配置或 --model"),
    "config.ds_accum_derived": (
        "{where}: train_batch_size {total} with micro-batch {micro} means gradient accumulation {accum} on one GPU "
        "(DeepSpeed derives it); with more GPUs pass --gpus",
        "{where}：train_batch_size {total}、微批大小 {micro}，在单卡上意味着梯度累积 {accum}（由 DeepSpeed 推算）；"
        "多卡时请加 --gpus"),
    "config.ds_batch_mismatch": (
        "train_batch_size {total} is not a multiple of micro-batch {micro} × accumulation {accum}; "
        "DeepSpeed refuses to start", "train_batch_size {total} 不是微批大小 {micro} × 梯度累积 {accum} 的整数倍，DeepSpeed 会拒绝启动"),
    # ---- accelerate
    "config.accelerate_alone": ("{where}: an accelerate config names no model; give the training config too",
                                "{where}：accelerate 配置不含模型名；请同时提供训练配置"),
    # ---- LLaMA-Factory
    "config.lf_pure_bf16_zero3": ("{where}: pure_bf16 is refused by LLaMA-Factory under ZeRO-3",
                                  "{where}：LLaMA-Factory 不允许在 ZeRO-3 下使用 pure_bf16"),
    "config.lf_lora_target_required": (
        "{where}: LLaMA-Factory {version} requires lora_target for LoRA (no default yet); all linear layers assumed",
        "{where}：LLaMA-Factory {version} 做 LoRA 时必须设置 lora_target（当时没有默认值）；按全部线性层估算"),
    # ---- launch scripts
    "config.script.swift_megatron": ("`{command}` is Megatron-based ms-swift training, which oomdoctor does not support "
                                     "(it reads `swift sft`, `swift pt` and `swift rlhf` runs)",
                                     "`{command}` 是基于 Megatron 的 ms-swift 训练，oomdoctor 不支持"
                                     "（支持 `swift sft`、`swift pt`、`swift rlhf`）"),
    "config.script.rejoined": ("{where}: the lines that open with a flag have no `\\` before them (a paste that lost "
                               "its line continuations); read as one command, as the script was evidently meant",
                               "{where}：以参数开头的行前面没有续行符 `\\`（粘贴时丢了续行）；按脚本本意读作一条命令"),
    "config.script.prompt": ("{where}: the shell prompt before the command (a terminal paste) is not part of it; "
                             "read from the command on",
                             "{where}：命令前的终端提示符（从终端粘贴而来）不属于命令；从命令本身读起"),
    "config.paste_chars": ("{where}: {what} in the paste, read as the ASCII the file was typed in (a copy from a web "
                           "page or an app); shown, not patched",
                           "{where}：粘贴内容中有{what}，按文件原本输入的 ASCII 字符读取（从网页或应用复制而来）；只显示，不生成补丁"),
    "config.paste_char.nbsp": ("no-break spaces", "不换行空格"),
    "config.paste_char.zero_width": ("zero-width characters", "零宽字符"),
    "config.paste_char.quotes": ("typographic quotes (“ ” ‘ ’)", "弯引号（“ ” ‘ ’）"),
    "config.paste_char.colon": ("full-width colons after keys (：)", "键后的全角冒号（：）"),
    "config.paste_char.dash": ("dashes (—) where `--` opens a flag", "参数开头的 `--` 被替换成破折号（—）"),
    "config.paste_char.json": ("the file as one JSON string (its newlines `\\n` escapes)", "整个文件是一个 JSON 字符串（换行写成 `\\n`）"),
    "config.paste_char.html": ("HTML entities (`&quot;`, `&gt;`, …)", "HTML 实体（`&quot;`、`&gt;` 等）"),
    "config.script.headless": ("{where}: the paste starts at the flags, without the command that took them; read "
                               "as `{command}`, the one entry point these flags belong to",
                               "{where}：粘贴内容从参数开始，缺少接收这些参数的命令；按这些参数唯一所属的入口 `{command}` 读取"),
    "config.script.windows": ("{where}: a {shell} script: its line continuations and escapes read as that shell "
                              "writes them (PowerShell's backtick, cmd's caret; a backslash is a path's own)",
                              "{where}：这是 {shell} 脚本，续行符与转义符按该 shell 的写法读取（PowerShell 的反引号、cmd 的 ^；"
                              "反斜杠是路径本身的一部分）"),
    "config.script.no_command": (
        "no training command found in this script (looked for llamafactory-cli, torchrun, deepspeed, accelerate "
        "launch, python with training flags, tune run, axolotl, trl, swift)",
        "脚本中没有找到训练命令（查找了 llamafactory-cli、torchrun、deepspeed、accelerate launch、带训练参数的 python、"
        "tune run、axolotl、trl、swift）"),
    "config.script.unresolved": ("{where}: --{flag} is {word}, which the script only knows when it runs ({why}); "
                                 "its default is used",
                                 "{where}：--{flag} 的值是 {word}，脚本运行时才能确定（{why}）；按默认值处理"),
    "config.script.model_unknown": ("{where}: the model (--{flag}) is only known when the script runs; pass --model",
                                    "{where}：模型（--{flag}）要到脚本运行时才能确定；请用 --model 指定"),
    "config.script.gpus_all": ("{launcher} uses every GPU of the machine it runs on", "{launcher} 会使用所在机器上的全部 GPU"),
    "config.script.gpus_unknown": ("the GPU count {word} is only known when the script runs ({why})",
                                   "GPU 数量 {word} 要到脚本运行时才能确定（{why}）"),
    "config.script.gpus_note": ("{where}: {why}; one GPU assumed, pass --gpus N", "{where}：{why}；按单卡估算，请用 --gpus N 指定"),
    "config.script.data_parallel": ("one process over {n} visible GPUs: the HF Trainer replicates the model on "
                                    "each (DataParallel)", "单进程使用 {n} 张可见 GPU：HF Trainer 会在每张卡上复制一份模型（DataParallel）"),
    "config.script.gpus_said": ("{where}: {why}", "{where}：{why}"),
    "config.script.loop": ("{where}: the loop over {name} runs {count} trainings; the first one is read",
                           "{where}：对 {name} 的循环会跑 {count} 次训练；这里读取第一次"),
    "config.script.config_missing": ("{entry} trains with {config}, which is not here: give that file instead",
                                     "{entry} 使用的配置 {config} 不在此处：请改为提供该文件"),
    "config.script.config_overrides_only": ("{where}: its config {config} is not here; read from the command's "
                                            "key=value overrides, torchtune's defaults for the rest",
                                            "{where}：其配置 {config} 不在此处；按命令行中的 key=value 覆盖项读取，其余取 torchtune 默认值"),
    "config.script.config_unknown": ("the config file {word} is only known when the script runs ({why}): give that "
                                     "file instead", "配置文件 {word} 要到脚本运行时才能确定（{why}）：请改为提供该文件"),
    # ---- why a file was read as a framework's
    "config.why.torchtune_resolved": ("the config torchtune printed as it started (Running … with resolved config)",
                                      "torchtune 启动时打印的配置（Running … with resolved config）"),
    "config.why.deepspeed_printed": ("the config DeepSpeed printed as it started (config.py print)",
                                     "DeepSpeed 启动时打印的配置（config.py print）"),
    "config.why.xtuner": ("xtuner's Python config ({keys})", "xtuner 的 Python 配置（{keys}）"),
    "config.xtuner_python": ("{where}: an xtuner (mmengine) Python config, read from its top-level assignments "
                             "without running it; shown, not patched",
                             "{where}：xtuner（mmengine）Python 配置，按顶层赋值读取而不运行；只展示，不生成补丁"),
    "config.why.autotrain": ("AutoTrain's task and params ({keys})", "含 AutoTrain 的任务与参数（{keys}）"),
    "config.why.unsloth_studio": ("Unsloth Studio's groups ({keys})", "含 Unsloth Studio 的配置分组（{keys}）"),
    "config.unsloth_studio_model": ("{where}: no model key; {model} from the file's name, as Studio names its "
                                    "presets (org_model.yaml); give --model if it trains another",
                                    "{where}：无 model 键；按 Studio 预设的命名方式（org_model.yaml）从文件名得到 {model}；"
                                    "若训练的是其他模型请用 --model 指定"),
    "config.yaml_prompt": ("{where}: a shell prompt and the command that printed the file, above it in the paste; "
                           "the file read from the next line", "{where}：粘贴内容上方是打印该文件的 shell 提示符和命令；从下一行起读取该文件"),
    "config.python_comment": ("{where}: a `//` comment, another language's, read as the comment it was meant to be",
                              "{where}：`//` 是其他语言的注释写法，按注释读取"),
    "config.python_cut": ("{where}: the paste ends inside a call; its open brackets closed after this line",
                          "{where}：粘贴在函数调用中途结束；在此行之后补上未闭合的括号读取"),
    "config.python_literal": ("{where}: the config is the literal `{variable} = …` this Python file holds; read as that "
                              "file would be", "{where}：配置是该 Python 文件中的字面量 `{variable} = …`；按对应的配置文件读取"),
    "config.printed": ("{where}: a mapping the run printed of its own settings (its values are the ones it ran with); "
                       "read as the config it stands for",
                       "{where}：运行时打印出的自身设置（即实际使用的取值）；按其对应的配置读取"),
    "config.printed_cut": ("{where}: the printed settings are cut off; read up to the last complete entry",
                           "{where}：打印出的设置被截断；只读到最后一个完整的条目"),
    "config.hydra_overrides": ("{where}: the overrides of a failed Hydra job, as it printed them; read as that app's "
                               "command line (its name is not in the line)",
                               "{where}：按失败的 Hydra 作业打印出的覆盖项读取，视为该应用的命令行（该行未给出应用名）"),
    "config.yaml_python_string": ("{where}: the YAML is pasted inside a Python triple-quoted string; its quote lines "
                                  "are Python's, the lines between them the file",
                                  "{where}：YAML 粘贴在 Python 三引号字符串中；引号所在行属于 Python，其间各行才是配置文件"),
    "config.why.verl": ("verl's trainer config ({keys})", "含 verl 训练配置（{keys}）"),
    "config.verl_overrides_only": ("{where}: its config {config} is not here; read from the command's key=value "
                                   "overrides, verl's own defaults for the rest",
                                   "{where}：其配置 {config} 不在此处；按命令行中的 key=value 覆盖项读取，其余取 verl 默认值"),
    "config.verl_megatron": ("{where}: strategy {strategy} splits the model by Megatron-Core's tensor, pipeline and "
                             "expert parallelism: read with the sizes of the actor's megatron group",
                             "{where}：strategy {strategy} 按 Megatron-Core 的张量、流水线和专家并行切分模型；"
                             "按 actor 的 megatron 配置组中的并行大小估算"),
    "config.verl_dynamic_bsz": ("{where}: use_dynamic_bsz packs each micro-batch up to {tokens} tokens per GPU; the "
                                "estimate counts that budget where use_remove_padding packs the sequences, else the "
                                "micro-batch the file states",
                                "{where}：use_dynamic_bsz 按每卡最多 {tokens} 个 token 组装微批次；use_remove_padding "
                                "打包序列时按该预算估算，否则按配置中写明的样本数估算"),
    "config.why.mlx_lm": ("mlx-lm's LoRA config ({keys})", "含 mlx-lm LoRA 配置项（{keys}）"),
    "config.mlx_unified": ("{where}: mlx-lm trains on Apple silicon in unified memory shared with the system, with no "
                           "CUDA allocator: the estimate counts the tensors a step holds, not what Metal's working-set "
                           "limit (about 70-75% of RAM by default) allows",
                           "{where}：mlx-lm 在 Apple 芯片上使用与系统共享的统一内存训练，没有 CUDA 分配器：估算只计算一步训练所持有的张量，"
                           "不代表 Metal 工作集上限（默认约为内存的 70-75%）所允许的用量"),
    "config.why.swift_args": ("ms-swift's own argument names ({keys}): an args.json or `swift sft --config` file",
                              "含 ms-swift 自有参数名（{keys}）：args.json 或 `swift sft --config` 配置文件"),
    "config.why.lf_v1": ("LLaMA-Factory v1 keys ({keys})", "LLaMA-Factory v1 格式的键（{keys}）"),
    "config.why.llamafactory": ("LLaMA-Factory keys ({keys})", "LLaMA-Factory 特有的键（{keys}）"),
    "config.why.hf": ("HF TrainingArguments with {keys}", "含 {keys} 的 HF TrainingArguments"),
    "config.why.trl": ("TRL keys ({keys})", "TRL 特有的键（{keys}）"),
    "config.why.chatglm": ("ChatGLM3 / GLM-4 finetune_demo keys ({keys})", "ChatGLM3 / GLM-4 finetune_demo 配置的键（{keys}）"),
    "config.why.firefly": ("Firefly argument keys ({keys})", "Firefly 参数文件的键（{keys}）"),
    "config.why.litgpt": ("LitGPT config keys ({keys})", "LitGPT 配置的键（{keys}）"),
    "config.why.axolotl": ("axolotl's {keys}", "axolotl 的 {keys}"),
    "config.why.torchtune": ("a torchtune {keys} builder", "torchtune 的 {keys} 构建器"),
    "config.why.accelerate": ("accelerate launcher keys ({keys})", "accelerate 启动配置的键（{keys}）"),
    "config.why.deepspeed": ("DeepSpeed's {keys}", "DeepSpeed 的 {keys}"),
    "config.why.script": ("line {line} runs {entry}", "第 {line} 行运行 {entry}"),
    "config.why.python": ("a Python training script: its calls {calls} from line {line}",
                          "Python 训练脚本：从第 {line} 行起调用了 {calls}"),
    "config.why.script_config": ("line {line} runs {entry} with {config}: {why}", "第 {line} 行用 {config} 运行 {entry}：{why}"),
    "config.why.log": ("the training arguments printed in {log}", "{log} 中打印的训练参数"),
    # ---- which release's defaults, and why
    "config.version.flag": ("{version} from --framework-version", "{version}，来自 --framework-version"),
    "config.version.log": ("{version}, the {package} version the log's banner prints", "{version}，日志开头打印的 {package} 版本"),
    "config.version.implied_old": ("{version}: the file has {evidence}, which only releases up to {version} take",
                                   "{version}：文件中有 {evidence}，只有 {version} 及更早的版本才接受"),
    "config.version.implied_new": ("{version}: the file has {evidence}, which first appeared in {version}",
                                   "{version}：文件中有 {evidence}，该写法从 {version} 才出现"),
    "config.version.entry": ("{version}: {entry} only exists up to {version}", "{version}：{entry} 只存在于 {version} 及更早的版本"),
    "config.version.default": ("{version}, the newest release oomdoctor knows (--framework-version changes it)",
                               "{version}，oomdoctor 已知的最新版本（可用 --framework-version 修改）"),
    # ---- where a value of the setup came from (facts.Source.describe)
    "config.source.file": ("{where}", "{where}"),
    "config.source.key": ("{where} ({key})", "{where}（{key}）"),
    "config.source.why": ("{where}: {why}", "{where}：{why}"),
    # whose default filled a value, and why (a `note` that is a key or an expression is shown as written)
    "config.default.megatron_sp_without_tp": ("off: Megatron disables sequence parallelism without tensor "
                                              "parallelism", "关闭：未开启张量并行时 Megatron 会关闭序列并行"),
    "config.default.of": ("default of {framework}", "{framework} 的默认值"),
    "config.default.of_note": ("default of {framework} ({note})", "{framework} 的默认值（{note}）"),
    "config.default.mlx_dtype": ("the checkpoint's dtype: MLX has no autocast", "检查点自身的 dtype：MLX 没有自动混合精度"),
    "config.default.mlx_device": ("one Apple silicon device", "一台 Apple 芯片设备"),
    "config.default.missing": ("no {key}", "未设置 {key}"),
    "config.default.builder": ("the builder's {key}", "构建器的 {key}"),
    "config.default.call_arg": ("{arg} by default", "默认 {arg}"),
    "config.default.tt_trainer_bf16": ("bf16: the async GRPO trainer's fixed dtype", "bf16：异步 GRPO 训练器固定的精度"),
    "config.default.argparse": ("the script's default for {flag} (argparse)", "脚本中 {flag} 的默认值（argparse）"),
    "config.default.ds_unset": ("DeepSpeed default (no {key})", "DeepSpeed 的默认值（未设置 {key}）"),
    "config.default.ds_offload_param_ignored": ("DeepSpeed ignores offload_param below ZeRO-3",
                                                "ZeRO-3 以下 DeepSpeed 会忽略 offload_param"),
    "config.default.ds_shipped": ("{name} as the framework ships it (file not found here)",
                                  "按框架自带的 {name}（此处找不到该文件）"),
    "config.default.ds_bf16_auto": ("bf16.enabled is auto: assumed the run sets bf16",
                                    "bf16.enabled 为 auto：假定训练开启了 bf16"),
    "config.default.hf_fused_adamw": ("adamw_torch_fused when torch >= 2.8; same memory",
                                      "torch >= 2.8 时为 adamw_torch_fused，显存占用相同"),
    "config.default.hf_no_seq": ("no sequence length in TrainingArguments: the script decides; assumed {tokens}",
                                 "TrainingArguments 中没有序列长度，由脚本决定；按 {tokens} 估算"),
    "config.default.no_autocast": ("no bf16/fp16: no autocast", "未设置 bf16/fp16：不启用 autocast"),
    "config.default.orpo_hint": ("ORPO named at {where}", "{where} 指明为 ORPO"),
    "config.trl_orpo_hint": ("{where}: DPO-style keys (beta, max_prompt_length) in a file named for ORPO: read as "
                             "ORPO, a chosen/rejected pair with no reference model",
                             "{where}：以 ORPO 命名的文件中有 DPO 式的键（beta、max_prompt_length）：按 ORPO 读取，"
                             "即成对的 chosen/rejected 样本，没有参考模型"),
    "config.default.dpo_keys": ("DPO keys ({keys}) present", "配置中有 DPO 特有的键：{keys}"),
    "config.default.grpo_keys": ("GRPO keys ({keys}) present: one prompt + completion per sample",
                                 "配置中有 GRPO 特有的键（{keys}）：每个样本一条提示 + 生成"),
    "config.trl_grpo": ("{where}: a GRPO run, estimated as training on prompt + completion ({tokens} tokens) "
                        "without a reference model; the memory of generating the completions (vLLM or "
                        "model.generate) is not counted",
                        "{where}：这是 GRPO 训练，按提示 + 生成（{tokens} 个 token）的训练、无参考模型估算；"
                        "生成补全本身（vLLM 或 model.generate）占用的显存未计入"),
    "config.default.trl_grad_ckpt": ("gradient_checkpointing is on since TRL {version}",
                                     "TRL {version} 起 gradient_checkpointing 默认开启"),
    "config.default.trl_fp32_load": ("a model given by name loads in float32", "按名称给出的模型以 float32 加载"),
    "config.default.no_adapter": ("no adapter", "未设置 adapter"),
    "config.default.litgpt_strategy": ("LitGPT's strategy for {n} devices", "LitGPT 在 {n} 个设备上的策略"),
    "config.default.axolotl_lora_r": ("lora_r has no default in axolotl; assumed {rank}",
                                      "axolotl 中 lora_r 没有默认值；按 {rank} 估算"),
    "config.default.axolotl_seq_old": ("sequence_len had no default before 0.5; assumed {tokens}",
                                       "0.5 之前 sequence_len 没有默认值；按 {tokens} 估算"),
    "config.default.transformers_attention": ("transformers' default attention", "transformers 的默认注意力实现"),
    "config.default.lf_no_autocast": ("no bf16/fp16: no autocast; weights load in the GPU's best half dtype",
                                      "未设置 bf16/fp16：不启用 autocast；权重以显卡支持的最佳半精度加载"),
    "config.default.lf_packing": ("packing is on for stage pt only", "只有 stage 为 pt 时默认开启 packing"),
    "config.default.lf_flash_auto": ("flash_attn: auto keeps transformers' sdpa",
                                     "flash_attn: auto 沿用 transformers 的 sdpa"),
    "config.default.tt_seq_old": ("dataset.max_seq_len: {tokens} in the alpaca-style builders up to 0.2",
                                  "0.2 及更早版本的 alpaca 类构建器中 dataset.max_seq_len 为 {tokens}"),
    "config.default.tt_no_truncation": (
        "tokenizer.max_seq_len null: no truncation, the longest sample decides; assumed {tokens}",
        "tokenizer.max_seq_len 为 null：不截断，由最长的样本决定；按 {tokens} 估算"),
    "config.default.litgpt_seq": (
        "train.max_seq_length unset: the longest sample decides (up to the model's block size); assumed {tokens}",
        "未设置 train.max_seq_length：由最长的样本决定（不超过模型的 block size）；按 {tokens} 估算"),
    "config.default.tt_dtype": ("dtype unset: fp32 (training.get_dtype)", "未设置 dtype：fp32（training.get_dtype）"),
    "config.default.tt_sdpa": ("torchtune attention uses scaled_dot_product_attention",
                               "torchtune 的注意力使用 scaled_dot_product_attention"),
    # ---- training entry points named in reasons and provenance (the others are program names)
    "config.entry.hf_examples": ("HF examples run_clm.py", "HF 示例脚本 run_clm.py"),
    "config.entry.trl": ("TRL command line", "TRL 命令行"),
    "config.entry.script": ("a training script", "训练脚本"),
}
