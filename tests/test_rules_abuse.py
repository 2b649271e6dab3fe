"""Hostile rule files: alias bombs, alias cycles, numbers that are not numbers, rules that
would fire without end or set an impossible value. Each is one line naming the file and line, exit 2,
or bounded work; none hangs and none reaches an internal error."""
from __future__ import annotations

from pathlib import Path

import pytest
from deadline import within

from oomdoctor.errors import InputError
from oomdoctor.planner import fire, load_rules, make_plan
from oomdoctor.words import say

RULE = """\
  - id: {id}
    slug: {slug}
    title: A rule of mine
    why: Because.
    category: activations
    costs: [{{kind: throughput, text: Slower.}}]
    applicability: safe
{extra}    actions:
      - {action}
"""


def _rule(rid: str = "X001", action: str = "set: {field: micro_batch, value: 1}", extra: str = "") -> str:
    return RULE.format(id=rid, slug=rid.lower(), action=action, extra=extra)


def _load(tmp_path: Path, text: str) -> tuple[Path, InputError | None]:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        with within(5):
            load_rules([str(tmp_path)])
    except InputError as err:
        return path, err
    return path, None


def _line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_an_alias_bomb_in_a_rule_file_is_refused_quickly_with_its_line(tmp_path):
    lines = ["b0: &b0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * 10) + "]" for i in range(1, 9)]
    text = "\n".join(lines) + "\nrules: []\n"
    path, err = _load(tmp_path, text)
    assert err is not None and str(err).startswith(f"{path}:")
    assert err.render().split(": ", 1)[1].startswith("YAML aliases expand to more than")


def test_an_alias_that_contains_itself_is_exit_2_not_a_recursion_error(tmp_path):
    text = "schema_version: 1\nrules: &r\n  - *r\n"
    path, err = _load(tmp_path, text)
    assert err is not None and str(err) == f"{path}:2: a YAML alias refers to itself"   # the anchor's line


def test_a_rule_file_nested_past_the_depth_bound_is_an_error_not_a_crash(tmp_path):
    text = "rules: " + "[" * 300 + "]" * 300 + "\n"
    path, err = _load(tmp_path, text)
    assert err is not None and str(err).startswith(f"{path}:")


@pytest.mark.parametrize("extra,fragment", [
    ("    order: .inf\n", "order must be a finite number"),
    ("    order: .nan\n", "order must be a finite number"),
    ("    order: " + "9" * 500 + "\n", "order is too large"),
    ("    repeat: " + "9" * 500 + "\n", "repeat is too large"),
    ("    repeat: 1e9\n", "repeat must be at most 64"),
], ids=["order inf", "order nan", "order 500 digits", "repeat 500 digits", "repeat 1e9"])
def test_a_number_that_is_not_a_real_number_names_the_rule_files_line(tmp_path, extra, fragment):
    text = "rules:\n" + _rule(extra=extra)
    path, err = _load(tmp_path, text)
    assert err is not None, "loaded"
    key = extra.split(":")[0].strip()
    assert str(err).startswith(f"{path}:{_line_of(text, key + ':')}: "), str(err)
    assert fragment in str(err)


@pytest.mark.parametrize("action,fragment", [
    ("scale: {field: micro_batch, factor: .inf}", "factor must be a finite number"),
    ("scale: {field: micro_batch, factor: 0}", "factor must be at least"),
    ("scale: {field: micro_batch, factor: -2}", "factor must be at least"),
    ("scale: {field: micro_batch, factor: 1e9}", "factor must be at most"),
    ("scale: {field: micro_batch, factor: 1e300}", "factor is too large"),
    ("scale: {field: micro_batch, factor: 0.5, min: -4}", "min must be at least 1"),
    ("scale: {field: quant_bits, factor: 0.5}", "use set, not scale"),
    ("set: {field: micro_batch, value: 0}", "value for micro_batch must be at least 1, got 0"),
    ("set: {field: micro_batch, value: -4}", "value for micro_batch must be at least 1, got -4"),
    ("set: {field: seq_len, value: 0}", "value for seq_len must be at least 1"),
    ("set: {field: lora_rank, value: -8}", "value for lora_rank must be at least 1"),
    ("set: {field: zero_stage, value: 4}", "value for zero_stage must be at most 3"),
    ("set: {field: quant_bits, value: 5}", "must be one of 4, 8"),
    ("set: {field: grad_accum, value: 1e400}", "must be a finite number"),
    ("env: {name: PYTORCH_CUDA_ALLOC_CONF, value: \"a\\e[2Jb\"}", "control character"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_an_action_with_an_impossible_value_is_refused_at_load_with_its_line(tmp_path, action, fragment):
    text = "rules:\n" + _rule(action=action)
    path, err = _load(tmp_path, text)
    assert err is not None, "loaded"
    assert str(err).startswith(f"{path}:{_line_of(text, action.split(':')[0] + ':')}: "), str(err)
    assert fragment in str(err), str(err)


def test_the_refusal_is_in_chinese_too(tmp_path):
    text = "rules:\n" + _rule(action="set: {field: micro_batch, value: 0}")
    _, err = _load(tmp_path, text)
    assert err is not None and "至少应为 1" in err.render("zh") and "微" not in err.render("en")


def test_scaling_the_micro_batch_below_one_is_clamped_so_the_plan_never_holds_zero(tmp_path, demo_setup):
    # scale 0.1 of micro-batch 4 floors to 0: the action stops at 1 instead.
    text = "rules:\n" + _rule(action="scale: {field: micro_batch, factor: 0.1}")
    (tmp_path / "mine.yaml").write_text(text, encoding="utf-8")
    rule = load_rules([str(tmp_path)]).get("X001")
    firing = fire(rule, demo_setup, {})
    assert firing.setup.micro_batch == 1
    once_more = fire(rule, firing.setup, {})
    assert once_more.changes == ()                   # at the bound it changes nothing, so it stops


def test_set_from_a_fact_is_clamped_into_the_fields_range(tmp_path, demo_setup):
    text = "rules:\n" + _rule(action="set: {field: micro_batch, from: gpu.n_gpus}")
    (tmp_path / "mine.yaml").write_text(text, encoding="utf-8")
    rule = load_rules([str(tmp_path)]).get("X001")
    assert fire(rule, demo_setup, {"gpu.n_gpus": 0}).setup.micro_batch == 1
    assert fire(rule, demo_setup, {"gpu.n_gpus": 10 ** 30}).setup.micro_batch == 1 << 16


def test_four_hundred_doubling_rules_that_repeat_are_refused_at_load(tmp_path):
    text = "rules:\n" + "".join(
        _rule(f"D{i:03d}", "scale: {field: grad_accum, factor: 2}", "    repeat: true\n    check_saving: false\n")
        for i in range(400))
    path, err = _load(tmp_path, text)
    assert err is not None and str(err).startswith(f"{path}:")
    assert "times in one plan" in str(err)


def test_doubling_rules_within_the_budget_plan_in_bounded_time_with_valid_values(tmp_path, demo_setup, demo_inputs):
    # 100 rules that double accumulation without checking a saving: the walk stops at the field's bound.
    text = "rules:\n" + "".join(
        _rule(f"D{i:03d}", "scale: {field: grad_accum, factor: 2}", "    order: 1\n    repeat: 16\n"
              "    check_saving: false\n") for i in range(100))
    (tmp_path / "mine.yaml").write_text(text, encoding="utf-8")
    shape, hw = demo_inputs
    with within(20):
        plan = make_plan(demo_setup, shape, hw, rules=load_rules([str(tmp_path)]))
    assert plan.steps and all(1 <= s.setup.grad_accum <= 1 << 16 for s in plan.steps)


def test_a_broken_position_entry_is_reported_against_the_users_file(tmp_path):
    path, err = _load(tmp_path, "rules:\n  - {id: OOM007, before: NOPE}\n")
    assert err is not None
    assert str(err) == f"{path}:2: rule OOM007: 'NOPE' is not a loaded rule"


def test_a_before_after_cycle_written_by_the_user_names_the_users_file(tmp_path):
    path, err = _load(tmp_path, "rules:\n  - {id: OOM001, after: OOM002}\n  - {id: OOM002, after: OOM001}\n")
    assert err is not None and str(err).startswith(f"{path}:") and "cycle" in str(err)


def test_a_rule_file_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_bytes(b"rules:\n  - id: X\n    title: caf\xe9\n")
    with pytest.raises(InputError) as err:
        load_rules([str(tmp_path)])
    assert str(err.value) == f"{path}:3: not UTF-8 text"


def test_a_bad_tag_value_is_a_line_error(tmp_path):
    path, err = _load(tmp_path, "rules:\n" + _rule(extra="    order: !!int soon\n"))
    assert err is not None and str(err).startswith(f"{path}:") and "bad value" in str(err)


def test_a_rule_file_of_endless_bytes_is_refused_as_a_device(tmp_path):
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    with within(10), pytest.raises(InputError) as err:
        load_rules([str(link)])
    assert "is a device" in str(err.value)


def test_every_loader_message_renders_in_both_languages(tmp_path):
    _, err = _load(tmp_path, "rules:\n" + _rule(extra="    order: .inf\n"))
    assert err is not None
    assert say(err.message, "zh") != say(err.message, "en")


@pytest.fixture()
def demo_setup():
    from oomdoctor import configs
    from oomdoctor.cli import DEMO_DIR

    return configs.load_config(str(DEMO_DIR / "train.yaml"))


@pytest.fixture()
def demo_inputs(demo_setup):
    from oomdoctor.gpus import hardware_from_flag
    from oomdoctor.models import resolve_model

    return resolve_model(demo_setup.model), hardware_from_flag("A100-80GB", 1)


def test_the_same_id_twice_in_one_file_names_both_lines(tmp_path):
    # A fuzz find: the message's own {line} value collided with the error's line.
    text = "rules:\n" + _rule("X001") + _rule("X001").replace("slug: x001", "slug: x001-again")
    path, err = _load(tmp_path, text)
    assert err is not None and str(err) == f"{path}:11: rule id X001 appears twice in this file (first at line 2)"
