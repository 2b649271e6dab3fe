"""--markdown: the report as GitHub-flavoured Markdown, checked by parsing it (markdown-it-py, tables on)."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.cli import main

markdown_it = pytest.importorskip("markdown_it")

DATA = Path(__file__).parent / "data"
# The demo's own crash and config: a crash is a floor under the estimate of the run that crashed, so the log
# and the config must be of the same run.
DEMO = Path(__file__).parents[1] / "oomdoctor" / "data" / "demo"
LOG = DEMO / "train.log"
CONFIG = DEMO / "train.yaml"


def _parse(text: str):
    return markdown_it.MarkdownIt("commonmark").enable("table").parse(text)


def _markdown(capsys, *args: str) -> tuple[int, str]:
    code = main([str(LOG), str(CONFIG), "--markdown", *args])
    out, _ = capsys.readouterr()
    return code, out


def _tables(tokens) -> list[list[list[str]]]:
    """Each table as rows of cell texts (header row first)."""
    tables, rows, row, cell = [], None, None, None
    for t in tokens:
        if t.type == "table_open":
            rows = []
        elif t.type == "tr_open":
            row = []
        elif t.type in ("th_open", "td_open"):
            cell = ""
        elif t.type == "inline" and cell is not None:
            cell += t.content
        elif t.type in ("th_close", "td_close"):
            row.append(cell)
            cell = None
        elif t.type == "tr_close":
            rows.append(row)
        elif t.type == "table_close":
            tables.append(rows)
    return tables


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_markdown_report_parses_into_headings_tables_and_a_diff_block(capsys, lang):
    code, text = _markdown(capsys, "--lang", lang)
    assert code == 1
    tokens = _parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    words = {"en": ["oomdoctor report", "Environment", "Crash", "Memory per GPU (estimate)", "Plan", "Config patch"],
             "zh": ["oomdoctor 报告", "环境", "崩溃", "每张 GPU 的显存（估算）", "方案", "配置补丁"]}[lang]
    assert headings[:len(words)] == words
    tables = _tables(tokens)
    memory = next(t for t in tables if len(t) >= 8 and len(t[0]) == 2 and t[0][1] == "GiB")
    assert len(memory) == 1 + 6 + 2 and all(len(r) == 2 for r in memory)
    plan = next(t for t in tables if t[0][0] == "#")
    assert len(plan) >= 2 and all(len(r) == 5 for r in plan)
    fences = {t.info: t.content for t in tokens if t.type == "fence"}
    assert "+deepspeed: ds_z2_offload_config.json" in fences["diff"] and fences["diff"].startswith("--- a/")
    assert "torch.OutOfMemoryError: CUDA out of memory" in fences["text"]


def test_markdown_table_cells_escape_pipes():
    from oomdoctor.views.markdown import _row, _table

    rows = _tables(_parse("\n".join(_table(["a", "b"], [["x | y", "1"]])) + "\n"))
    assert rows == [[["a", "b"], ["x | y", "1"]]]
    assert _row(["a|b"]) == "| a\\|b |"


def test_markdown_fence_outgrows_backticks_in_the_body():
    from oomdoctor.views.markdown import _fence

    body = "``` not the end\nstill inside"
    tokens = _parse("\n".join(_fence(body)) + "\n")
    assert [t.content for t in tokens if t.type == "fence"] == [body + "\n"]


def test_markdown_and_json_together_are_a_usage_error(capsys):
    code = main([str(CONFIG), "--markdown", "--json"])
    assert code == 2
    assert "--markdown cannot be combined with --json" in capsys.readouterr().err
