"""Words of the Markdown report (`--markdown`)."""
from __future__ import annotations

WORDS = {
    "markdown.title": ("oomdoctor report", "oomdoctor 报告"),
    "markdown.made_by": ("Made by oomdoctor {version}; paste it into an issue as it is.",
                         "由 oomdoctor {version} 生成；可原样贴到 issue 中。"),
    "markdown.environment": ("Environment", "环境"),
    "markdown.framework": ("Framework", "框架"),
    "markdown.versions": ("Versions (from the log)", "版本（来自日志）"),
    "markdown.allocated": ("allocated (torch max)", "已分配（torch 最大值）"),
    "markdown.peak": ("peak on device", "设备峰值"),
    "markdown.plan": ("Plan", "方案"),
    "markdown.saves_gib": ("saves GiB", "节省 GiB"),
    "markdown.patch": ("Config patch", "配置补丁"),
    "markdown.overrides": ("Command overrides", "命令行覆盖项"),
    "markdown.env": ("Environment variables", "环境变量"),
    "markdown.timeline": ("GPU memory timeline", "显存时间线"),
    "markdown.card": ("card", "显卡"),
    "markdown.peak_gib": ("peak GiB", "峰值 GiB"),
    "markdown.peak_at": ("at s", "时刻（秒）"),
    "markdown.others_gib": ("others GiB", "其他进程 GiB"),
    "markdown.total_gib": ("total GiB", "总量 GiB"),
}
