"""The user's prices: a YAML file of card -> price per card per hour, in any one currency.

    currency: USD          # optional, shown beside the costs
    A100-80GB: 1.89
    H100: 2.99
    "RTX 4090": 0.44

The cards may also sit under a `prices:` key. Card names are read like --gpu. None are bundled.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from oomdoctor.errors import InputError


@dataclass(frozen=True)
class Prices:
    per_hour: Mapping[str, float] = field(default_factory=dict)    # catalog card name -> price per card-hour
    currency: str = ""
    file: str = ""

    def of(self, card: str) -> float | None:
        return self.per_hour.get(card)


def _number(node, path: str) -> float:
    text = str(node.value).strip()
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise InputError(f"price {text!r} is not a number (write the price per card-hour, e.g. 1.89)",
                         path, node.start_mark.line + 1) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"price {text!r} must be a finite number >= 0", path, node.start_mark.line + 1)
    return value


def load_prices(path: str) -> Prices:
    import yaml

    from oomdoctor.advise.cards import spec_of

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise InputError("no such prices file", path) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the prices file: {getattr(err, 'strerror', None) or err}", path) from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(err, 'problem', None) or err}", path,
                         mark.line + 1 if mark else None) from None
    if root is None:
        raise InputError("the prices file is empty: write one line per card, e.g. 'H100: 2.99'", path)
    if not isinstance(root, yaml.MappingNode):
        raise InputError("the prices file must be a mapping of card -> price per hour", path,
                         root.start_mark.line + 1)
    currency = ""
    entries = root.value
    for key, value in list(entries):
        if isinstance(key, yaml.ScalarNode) and key.value == "prices":
            if not isinstance(value, yaml.MappingNode):
                raise InputError("'prices' must be a mapping of card -> price per hour", path,
                                 value.start_mark.line + 1)
            entries = [kv for kv in entries if kv[0] is not key] + list(value.value)
            break
    per_hour: dict[str, float] = {}
    where: dict[str, int] = {}
    for key, value in entries:
        line = key.start_mark.line + 1
        if not isinstance(key, yaml.ScalarNode):
            raise InputError("a card name must be plain text", path, line)
        if key.value == "currency":
            if not isinstance(value, yaml.ScalarNode) or not str(value.value).strip():
                raise InputError("currency must be a short text such as USD or CNY", path, line)
            currency = str(value.value).strip()
            continue
        if not isinstance(value, yaml.ScalarNode) or value.tag.endswith(":null"):
            raise InputError(f"{key.value}: the price must be a number per card-hour", path, line)
        spec = spec_of(str(key.value))
        if spec is None:
            raise InputError(f"unknown card {key.value!r} (names as for --gpu: A100-80GB, H100, RTX4090, ...)",
                             path, line)
        if spec.name in per_hour:
            raise InputError(f"{key.value!r} is {spec.name}, already priced on line {where[spec.name]}", path, line)
        per_hour[spec.name] = _number(value, path)
        where[spec.name] = line
    if not per_hour:
        raise InputError("the prices file names no card", path)
    return Prices(per_hour=per_hour, currency=currency, file=path)
