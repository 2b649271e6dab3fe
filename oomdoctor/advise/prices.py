"""The user's prices: a YAML file of card -> price per card per hour, in any one currency.

    currency: USD          # optional, shown beside the costs
    A100-80GB: 1.89
    H100: 2.99
    "RTX 4090": 0.44

The cards may also sit under a `prices:` key. Card names are read like --gpu. None are bundled.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import msg

# A prices file is a few lines; 1 MiB leaves room for comments while /dev/zero or a stray log stops here.
MAX_PRICES_BYTES = 1 << 20
# Dearer than any card-hour ever sold, in any currency: beyond it the number is a typo.
MAX_PRICE = 1e9


@dataclass(frozen=True)
class Prices:
    per_hour: Mapping[str, float] = field(default_factory=dict)    # catalog card name -> price per card-hour
    currency: str = ""
    file: str = ""

    def of(self, card: str) -> float | None:
        return self.per_hour.get(card)


def _number(node, path: str) -> float:
    from oomdoctor.values import BadValue, as_float

    text = str(node.value).strip()
    try:
        return as_float(text, "price", minimum=0, maximum=MAX_PRICE)
    except BadValue as bad:
        code = "prices.not_a_number" if bad.message.code == "input.not_a_number" else "prices.out_of_range"
        raise InputError(msg(code, value=repr(text)), path, node.start_mark.line + 1) from None


def _read_root(path: str) -> Any:
    """The prices file's top mapping node, read within the size cap."""
    import os

    import yaml

    from oomdoctor.bounded import read_utf8
    from oomdoctor.lined import read_yaml

    if not os.path.lexists(path):
        raise InputError(msg("prices.no_such_file"), path)
    text = read_utf8(path, MAX_PRICES_BYTES)          # never waits on a FIFO; /dev/zero stops at the cap
    root = read_yaml(text, path, data=False).root     # alias bombs and cycles refused with the line
    if root is None:
        raise InputError(msg("prices.empty"), path)
    if not isinstance(root, yaml.MappingNode):
        raise InputError(msg("prices.not_mapping"), path, root.start_mark.line + 1)
    return root


def load_prices(path: str) -> Prices:
    import yaml

    from oomdoctor.advise.cards import spec_of

    root = _read_root(path)
    currency = ""
    entries = root.value
    for key, value in list(entries):
        if isinstance(key, yaml.ScalarNode) and key.value == "prices":
            if not isinstance(value, yaml.MappingNode):
                raise InputError(msg("prices.nested_not_mapping"), path, value.start_mark.line + 1)
            entries = [kv for kv in entries if kv[0] is not key] + list(value.value)
            break
    per_hour: dict[str, float] = {}
    where: dict[str, int] = {}
    for key, value in entries:
        line = key.start_mark.line + 1
        if not isinstance(key, yaml.ScalarNode):
            raise InputError(msg("prices.card_not_text"), path, line)
        if key.value == "currency":
            # Shown beside every cost: a short printable word, never a terminal escape.
            if not isinstance(value, yaml.ScalarNode) or not value.value.strip() or len(value.value) > 16 \
                    or not value.value.isprintable():
                raise InputError(msg("prices.currency"), path, line)
            currency = str(value.value).strip()
            continue
        if not isinstance(value, yaml.ScalarNode) or value.tag.endswith(":null"):
            raise InputError(msg("prices.not_scalar", card=key.value), path, line)
        spec = spec_of(str(key.value))
        if spec is None:
            raise InputError(msg("prices.unknown_card", card=repr(key.value)), path, line)
        if spec.name in per_hour:
            raise InputError(msg("prices.duplicate", card=repr(key.value), name=spec.name, line=where[spec.name]),
                             path, line)
        per_hour[spec.name] = _number(value, path)
        where[spec.name] = line
    if not per_hour:
        raise InputError(msg("prices.no_cards"), path)
    return Prices(per_hour=per_hour, currency=currency, file=path)
