"""The import graph of oomdoctor keeps its layers, and has no cycle.

    facts (records, lazyre) <- words <- errors, values <- the domain packages (crash log, configs, models and
    checkpoints, memory, planner, patch, advise, simulate, pipeline, session) <- views <- guide <- tui <- run
    <- cli

A module may import its own layer and the layers below it, never one above (so nothing imports the CLI
back, and only the app imports Textual). Every import counts, the ones inside functions too: a lazy
import is still a dependency. Read from the source with ast, so no module has to be importable here.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "oomdoctor"

# Lowest first. A module belongs to the first layer with a prefix that is its name or a package above it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("facts", ("oomdoctor", "oomdoctor.records", "oomdoctor.facts", "oomdoctor.lazyre",
               # standard library only: shell quoting for every shown command
               "oomdoctor.shellsafe", "oomdoctor.textcodec")),
    ("words", ("oomdoctor.words",)),
    ("errors", ("oomdoctor.errors", "oomdoctor.values", "oomdoctor.interrupts")),
    ("domain", ("oomdoctor.crashlog", "oomdoctor.configs", "oomdoctor.models", "oomdoctor.archs", "oomdoctor.features",
                "oomdoctor.metacount",
                "oomdoctor.checkpoint", "oomdoctor.bounded", "oomdoctor.lined", "oomdoctor.gpus",
                "oomdoctor.memory", "oomdoctor.calibrate", "oomdoctor.planner", "oomdoctor.patch",
                "oomdoctor.advise", "oomdoctor.simulate", "oomdoctor.pipeline", "oomdoctor.session",
                "oomdoctor.demo", "oomdoctor.diagnosis", "oomdoctor.knownbugs")),
    ("views", ("oomdoctor.views",)),
    ("guide", ("oomdoctor.guide",)),
    ("tui", ("oomdoctor.tui",)),
    # `oomdoctor run`: launches a command and reports through the views (and the app, with --tui)
    ("run", ("oomdoctor.run",)),
    ("cli", ("oomdoctor.cli", "oomdoctor.__main__")),
)

# Cycles known and owned elsewhere, each with who removes it (none today: the configs readers' circle
# went with the configs registry). A merge that brings one back lists it here with its owner, or fails.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The oomdoctor modules `name` imports (a `from package import submodule` counts as the submodule)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "oomdoctor")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "oomdoctor":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in MODULES else target)
    out.discard(name)
    return {m for m in out if m in MODULES}


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Every module's imports, parsed once, when a test first asks (not when the module is collected: every xdist
    worker and every CPython session collects it, and only one runs these tests)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def layer_of(module: str) -> int:
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "oomdoctor" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[1]:
                    best = (index, len(prefix))
    assert best is not None, f"{module} is in no layer: add it to LAYERS in tests/test_layers.py"
    return best[0]


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_imports_only_its_own_layer_and_below(module):
    mine = layer_of(module)
    upward = sorted(f"{m} ({LAYERS[layer_of(m)][0]})" for m in _graph()[module] if layer_of(m) > mine)
    assert not upward, f"{module} ({LAYERS[mine][0]}) imports a layer above it: {', '.join(upward)}"


def test_the_package_has_no_import_cycle_but_the_known_ones():
    cycles = [sorted(c) for c in _cycles(_graph()) if c not in KNOWN_CYCLES]
    assert not cycles, f"import cycles: {cycles}"
    assert all(known in _cycles(_graph()) for known in KNOWN_CYCLES), "a known cycle is gone: drop it from KNOWN_CYCLES"


def test_words_import_nothing_but_facts():
    below = {m for name in MODULES if name.startswith("oomdoctor.words") for m in _graph()[name]}
    assert {m for m in below if not m.startswith("oomdoctor.words")} <= {"oomdoctor.facts", "oomdoctor.lazyre"}


def test_the_graph_reader_sees_lazy_and_relative_imports():
    tree = {"oomdoctor.cli": _graph()["oomdoctor.cli"], "oomdoctor.tui": _graph()["oomdoctor.tui"]}
    assert "oomdoctor.tui" in tree["oomdoctor.cli"]              # imported inside _main
    assert "oomdoctor.tui.app" in tree["oomdoctor.tui"]          # imported inside run()
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
