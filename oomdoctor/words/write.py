"""Words for what oomdoctor writes: --export, --write, --apply, and the report on stdout."""
from __future__ import annotations

WORDS = {
    # refusals before anything is written
    "write.output_is_input": ("is also an input ({input}): refusing to write over it; choose another file",
                              "它同时也是输入文件（{input}）：拒绝覆盖；请换一个文件"),
    "write.output_twice": ("would be written twice (as {first} and as {second}): choose another path",
                           "会被写入两次（作为 {first} 和 {second}）：请换一个路径"),
    "write.role_export": ("the --export diff", "--export 的 diff"),
    "write.role_copy": ("a patched copy of {source}", "{source} 的修改副本"),
    "write.copy_over_original": ("refusing to write a patched copy over an original; choose another directory",
                                 "拒绝用修改后的副本覆盖原文件；请换一个目录"),
    "write.read_only": ("is read-only: left unchanged (make it writable, or use --write DIR for patched copies)",
                        "文件是只读的：未做修改（请先设为可写，或用 --write DIR 生成修改后的副本）"),
    "write.hard_linked": ("has {links} hard links: replacing it would leave the other names with the old text; "
                          "left unchanged (use --write DIR)",
                          "文件有 {links} 个硬链接：替换它会让其他链接仍是旧内容；未做修改（请用 --write DIR）"),
    "write.foreign_owner": ("belongs to another user or group ({owner}): replacing it would change its owner; "
                            "left unchanged (use --write DIR)",
                            "文件属于其他用户或用户组（{owner}）：替换它会改变所有者；未做修改（请用 --write DIR）"),
    "write.symlink_target": ("is a symbolic link: refusing to write through it; remove it or choose another path",
                             "这是一个符号链接：拒绝通过它写入；请删除它或换一个路径"),
    "write.read_only_target": ("is read-only: refusing to replace it; choose another path",
                               "文件是只读的：拒绝替换；请换一个路径"),
    "write.not_regular": ("is not a regular file: left unchanged", "不是普通文件：未做修改"),
    "write.changed": ("changed since it was read; not overwritten (run oomdoctor again)",
                      "读取之后文件已被修改；未覆盖（请重新运行 oomdoctor）"),
    "write.busy": ("is being changed by another run of oomdoctor right now; not overwritten (run again when it "
                   "has finished)",
                   "另一个 oomdoctor 进程正在修改这个文件；未覆盖（等它结束后再运行）"),
    "write.already_applied": ("nothing changed: the files already hold this plan's changes",
                              "没有做任何修改：这些文件已经包含本方案的修改"),
    "write.created_meanwhile": ("was created by someone else since the plan was made; not overwritten",
                                "制定方案之后该文件已被他人创建；未覆盖"),
    # the patch: a key that cannot be set where the file is
    "write.no_file_to_edit": ("no such file (and the edit does not create it)", "没有这个文件（而且此修改不会创建它）"),
    "write.top_level": ("the top level", "顶层"),
    "write.yaml_not_mapping": ("cannot set {key}: {where} is not a mapping", "无法设置 {key}：{where} 不是映射"),
    "write.json_not_object": ("cannot set {key}: {where} is not an object", "无法设置 {key}：{where} 不是对象"),
    "write.value_is_alias": ("cannot edit {key}: its value is an alias", "无法修改 {key}：它的值是一个别名"),
    "write.shell_nested": ("cannot set nested key {key} in a shell command line", "无法在 shell 命令行中设置嵌套键 {key}"),
    "write.shell_no_flags": ("no command-line flags found to add --{name} next to",
                             "找不到可以在旁边加上 --{name} 的命令行参数"),
    # what the DeepSpeed JSON scanner of the patch says is wrong (inside input.json_syntax)
    "write.json_problem.extra_text": ("extra text after the top-level value", "顶层值之后还有多余的文本"),
    "write.json_problem.too_deep": ("nested too deeply", "嵌套层数过深"),
    "write.json_problem.expected_key": ("expected a quoted key", "此处应是带引号的键"),
    "write.json_problem.expected_colon": ("expected ':' after a key", "键之后应是 ':'"),
    "write.json_problem.expected_comma_brace": ("expected ',' or the closing brace", "此处应是 ',' 或右花括号"),
    "write.json_problem.expected_comma_bracket": ("expected ',' or the closing bracket", "此处应是 ',' 或右方括号"),
    "write.json_problem.bad_string": ("bad string", "字符串有误"),
    "write.json_problem.expected_value": ("expected a value", "此处应是一个值"),
    "write.json_problem.end_of_file": ("unexpected end of file", "文件意外结束"),
    # the shell snippet of --export (comments in a script the user sources)
    "write.snippet_header": ("# oomdoctor: run these lines (or source this file) before launching training",
                             "# oomdoctor：启动训练前先运行这几行（或 source 这个文件）"),
    "write.snippet_launch": ("# launch command:", "# 启动命令："),
    # failures while writing
    "write.cannot_write": ("cannot write: {reason}", "无法写入：{reason}"),
    "write.failed_nothing_changed": ("cannot write: {reason}; no file was changed",
                                     "无法写入：{reason}；没有任何文件被修改"),
    "write.rollback_failed": ("cannot write: {reason}, and {other} could not be put back ({detail}): its "
                              "original is {original}",
                              "无法写入：{reason}，并且 {other} 未能恢复（{detail}）：原文件在 {original}"),
    "write.stdout_failed": ("cannot write the report to standard output: {reason}", "无法把报告写到标准输出：{reason}"),
    "write.stdout_failed_not_applied": ("cannot write the report to standard output: {reason}; --apply was not "
                                        "carried out, no file was changed",
                                        "无法把报告写到标准输出：{reason}；--apply 没有执行，没有任何文件被修改"),
    # what the CLI says it did
    "write.nothing_to_export": ("nothing to export: the plan changes no file", "没有可导出的内容：方案不修改任何文件"),
    "write.wrote_diff": ("wrote the diff to {path} (apply with: {command})", "已把 diff 写入 {path}（应用方法：{command}）"),
    "write.wrote_copies": ("wrote {n} patched file{n:plural::s} into {folder}", "已把 {n} 个修改后的文件写入 {folder}"),
    "write.updated": ("updated {path} (the original is kept as {backup})", "已更新 {path}（原文件保留为 {backup}）"),
    "write.updated_created": ("created {path}", "已创建 {path}"),
    "write.nothing_changed": ("nothing changed", "没有做任何修改"),
    "write.needs_yes": ("--apply needs a yes: run it in a terminal, or add --yes",
                        "--apply 需要确认：请在终端中运行，或加上 --yes"),
    "write.ask": ("Apply these changes to your files? [y/N] ", "把这些修改应用到你的文件吗？[y/N] "),
    "write.json_and_stdout_diff": ("--json and --export - both write to standard output: the JSON already holds "
                                   "the diff as \"patch\"; give --export a file name",
                                   "--json 与 --export - 都会写到标准输出：JSON 的 \"patch\" 字段已包含 diff；"
                                   "请给 --export 指定文件名"),
}
