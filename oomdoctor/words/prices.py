"""Words for the prices file (--prices): card -> price per card-hour."""
from __future__ import annotations

WORDS = {
    "prices.no_such_file": ("no such prices file", "找不到价格文件"),
    "prices.empty": ("the prices file is empty: write one line per card, e.g. 'H100: 2.99'",
                     "价格文件为空：每张卡写一行，例如 'H100: 2.99'"),
    "prices.not_mapping": ("the prices file must be a mapping of card -> price per hour",
                           "价格文件必须是“卡 -> 每小时价格”的映射"),
    "prices.nested_not_mapping": ("'prices' must be a mapping of card -> price per hour",
                                  "'prices' 必须是“卡 -> 每小时价格”的映射"),
    "prices.card_not_text": ("a card name must be plain text", "卡名必须是纯文本"),
    "prices.currency": ("currency must be a short text such as USD or CNY", "currency 必须是简短的文本，例如 USD 或 CNY"),
    "prices.not_scalar": ("{card}: the price must be a number per card-hour", "{card}：价格必须是每卡每小时的数值"),
    "prices.unknown_card": ("unknown card {card} (names as for --gpu: A100-80GB, H100, RTX4090, ...)",
                            "未知的卡 {card}（名称写法与 --gpu 相同：A100-80GB、H100、RTX4090 等）"),
    "prices.duplicate": ("{card} is {name}, already priced on line {line}", "{card} 即 {name}，已在第 {line} 行定价"),
    "prices.not_a_number": ("price {value} is not a number (write the price per card-hour, e.g. 1.89)",
                            "价格 {value} 不是数字（请写每卡每小时的价格，例如 1.89）"),
    "prices.out_of_range": ("price {value} must be a finite number >= 0", "价格 {value} 必须是 >= 0 的有限数"),
    "prices.no_cards": ("the prices file names no card", "价格文件中没有任何卡"),
}
