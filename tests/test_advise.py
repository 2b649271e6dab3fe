"""The advisor: strategy rows, the fit matrix, run time and cost, prices, and the CLI's --advise."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomdoctor import advise
from oomdoctor.advise import timing
from oomdoctor.advise.cards import MATRIX_CARDS, MATRIX_COUNTS, adapt_to_card, card_hardware, spec_of
from oomdoctor.advise.render import WIDTH
from oomdoctor.cli import main
from oomdoctor.configs import load_config
from oomdoctor.errors import InputError
from oomdoctor.gpus import hardware_from_flag, lookup_gpu
from oomdoctor.memory import estimate
from oomdoctor.models import resolve_model
from oomdoctor.words import say

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "oomdoctor" / "data" / "demo" / "train.yaml"
DATA = ROOT / "tests" / "data" / "advise"
SHARDED_AFTER_DDP = ("zero1", "zero2", "zero3", "zero3_offload_opt", "zero3_offload_all", "fsdp")


def full_finetune(model: str):
    setup = replace(load_config(str(DEMO)), model=model)
    return setup, resolve_model(model)


CASES = {
    "7B on 2 x 80 GB": ("meta-llama/Llama-2-7b-hf", 2),
    "13B on 4 x 80 GB": ("meta-llama/Llama-2-13b-hf", 4),
}


@pytest.fixture(scope="module", params=list(CASES), ids=list(CASES))
def rows(request):
    model, n = CASES[request.param]
    setup, shape = full_finetune(model)
    hw = hardware_from_flag("A100-80GB", n)
    built = advise.build_strategies(setup, shape, hw, n_gpus=n, spec=lookup_gpu("A100-80GB"), tokens=1e8)
    return {r.key: r for r in built}, setup, shape, hw, n


# ---------------------------------------------------------------- strategy rows

def test_every_strategy_has_a_row_on_several_gpus(rows):
    by_key, *_ = rows
    assert list(by_key) == ["single", "ddp", "naive_mp", "zero1", "zero2", "zero3", "zero3_offload_opt",
                            "zero3_offload_all", "fsdp", "zero3_sp"]


def test_sequence_parallel_row_splits_activations_and_logits_over_the_cards(rows):
    r, *_ = rows
    sp, z3 = r["zero3_sp"], r["zero3"]
    assert sp.setup.seq_parallel == sp.n_gpus == z3.n_gpus > 1
    assert sp.components["weights"] == pytest.approx(z3.components["weights"])
    assert sp.peak_gib < z3.peak_gib
    assert "advise.why.sequence_split" in [m.code for m in sp.speed_why]


def test_ddp_holds_at_least_zero2_which_holds_at_least_zero3_which_holds_at_least_zero3_offload(rows):
    r, *_ = rows
    assert r["ddp"].peak_gib >= r["zero2"].peak_gib >= r["zero3"].peak_gib >= r["zero3_offload_opt"].peak_gib \
        >= r["zero3_offload_all"].peak_gib


def test_zero1_holds_no_more_than_ddp_and_at_least_zero2(rows):
    r, *_ = rows
    assert r["ddp"].peak_gib >= r["zero1"].peak_gib >= r["zero2"].peak_gib


def test_ddp_per_card_equals_the_single_gpu_peak(rows):
    r, *_ = rows
    assert r["ddp"].peak_gib == pytest.approx(r["single"].peak_gib)


def test_naive_model_parallel_weights_per_card_are_total_weights_over_cards(rows):
    r, _setup, _shape, _hw, n = rows
    assert r["naive_mp"].components["weights"] == pytest.approx(r["single"].components["weights"] / n)
    assert r["naive_mp"].peak_gib < r["single"].peak_gib


def test_each_row_is_the_estimator_run_on_the_row_setup(rows):
    r, _setup, shape, hw, n = rows
    for key in ("single", "ddp", "zero2", "zero3", "zero3_offload_all", "fsdp"):
        row = r[key]
        est = estimate(row.setup, shape, replace(hw, n_gpus=row.n_gpus))
        assert row.peak_gib == pytest.approx(est.peak_gib), key
        assert row.fits == est.fits


def test_offload_rows_need_host_ram_and_are_slower_than_zero3(rows):
    r, *_ = rows
    assert r["zero3"].host_ram_gib == 0
    assert r["zero3_offload_opt"].host_ram_gib > 0
    assert r["zero3_offload_all"].host_ram_gib > r["zero3_offload_opt"].host_ram_gib
    assert r["zero3_offload_all"].speed < r["zero3_offload_opt"].speed < r["zero3"].speed
    why = " ".join(say(m) for m in r["zero3_offload_opt"].speed_why)
    assert "PCIe" in why and "CPU Adam" in why


def test_naive_model_parallel_is_no_faster_than_one_card_and_says_why(rows):
    r, *_ = rows
    assert r["naive_mp"].speed <= 1.0 < r["ddp"].speed
    assert [m.code for m in r["naive_mp"].speed_why] == ["advise.why.naive_mp"]
    assert "one at a time" in say(r["naive_mp"].speed_why[0])


def test_zero3_is_slower_than_ddp_per_card_because_it_gathers_parameters(rows):
    r, _s, _sh, _hw, n = rows
    assert 1.0 < r["zero3"].speed < r["ddp"].speed <= n


def test_one_gpu_has_only_the_single_and_offload_rows():
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    built = advise.build_strategies(setup, shape, hardware_from_flag("A100-80GB", 1))
    assert [r.key for r in built] == ["single", "zero3_offload_opt", "zero3_offload_all"]
    assert all(r.n_gpus == 1 for r in built)


def test_naive_model_parallel_on_one_card_is_the_single_gpu_estimate():
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    single = estimate(setup, shape, hardware_from_flag("A100-80GB", 1))
    same = advise.naive_model_parallel(single, 1)
    assert same.allocated_gib == pytest.approx(single.allocated_gib, rel=1e-6)
    assert same.peak_gib == pytest.approx(single.peak_gib, rel=1e-6)


def test_rows_use_the_estimator_they_are_given():
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    hw = hardware_from_flag("A100-80GB", 2)

    def plus_three(s, sh, h, *, crash=None, headroom=0.10):
        e = estimate(s, sh, h, crash=crash, headroom=headroom)
        return replace(e, peak_gib=e.peak_gib + 3.0)

    plain = {r.key: r.peak_gib for r in advise.build_strategies(setup, shape, hw)}
    raised = {r.key: r.peak_gib for r in advise.build_strategies(setup, shape, hw, estimator=plus_three)}
    for key in plain:
        if key != "naive_mp":
            assert raised[key] == pytest.approx(plain[key] + 3.0), key


# ---------------------------------------------------------------- time model

def test_lora_does_less_work_per_token_than_full_fine_tuning():
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    full = timing.work_per_token(setup, shape).total
    lora = timing.work_per_token(replace(setup, method="lora"), shape).total
    assert lora < full
    # full fine-tuning is about 6 x params per token (+ a third for the recomputed forward)
    no_ckpt = timing.work_per_token(replace(setup, grad_ckpt=False), shape).total
    assert 6 * 6.7e9 < no_ckpt < 6 * 6.7e9 * 1.3


def test_gradient_checkpointing_adds_one_forward():
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    on = timing.work_per_token(replace(setup, grad_ckpt=True), shape)
    off = timing.work_per_token(replace(setup, grad_ckpt=False), shape)
    assert on.total - off.total == pytest.approx(off.forward)


def test_longer_context_costs_more_per_token():
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    short = timing.work_per_token(replace(setup, seq_len=1024), shape).total
    long = timing.work_per_token(replace(setup, seq_len=32768), shape).total
    assert long > short * 1.2


def test_a_faster_card_finishes_sooner():
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    a100 = timing.step_time(setup, shape, lookup_gpu("A100-80GB"), 1)
    h100 = timing.step_time(setup, shape, lookup_gpu("H100"), 1)
    assert h100.step_s < a100.step_s
    assert a100.step_s / h100.step_s == pytest.approx(989 / 312)


def test_tokens_come_from_samples_epochs_and_cutoff():
    setup = load_config(str(DEMO))
    total, said = timing.total_tokens(setup)
    assert total == 1000 * 3.0 * 2048
    assert "1,000 samples" in say(said) and "upper bound" in say(said)


def test_tokens_flag_overrides_the_config():
    total, said = timing.total_tokens(load_config(str(DEMO)), 5e9)
    assert total == 5e9 and said.code == "advise.tokens.flag"


def test_without_a_sample_count_the_run_time_is_unknown():
    setup = load_config(str(DEMO))
    setup = replace(setup, extras={k: v for k, v in setup.extras.items() if k != "max_samples"})
    total, said = timing.total_tokens(setup)
    assert total is None and said.code == "advise.tokens.unknown" and "--tokens" in say(said)


# ---------------------------------------------------------------- cards that lack a feature

def test_card_without_bf16_trains_in_fp16_and_without_fa2_uses_sdpa():
    setup = load_config(str(DATA / "fa2_t4.yaml"))
    t4 = card_hardware(lookup_gpu("T4"), 1)
    run, said = adapt_to_card(setup, t4)
    assert (run.precision, run.attention) == ("fp16", "sdpa")
    assert [m.code for m in said] == ["advise.assumed.fp16", "advise.assumed.sdpa"]


def test_card_with_bf16_keeps_the_setup():
    setup = load_config(str(DATA / "fa2_t4.yaml"))
    run, said = adapt_to_card(setup, card_hardware(lookup_gpu("H100"), 1))
    assert run == setup and said == ()


def test_matrix_cell_on_a_card_without_bf16_is_estimated_in_fp16():
    setup = load_config(str(DATA / "fa2_t4.yaml"))
    shape = resolve_model(setup.model)
    cell = advise.fit_cell(setup, shape, lookup_gpu("T4"), 1, estimator=estimate)
    assert cell.fits and cell.final_setup.precision == "fp16" and cell.final_setup.attention == "sdpa"
    assert [a.code for a in cell.assumed] == ["advise.assumed.fp16", "advise.assumed.sdpa"]


# ---------------------------------------------------------------- the fit matrix through the CLI

def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def demo_matrix_json():
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main([str(DEMO), "--gpu", "A100-80GB", "--gpus", "2", "--advise", "--json",
                     "--prices", str(DATA / "prices.yaml")])
    assert code == 0
    return json.loads(buf.getvalue())


def test_advise_json_has_every_card_and_count(demo_matrix_json):
    doc = demo_matrix_json
    assert doc["counts"] == list(MATRIX_COUNTS)
    assert [spec_of(c).name for c in MATRIX_CARDS] == doc["cards"]
    assert len(doc["cells"]) == len(MATRIX_CARDS) * len(MATRIX_COUNTS)
    assert {r["strategy"] for r in doc["strategies"]} >= {"ddp", "naive_mp", "zero3", "fsdp"}


def test_every_fitting_cell_re_estimates_under_the_card_capacity(demo_matrix_json):
    base = load_config(str(DEMO))
    shape = resolve_model(base.model)
    checked = 0
    for cell in demo_matrix_json["cells"]:
        if not cell["fits"]:
            continue
        spec = lookup_gpu(cell["card"])
        start = replace(base, n_gpus=cell["n_gpus"])
        final = replace(start, **{k: (tuple(v[1]) if isinstance(v[1], list) else v[1])
                                  for k, v in cell["setup_changes"].items()})
        hw = card_hardware(spec, cell["n_gpus"])
        est = estimate(final, shape, hw)
        assert est.fits, (cell["card"], cell["n_gpus"], est.peak_gib, hw.usable_gib)
        assert est.peak_gib <= hw.usable_gib * 0.9 + 1e-9
        assert est.peak_gib == pytest.approx(cell["final_peak_gib"], abs=0.01)
        checked += 1
    assert checked >= len(MATRIX_CARDS)      # the 7B full fine-tune fits somewhere on every card


def test_cells_that_do_not_fit_as_configured_carry_a_plan(demo_matrix_json):
    for cell in demo_matrix_json["cells"]:
        if cell["fits"] and not cell["fits_as_configured"]:
            assert cell["plan"] and cell["setup_changes"]
        if cell["fits_as_configured"]:
            assert cell["plan"] == [] and cell["final_peak_gib"] == cell["peak_gib"]


def test_cost_is_run_hours_times_price_times_cards(demo_matrix_json):
    prices = advise.load_prices(str(DATA / "prices.yaml"))
    for cell in demo_matrix_json["cells"]:
        price = prices.of(cell["card"])
        if price is None or not cell["fits"]:
            assert cell["cost"] is None
        else:
            assert cell["cost"] == pytest.approx(cell["hours"] * price * cell["n_gpus"], rel=1e-3, abs=0.006)


def test_the_cheapest_fitting_cell_is_marked(demo_matrix_json):
    cells = demo_matrix_json["cells"]
    marked = [c for c in cells if c["cheapest"]]
    assert len(marked) == 1
    candidates = [c for c in cells if c["fits"] and c["cost"] is not None and c["quality_steps"] == 0]
    assert marked[0]["cost"] == min(c["cost"] for c in candidates)
    assert demo_matrix_json["cheapest"]["card"] == marked[0]["card"]
    assert demo_matrix_json["currency"] == "USD"


def test_json_says_it_is_an_estimate_and_what_it_assumes(demo_matrix_json):
    text = " ".join(demo_matrix_json["assumptions"])
    assert "estimate" in text and "40%" in text and "MFU" in text
    assert demo_matrix_json["tokens"] == 1000 * 3 * 2048


def test_plain_advice_fits_80_columns_and_names_every_card(capsys):
    code, out, _ = run_cli(capsys, str(DEMO), "--gpu", "A100-80GB", "--gpus", "2", "--advise", "--plain",
                           "--prices", str(DATA / "prices.yaml"))
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= WIDTH
    for card in MATRIX_CARDS:
        assert spec_of(card).name in out
    assert "Strategies on 2 x A100 80GB SXM" in out and "Cheapest that fits" in out
    assert "naive model parallel" in out and "ZeRO-3 + optimizer offload" in out


def test_the_users_own_card_gets_a_matrix_row_when_not_listed(capsys):
    code, out, _ = run_cli(capsys, str(DATA / "fa2_t4.yaml"), "--gpu", "T4", "--advise", "--json")
    doc = json.loads(out)
    assert "Tesla T4" in doc["cards"]
    t4 = [c for c in doc["cells"] if c["card"] == "Tesla T4"]
    assert t4 and all("fp16" in " ".join(c["assumed"]) for c in t4)
    assert any("no bf16" in a for a in doc["assumptions"])


def test_tokens_flag_sets_the_run_time(capsys):
    _, out1, _ = run_cli(capsys, str(DEMO), "--gpu", "H100", "--advise", "--json", "--tokens", "1e8")
    _, out2, _ = run_cli(capsys, str(DEMO), "--gpu", "H100", "--advise", "--json", "--tokens", "2e8")
    a, b = json.loads(out1), json.loads(out2)
    ha = [c["hours"] for c in a["cells"] if c["hours"]]
    hb = [c["hours"] for c in b["cells"] if c["hours"]]
    assert ha and all(y == pytest.approx(2 * x, rel=0.01) for x, y in zip(ha, hb))


def test_non_positive_tokens_are_bad_input(capsys):
    code, _, err = run_cli(capsys, str(DEMO), "--gpu", "H100", "--advise", "--tokens", "0")
    assert code == 2 and "--tokens" in err


# ---------------------------------------------------------------- prices

def test_prices_file_reads_card_names_like_the_gpu_flag():
    prices = advise.load_prices(str(DATA / "prices.yaml"))
    assert prices.currency == "USD"
    assert prices.of("A100 80GB SXM") == 1.89 and prices.of("H100 SXM") == 2.99 and prices.of("RTX 4090") == 0.44
    assert prices.of("L4") is None


def test_prices_may_sit_under_a_prices_key():
    prices = advise.load_prices(str(DATA / "prices_nested.yaml"))
    assert prices.currency == "CNY" and prices.of("A800 80GB") == 9.5 and prices.of("H800") == 16.0


@pytest.mark.parametrize("name, line, words", [
    ("prices_bad_number.yaml", 3, "not a number"),
    ("prices_unknown_card.yaml", 3, "unknown card"),
    ("prices_duplicate.yaml", 2, "already priced on line 1"),
    ("prices_negative.yaml", 1, ">= 0"),
    ("prices_list.yaml", 1, "mapping"),
])
def test_bad_prices_file_names_the_file_and_line(name, line, words):
    path = str(DATA / name)
    with pytest.raises(InputError) as err:
        advise.load_prices(path)
    assert err.value.path == path and err.value.line == line
    assert words in str(err.value) and str(err.value).startswith(f"{path}:{line}: ")


def test_missing_prices_file_is_bad_input_on_the_command_line(capsys, tmp_path):
    missing = str(tmp_path / "nope.yaml")
    code, _, err = run_cli(capsys, str(DEMO), "--gpu", "H100", "--advise", "--prices", missing)
    assert code == 2 and missing in err and "no such prices file" in err


def test_a_bad_prices_file_is_refused_before_the_app_starts(capsys):
    # --prices also feeds the app's fit matrix (key m): a bad file is one line at start, not an error inside
    path = str(DATA / "prices_bad_number.yaml")
    code, out, err = run_cli(capsys, str(DEMO), "--gpu", "H100", "--plain", "--prices", path)
    assert code == 2 and f"{path}:3:" in err and not out
    code, out, err = run_cli(capsys, str(DEMO), "--gpu", "H100", "--plain", "--tokens", "0")
    assert code == 2 and "--tokens must be at least 1" in err


def test_bad_prices_file_on_the_command_line_is_one_line_with_file_and_line(capsys):
    path = str(DATA / "prices_bad_number.yaml")
    code, _, err = run_cli(capsys, str(DEMO), "--gpu", "H100", "--advise", "--prices", path)
    assert code == 2 and f"{path}:3:" in err and len(err.strip().splitlines()) == 1


def test_the_matrix_is_the_same_every_time():
    # Bounded by a count of trial plans, not the clock: machine load never changes the advice.
    setup, shape = full_finetune("meta-llama/Llama-2-7b-hf")
    runs = [advise.build_cells(setup, shape, estimator=estimate, cards=("RTX 4090", "L4"), counts=(1, 2))
            for _ in range(2)]
    assert [(c.card, c.n_gpus, c.steps, c.final_peak_gib) for c in runs[0]] == \
        [(c.card, c.n_gpus, c.steps, c.final_peak_gib) for c in runs[1]]


# ---------------------------------------------------------------- renters: no card yet, host RAM, units

def test_advise_without_any_gpu_answers_with_host_ram_per_strategy(capsys, monkeypatch):
    import oomdoctor.gpus as gpus

    monkeypatch.setattr(gpus, "detect_nvml", lambda: None)        # no card on this machine either
    code, out, err = run_cli(capsys, str(DEMO), "--advise", "--plain")
    assert code in (0, 1), err
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("Strategies on"))
    table = next(i for i in range(head, len(lines)) if lines[i].startswith("strategy"))
    assert "no card given" in " ".join(lines[head:table]) and "host RAM" in lines[table]
    rows = lines[table + 1:table + 4]
    assert rows[0].startswith("single GPU") and " GiB" in rows[0]
    offload = next(ln for ln in rows if ln.startswith("ZeRO-3 + optimizer offload"))
    assert "GiB!" in offload                      # more than the 64 GiB a rented one-GPU machine has
    assert "64 GiB of host RAM per GPU, a typical rental host" in " ".join(out.split())
    code, out, _ = run_cli(capsys, str(DEMO), "--advise", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["hardware"] == ""
    for row in doc["strategies"]:
        assert row["fits"] is None and row["host_ram_gib"] is not None
    assert any(row["host_ram_over"] for row in doc["strategies"])
    assert doc["host_ram_per_gpu_gib"] == 64.0


def test_host_ram_flag_moves_the_line_between_flagged_and_not(capsys, monkeypatch):
    import oomdoctor.gpus as gpus

    monkeypatch.setattr(gpus, "detect_nvml", lambda: None)
    _, small, _ = run_cli(capsys, str(DEMO), "--advise", "--json", "--host-ram", "32")
    _, large, _ = run_cli(capsys, str(DEMO), "--advise", "--json", "--host-ram", "1024")
    small, large = json.loads(small), json.loads(large)
    over = [(c["card"], c["n_gpus"]) for c in small["cells"] if c["host_ram_over"]]
    assert over and not any(c["host_ram_over"] for c in large["cells"])
    for cell in small["cells"]:
        if cell["host_ram_over"]:
            assert cell["host_ram_gib"] > 32 and cell["host_budget_gib"] == 32


def test_the_matrix_has_l20_v100_a40_a6000_and_4090d_as_their_own_cards(capsys):
    from oomdoctor.gpus import lookup_gpu

    code, out, _ = run_cli(capsys, str(DEMO), "--gpu", "A100-80GB", "--advise", "--json")
    doc = json.loads(out)
    for card in ("L20", "V100 32GB", "A40", "RTX A6000", "RTX 4090D", "RTX 4090"):
        assert card in doc["cards"]
    specs = {s["card"]: s for s in doc["card_specs"]}
    assert specs["L20"]["mem_gbs"] == 864 and specs["A40"]["mem_gbs"] == 696 and specs["RTX A6000"]["mem_gbs"] == 768
    assert specs["RTX 4090D"]["bf16_tflops"] < specs["RTX 4090"]["bf16_tflops"]
    assert lookup_gpu("NVIDIA GeForce RTX 4090 D").name == "RTX 4090D" != lookup_gpu("RTX 4090").name
    assert lookup_gpu("L20").usable_gib > 40 and lookup_gpu("V100-SXM2-32GB").name == "V100 32GB"


def test_every_matrix_cell_carries_its_unit_and_costs_their_currency(capsys):
    import re

    code, out, _ = run_cli(capsys, str(DEMO), "--gpu", "A100-80GB", "--advise", "--plain",
                           "--prices", str(DATA / "prices.yaml"))
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("card "))
    for line in lines[start + 1:start + 1 + len(MATRIX_CARDS)]:
        cells = re.findall(r"(?:ok|x|[A-Z]) \d+(?:\.\d)? GiB", line)
        assert len(cells) == len(MATRIX_COUNTS), line
        assert not re.search(r" \d+G\b", line[16:])           # never the old "19G"
    cost = lines.index(next(ln for ln in lines if ln.startswith("Cost of the run (USD")))
    priced = [ln[16:] for ln in lines[cost + 2:cost + 2 + len(MATRIX_CARDS)] if re.search(r"\d", ln[16:])]
    assert priced and all(re.fullmatch(r"(?:(?:[\d,.]+ USD\*?|-)\s*)+", cells.strip()) for cells in priced)
