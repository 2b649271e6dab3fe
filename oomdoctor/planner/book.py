"""Where the rule book comes from: the default rules/ directory, plus the user's --rules directories."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from oomdoctor.planner.rules import RuleBook
from oomdoctor.planner.validate import build_book

_DEFAULT_BOOK: RuleBook | None = None


def default_rules_dir() -> Path:
    """The repo's rules/ in a source checkout, else the copy shipped inside the wheel."""
    root = Path(__file__).resolve().parents[2]
    # A pyproject.toml beside it tells a source checkout from some unrelated rules/ above site-packages.
    if (root / "rules").is_dir() and (root / "pyproject.toml").is_file():
        return root / "rules"
    from importlib import resources
    return Path(str(resources.files("oomdoctor") / "rules"))


def load_rules(extra_dirs: Sequence[str] = ()) -> RuleBook:
    """The default ladder, with the rules of each extra directory (or file) added or overriding by id."""
    global _DEFAULT_BOOK
    if not extra_dirs:
        # The default files do not change while the program runs; read and validate them once.
        if _DEFAULT_BOOK is None:
            _DEFAULT_BOOK = build_book([default_rules_dir()])
        return _DEFAULT_BOOK
    return build_book([default_rules_dir(), *(Path(d) for d in extra_dirs)])


def load_default_book(rules: RuleBook | None) -> RuleBook:
    """The book a caller gave, else the default ladder."""
    return rules if rules is not None else load_rules()
