"""Words for bad input: values, files, flags."""
from __future__ import annotations

WORDS = {
    "input.not_a_number": ("{key} must be a number, got {value}", "{key} 必须是数字，实际是 {value}"),
    "input.not_an_integer": ("{key} must be an integer, got {value}", "{key} 必须是整数，实际是 {value}"),
    "input.not_finite": ("{key} must be a finite number, got {value}", "{key} 必须是有限的数，实际是 {value}"),
    "input.too_large": ("{key} is too large to be real: {value}", "{key} 太大，不可能是真实值：{value}"),
    "input.below_minimum": ("{key} must be at least {minimum}, got {value}",
                            "{key} 至少应为 {minimum}，实际是 {value}"),
    "input.above_maximum": ("{key} must be at most {maximum}, got {value}",
                            "{key} 至多应为 {maximum}，实际是 {value}"),
    "input.cannot_read": ("cannot read: {reason}", "无法读取：{reason}"),
    "input.no_such_file": ("no such file", "没有这个文件"),
    "input.not_utf8": ("not UTF-8 text", "不是 UTF-8 文本"),
    "input.is_directory": ("is a directory, not a file", "这是一个目录，不是文件"),
    "input.too_big": ("larger than {limit_mib} MiB: too big to be this kind of file",
                      "超过 {limit_mib} MiB，不可能是这类文件"),
    "input.yaml_syntax": ("YAML syntax error: {problem}", "YAML 语法错误：{problem}"),
    "input.json_syntax": ("JSON syntax error: {problem}", "JSON 语法错误：{problem}"),
    "input.json_constant": ("{name} is not a number JSON allows", "{name} 不是 JSON 允许的数值"),
    "input.too_deep": ("nested too deeply (more than {depth} levels)", "嵌套层数过深（超过 {depth} 层）"),
    "input.too_many_aliases": ("YAML aliases expand to more than {nodes} values (an alias bomb?)",
                               "YAML 别名展开后超过 {nodes} 个值（可能是别名炸弹）"),
    "input.alias_cycle": ("a YAML alias refers to itself", "YAML 别名引用了自身"),
}
