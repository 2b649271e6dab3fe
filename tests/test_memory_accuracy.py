"""The estimate against published measured peaks (benchmarks/accuracy.py on the calibration set)."""
import os
import sys
from pathlib import Path

import pytest

REF = str(Path(__file__).resolve().parent / "data" / "reference" / "measured_peaks.yaml")


def _accuracy():
    """benchmarks/accuracy.py, imported as the benchmark runs it."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    import accuracy
    return accuracy


def _cases(calibration_set=None):
    """The reference rows by id, those of one calibration set when named."""
    import yaml

    with open(REF) as fh:
        return {c["id"]: c for c in yaml.safe_load(fh)
                if calibration_set is None or c.get("calibration_set") == calibration_set}


@pytest.fixture(scope="module")
def result():
    # the rows scored before PEFT's method comparison was added (accuracy.py --set original); that set's own
    # bounds are below
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="original")


@pytest.fixture(scope="module")
def methods():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="peft-methods")


def test_median_error_on_published_peaks_is_at_most_7_percent(result):
    # 7.0% measured on 74 rows (7.2% at first sight: the Qwen README's Oct-2023 rows ran PEFT 0.5's fp32
    # adapters; docs/estimates.md section 9)
    assert result["median"] <= 0.070


def test_p90_error_on_published_peaks_is_at_most_23_5_percent(result):
    # 23.3% measured on the same 74 rows (docs/estimates.md): the remaining misses are ms-swift's unpadded
    # Qwen-1 runs (every near-record batch length leaves its logits segments reserved; the estimate keeps one),
    # Answer.AI's 70B CPU-offload QLoRA and torchtune's 405B row
    assert result["p90"] <= 0.235


def test_no_source_has_a_median_error_above_15_percent(result):
    # worst today: PEFT's ZeRO-3 QLoRA page, 14.1%; Answer.AI's FSDP QLoRA table was 19.6% at first sight and
    # is 8.9% (8 rows) with its training loop's kept logits and FSDP's unsharded root unit
    accuracy = _accuracy()
    worst = max(accuracy.by_source(result), key=lambda g: g[2])
    assert worst[2] <= 0.15, worst[:1] + worst[2:]


def test_by_source_gives_each_publication_its_median_worst_and_components(result):
    accuracy = _accuracy()
    groups = accuracy.by_source(result)
    assert sum(len(rows) for _, rows, _, _ in groups) == len(result["rows"])
    assert len(groups) >= 8
    for name, rows, median, worst in groups:
        assert 0 <= median <= worst
        for row in rows:
            parts = result["parts"][row[0]]
            assert set(parts) == set(accuracy.COMPONENTS) and parts["reserve"] >= 0
    # sorted worst median first
    assert [g[2] for g in groups] == sorted((g[2] for g in groups), reverse=True)


def test_every_oom_case_is_predicted_not_to_fit(result):
    assert result["oom"], "the calibration set holds oom: true cases"
    assert all(ok for _, _, _, ok in result["oom"]), [cid for cid, _, _, ok in result["oom"] if not ok]


def test_exclusions_are_few_and_each_gives_a_reason(result):
    assert len(result["skipped"]) <= 6
    assert all(why for _, why in result["skipped"])
    assert len(result["rows"]) >= 50


# Reserved rows whose allocated figure is right (the trace of mmqa-04's step meets it; the others sit within
# 11% of the measurement before any reserve): docs/estimates.md section 4 lists the pairs
RESERVED_PAIRS = ("mmqa-01", "mmqa-04", "mmqa-05", "mmqa-06", "ms-18", "ms-19", "ms-43", "qw-16", "qw-31",
                  "tt-09", "tt-12")


def test_peak_is_within_10_percent_of_the_measured_reserved_peak_where_allocated_is_right():
    from oomdoctor.memory import estimate

    accuracy = _accuracy()
    cases = _cases()
    ref = accuracy._reference_shapes()
    off = {}
    for cid in RESERVED_PAIRS:
        assert accuracy.kind_of(cases[cid]) == "reserved", cid
        setup, shape, hw = accuracy.convert(cases[cid], ref)
        peak = estimate(setup, shape, hw).peak_gib         # reserved + the CUDA context: what the fit uses
        measured = accuracy.measured_gib(cases[cid])
        off[cid] = round((peak - measured) / measured, 3)
    assert all(abs(v) <= 0.10 for v in off.values()), off


def test_peft_methods_median_is_at_most_5_percent_and_worst_at_most_7(methods):
    # PEFT's MetaMathQA method comparison (19 rows, docs/estimates.md section 11): 13.4% median, +49.1% worst at
    # first sight (prompt learning read as LoRA on every linear); 4.9% / 6.7% with each type's own mechanism
    errs = [abs(r[4]) for r in methods["rows"]]
    assert len(errs) == 19
    assert methods["median"] <= 0.050
    assert max(errs) <= 0.070, max(methods["rows"], key=lambda r: abs(r[4]))


@pytest.fixture(scope="module")
def fresh():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="fresh-2026-12")


def test_fresh_sample_median_is_at_most_12_percent_and_p90_at_most_46(fresh):
    # ms-swift's example scripts (41 rows, docs/estimates.md section 12): 21.9% median, 102.0% p90 at first
    # sight; 12.8% / 45.5% with the flags each script states read and each dataset's longest sample; 11.8% /
    # 45.5% with DPO's log-probabilities in the logits' dtype (section 13)
    assert len(fresh["rows"]) == 41 and not fresh["skipped"]
    assert fresh["median"] <= 0.120
    assert fresh["p90"] <= 0.460


def test_a_figure_no_mechanism_reconciles_stays_scored_with_its_reason(fresh, capsys):
    # docs/estimates.md section 21: such rows are marked in the data, never dropped from the score
    marked = {cid for cid, case in _cases("fresh-2026-12").items() if case.get("unreconciled")}
    assert {"fr-19", "fr-14"} <= marked
    assert marked <= {row[0] for row in fresh["rows"]}
    assert set(fresh["unreconciled"]) == marked and all(fresh["unreconciled"].values())
    accuracy = _accuracy()
    accuracy.print_by_source(fresh)
    shown = [line for line in capsys.readouterr().out.splitlines() if "not reconciled:" in line]
    assert len(shown) == len(marked)


def test_swift_3_scripts_are_read_as_ms_swift_with_its_checkpoint_default():
    # ms-swift 3.x checkpoints reentrant (transformers 4.x's default, pinned by swift/trainers/arguments.py
    # _fix_gradient_checkpointing); from 3.6 plain DDP runs it non-reentrant (docs/estimates.md section 21)
    import oomdoctor.memory  # noqa: F401

    est = sys.modules["oomdoctor.memory.estimate"]
    accuracy = _accuracy()
    cases, ref = _cases(), accuracy._reference_shapes()
    one_gpu = accuracy.convert(cases["fr-26"], ref)[0]
    ddp = accuracy.convert(cases["fr-14"], ref)[0]
    assert one_gpu.framework == ddp.framework == "ms-swift"
    assert est._reentrant(one_gpu) and not est._reentrant(ddp)
    # ms-swift v1's benchmark rows keep the release they ran
    assert accuracy.convert(cases["ms-42"], ref)[0].framework_version == "1.5.0"


def test_a_dataset_is_named_by_its_own_word_not_inside_another_name():
    accuracy = _accuracy()
    # LitGPT's Alpaca (longest 1304 tokens) is not LongAlpaca-12k nor alpaca-gpt4
    assert accuracy._seq_len({"seq_len": "Alpaca (LitGPT default)"}) == 1304
    assert accuracy._seq_len({"seq_len": "<= 65536 (max_length; LongAlpaca-12k samples)"}) == 65536
    assert accuracy._seq_len({"seq_len": "<= 2048 (max_length; alpaca-gpt4 samples)"}) == 2048
    assert accuracy._seq_len({"seq_len": "512000 (packing fills each row)"}) == 512000


def test_swift_sequence_parallel_loss_with_a_chunk_size_is_chunked_cross_entropy():
    accuracy = _accuracy()
    case = _cases()["fr-31"]
    ref = accuracy._reference_shapes()
    setup, _, _ = accuracy.convert(case, ref)
    assert setup.seq_parallel == 8 and setup.loss_kernel == "chunked"
    unchunked = dict(case, quote=case["quote"].replace("CELOSS_PARALLEL_SIZE=2048", ""))
    assert accuracy.convert(unchunked, ref)[0].loss_kernel == ""


@pytest.fixture(scope="module")
def axolotl_fresh():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="fresh-2026-12b")


def test_second_fresh_sample_bounds(axolotl_fresh):
    # axolotl's example READMEs (docs/estimates.md section 15): 32.3% median, 91.0% p90 on 20 rows at first
    # sight (4 more below the untouched estimate's own model states); 24.6% / 49.2% on the 23 scored rows once
    # read as oomdoctor's axolotl reader reads the configs and with the experts dequantized on access; section 18:
    # the code-llama README's copy of llama-2's line is scored once (21 rows), 22.4% / 47.3% with the 2023 and
    # 2025 rows read as the code of their day ran; section 22: 19.6% / 45.0% with gpt-oss's clamped GLU and
    # Jamba's Mamba mixers keeping their own quantized inputs; section 29: 17.9% / 42.2% with FSDP2's all-gather
    # outputs reserved in their own stream's pool; section 36b: 10.0% / 51.4% with the 2025-2026 rows read with the
    # bitsandbytes their commit pinned (a 4-bit matmul keeps no input from 0.43.2): ax-23 +32.9% -> -6.9%, while
    # ax-05 (-30.4% -> -51.4%) and ax-25 (-38.3% -> -55.9%) lose a term they never had and become the p90
    assert len(axolotl_fresh["rows"]) == 21 and not axolotl_fresh["skipped"]
    assert axolotl_fresh["median"] <= 0.101
    assert axolotl_fresh["p90"] <= 0.515


def test_figures_no_code_path_gives_are_marked_with_the_code_read(axolotl_fresh):
    # docs/estimates.md section 29: ax-21's loader path at 15f7910d3 and fd-03's figure at the card's capacity
    assert "model.to(cuda:LOCAL_RANK)" in axolotl_fresh["unreconciled"]["ax-21"]
    assert "ax-21" in {r[0] for r in axolotl_fresh["rows"]}
    glm = _accuracy().run(verbose=False, subset="fresh-2026-12d")
    assert "98.8%" in glm["unreconciled"]["fd-03"] and "fd-03" in {r[0] for r in glm["rows"]}


def test_an_unreconciled_figure_stays_scored_and_says_why(axolotl_fresh, capsys):
    # ax-19's "48GB" is below the stated run's weights, gradients and paged 8-bit states (docs/estimates.md
    # section 22): marked with the reason in the data, scored like any row, flagged beside its error
    assert "ax-19" in {r[0] for r in axolotl_fresh["rows"]}
    assert "cudaMallocManaged" in axolotl_fresh["unreconciled"]["ax-19"]
    _accuracy().print_by_source(axolotl_fresh)
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("ax-19"))
    assert lines[at + 1].strip().startswith("not reconciled:") and "cudaMallocManaged" in lines[at + 1]


def test_axolotl_rows_are_read_as_the_axolotl_reader_reads_their_configs():
    accuracy = _accuracy()
    cases = _cases("fresh-2026-12b")
    ref = accuracy._reference_shapes()
    glm_fsdp, _, hw = accuracy.convert(cases["ax-05"], ref)
    # CutCrossEntropyPlugin -> a fused loss; FSDP2's checkpoint_wrapper -> non-reentrant; quantize_moe_experts
    assert glm_fsdp.framework == "axolotl" and glm_fsdp.fused_ce and hw.n_gpus == 2
    assert glm_fsdp.mechanisms.use_reentrant is False and glm_fsdp.mechanisms.experts_quantized_on_load
    llama2, _, _ = accuracy.convert(cases["ax-17"], ref)
    # written in 2023-08 against transformers' main of the day: the model's forward upcasts the logits itself
    assert llama2.mechanisms.transformers_version == "4.32" and not llama2.fused_ce
    # a figure whose setup cannot be known is kept, with its reason, and not scored
    assert all(cases[c]["reliability"] == "low" and "cannot be known" in cases[c]["notes"]
               for c in ("ax-12", "ax-13", "ax-20", "ax-26"))
    # ... and so is a line copied from another README, scored once where it was measured
    assert all(cases[c]["reliability"] == "low" and "copied word for word" in cases[c]["notes"]
               for c in ("ax-01", "ax-02"))
    # the figure's own config at the line's commit: axolotl 0.1, xformers attention
    assert (llama2.framework_version, llama2.attention) == ("0.1", "sdpa")


def test_axolotl_rows_from_their_own_configs_as_the_cli_reads_them():
    # accuracy.py --configs: each row's own axolotl config read by oomdoctor's reader with --gpus N, no converter
    # (first sight, the untouched CLI on the same files: 25.7% median, 60.2% p90 on 23 rows)
    accuracy = _accuracy()

    res = accuracy.run(verbose=False, subset="fresh-2026-12b", configs=True)
    assert len(res["rows"]) == 21 and not res["skipped"]
    assert res["median"] <= 0.260 and res["p90"] <= 0.495
    converted = accuracy.run(verbose=False, subset="fresh-2026-12b")
    by_id = {r[0]: r[3] for r in converted["rows"]}
    # the converter reads the rows as the reader reads their configs: the two agree within a few percent
    # where the rows carry nothing the files do not (the 2023/2024 rows also name their transformers release; ax-05
    # names the bitsandbytes its commit pinned, which its config file does not, and its escape term is 6 GiB)
    for cid, _, _, pred, _ in res["rows"]:
        if cid in ("ax-03", "ax-04", "ax-06", "ax-07", "ax-08", "ax-19", "ax-24", "ax-27"):
            assert by_id[cid] == pytest.approx(pred, rel=0.02), cid


@pytest.fixture(scope="module")
def colossal_fresh():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="fresh-2026-12c")


def test_third_fresh_sample_bounds(colossal_fresh):
    # ColossalChat's hardware requirements (docs/estimates.md section 19): 6.3% median, 17.6% p90 on 24 rows at
    # first sight; 2.2% / 19.9% with DeepSpeed-style ZeRO's fp32 gradient partition only in the step, coati's
    # loops keeping their outputs and DPO's log-probs on the fp32 logits transformers 4.39 returns
    assert len(colossal_fresh["rows"]) == 24 and not colossal_fresh["skipped"]
    assert colossal_fresh["median"] <= 0.025
    assert colossal_fresh["p90"] <= 0.20


def test_colossalai_rows_are_read_with_the_plugin_and_loop_they_ran():
    accuracy = _accuracy()
    cases = _cases("fresh-2026-12c")
    ref = accuracy._reference_shapes()
    dpo, _, hw = accuracy.convert(cases["cc-10"], ref)
    mech = dpo.mechanisms
    # LowLevelZeroPlugin(stage=2): 12M-element buckets, per-parameter gradients; coati keeps the outputs
    assert dpo.zero_stage == 2 and hw.n_gpus == 4 and dpo.stage == "dpo" and not dpo.offload_optimizer
    assert mech.zero_reduce_bucket == 12 * 1024 * 1024 and mech.zero_contiguous_grads is False
    assert mech.keeps_outputs and mech.transformers_version == "4.39.3"
    offloaded, _, _ = accuracy.convert(cases["cc-03"], ref)
    assert offloaded.offload_optimizer and not offloaded.offload_params
    # every figure is torch's max allocated, MiB in the README, stored as GiB
    assert all(accuracy.kind_of(c) == "allocated" for c in cases.values())


@pytest.fixture(scope="module")
def fourth_fresh():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="fresh-2026-12d")


def test_fourth_fresh_sample_bounds(fourth_fresh):
    # GLM-4, ChatGLM3, torchtune's llama3 tutorial, PEFT's FSDP guide and Qwen2.5's LLaMA-Factory and ms-swift
    # pages (docs/estimates.md section 23): 11.7% median, 43.0% p90 on 10 scored rows at first sight; 10.6% /
    # 37.5% with ZeRO's fp32 master clone in fp32 runs and bitsandbytes' block statistics whole on every FSDP rank
    assert len(fourth_fresh["rows"]) == 10 and not fourth_fresh["skipped"]
    assert fourth_fresh["median"] <= 0.11
    assert fourth_fresh["p90"] <= 0.38


def test_remote_code_rows_are_read_as_their_code_runs():
    accuracy = _accuracy()
    cases = _cases("fresh-2026-12d")
    ref = accuracy._reference_shapes()
    sft, _, hw = accuracy.convert(cases["fd-04"], ref)
    # ChatGLM3's finetune_hf.py casts every trainable parameter to fp32 and enables no checkpointing; its
    # CoreAttention runs SDPA under torch 2
    assert sft.precision == "fp32" and sft.zero_stage == 3 and hw.n_gpus == 4 and not sft.grad_ckpt
    assert sft.attention == "sdpa"
    glm, _, _ = accuracy.convert(cases["fd-02"], ref)
    # GLM-4's GLMTransformer checkpoints each block with use_reentrant=False
    assert glm.grad_ckpt and glm.mechanisms.use_reentrant is False and glm.pure_bf16
    # the torchtune row is bounded by the dataset's max_seq_len, not by Alpaca's longest sample
    tune, _, _ = accuracy.convert(cases["fd-08"], ref)
    assert tune.seq_len == 512
    # a LLaMA-Factory run is read as LLaMA-Factory runs it (its loader, not the HF Trainer's fp32 default)
    lf, _, _ = accuracy.convert(cases["fd-13"], ref)
    assert lf.framework == "llamafactory" and lf.method == "qlora" and lf.seq_len == 1024


@pytest.fixture(scope="module")
def fifth_fresh():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="fresh-2026-12e")


def test_fifth_fresh_sample_bounds(fifth_fresh):
    # measured peaks users posted in issue threads (docs/estimates.md section 24): 14 scored rows, 8.7% median and
    # 23.8% p90 at first sight as drawn, 6.4% / 23.8% with the Chinese-LLaMA-2 rows read with their own vocabulary
    assert len(fifth_fresh["rows"]) == 14 and not fifth_fresh["skipped"]
    assert fifth_fresh["median"] <= 0.065
    assert fifth_fresh["p90"] <= 0.24


def test_issue_thread_rows_are_read_as_posted():
    accuracy = _accuracy()
    cases = _cases("fresh-2026-12e")
    ref = accuracy._reference_shapes()
    # a shape the converter names exactly wins over the catalog's nearest family stand-in: Chinese-LLaMA-2 keeps
    # its 55,296-row vocabulary, and its trained embed_tokens/lm_head copies are that size
    pt, shape, hw = accuracy.convert(cases["fi-15"], ref)
    assert shape.vocab_size == 55296 and pt.quant_bits == 4 and pt.zero_stage == 2 and hw.n_gpus == 1
    assert pt.extras["modules_to_save"] == "embed_tokens,lm_head" and pt.packing and pt.seq_len == 512
    # FastChat pads every sample to model_max_length: ToolBench's full run is 2 x 8192 on four FSDP ranks
    full, _, hw = accuracy.convert(cases["fi-06"], ref)
    assert full.seq_len == 8192 and full.fsdp == "full_shard" and hw.n_gpus == 4 and full.load_dtype == "fp32"
    # the identity dataset's longest sample, not the cutoff bound, under ZeRO-3 with both offloads
    z3, _, _ = accuracy.convert(cases["fi-08"], ref)
    assert z3.seq_len == 60 and z3.zero_stage == 3 and z3.offload_params and z3.offload_optimizer
    # a row whose setup cannot be known is kept and not scored
    assert all(cases[i]["reliability"] == "low" for i in ("fi-04", "fi-05", "fi-10", "fi-11", "fi-19", "fi-20", "fi-21"))


def test_megatron_swift_rows_are_flattened_micro_batches_of_their_datasets_samples():
    # Megatron-SWIFT flattens a micro-batch's samples into one row (swift/llm/template/base.py _data_collator at
    # ea766ff5b: packing_mode = self.use_megatron): lora/dense.sh's 16 samples of alpaca-gpt4 / self-cognition are
    # at most 16 x 607 tokens, not 16 x max_length (docs/estimates.md section 28)
    accuracy = _accuracy()
    setup = accuracy.convert(_cases()["mg-02"], accuracy._reference_shapes())[0]
    assert setup.megatron and setup.micro_batch * setup.seq_len == 16 * 607
    # with the loss's bf16 logits beside the fp32 copy (memory/megatron.py LOSS_BYTES_PER_LOGIT): 7.3% / 12.9%
    megatron = accuracy.run(verbose=False, subset="megatron")
    assert megatron["median"] <= 0.08 and megatron["p90"] <= 0.15


@pytest.fixture(scope="module")
def eighth_fresh():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="fresh-2026-12h")


def test_eighth_fresh_sample_bounds(eighth_fresh):
    # PEFT's result files, ms-swift's documentation and crash threads (docs/estimates.md section 33): 23 scored rows
    # and 3 crashes, 5.3% median and 6.5% p90 at first sight; every crash predicted not to fit
    assert len(eighth_fresh["rows"]) == 23 and not eighth_fresh["skipped"]
    assert eighth_fresh["median"] <= 0.055
    assert eighth_fresh["p90"] <= 0.07
    assert len(eighth_fresh["oom"]) == 3 and all(flagged for *_, flagged in eighth_fresh["oom"])


def test_lora_fa_rows_are_read_with_their_optimizer():
    # PEFT's method comparison runs LoRA-FA as optimizer_type "lora-fa": lora_A frozen, its input not kept
    accuracy = _accuracy()
    ref = accuracy._reference_shapes()
    fa, _, _ = accuracy.convert(_cases()["fh-13"], ref)
    plain, _, _ = accuracy.convert(_cases()["fh-14"], ref)
    assert fa.optimizer == "lora-fa" and plain.optimizer == "adamw_torch"
    rows = {r[0]: r for r in accuracy.run(verbose=False, subset="fresh-2026-12h")["rows"]}
    assert abs(rows["fh-13"][4]) <= 0.07


@pytest.fixture(scope="module")
def ninth_fresh():
    accuracy = _accuracy()
    return accuracy.run(verbose=False, subset="fresh-2026-12i")


def test_ninth_fresh_sample_bounds(ninth_fresh):
    # peaks and crashes users posted in threads (docs/estimates.md section 35): 4 scored rows and 1 crash; 28.8%
    # median and 118.9% p90 at first sight, 15.6% / 40.7% with fms-acceleration's rows read under their
    # transformers pin; the crash predicted not to fit; the six rows whose setup the thread lacks are not scored
    assert len(ninth_fresh["rows"]) == 4 and not ninth_fresh["skipped"]
    assert ninth_fresh["median"] <= 0.16
    assert ninth_fresh["p90"] <= 0.41
    assert len(ninth_fresh["oom"]) == 1 and all(flagged for *_, flagged in ninth_fresh["oom"])
    cases = _cases("fresh-2026-12i")
    assert sorted(i for i, c in cases.items() if c["reliability"] == "low") == [
        "fj-05", "fj-06", "fj-08", "fj-09", "fj-10", "fj-11"]


def test_transformers_pin_decides_whether_bnb_saved_inputs_escape_checkpointing():
    # fms-acceleration's plugins pin transformers<4.40 (plugins/framework/pyproject.toml at f1895b7), whose
    # gradient_checkpointing_enable defaults to use_reentrant=True: the layer runs under no_grad in forward and
    # bitsandbytes' ctx.tensors are not kept. An HF/TRL run that names no version is read as transformers 5
    # (non-reentrant), where they escape the checkpoint's saved-tensor hooks in every layer.
    from oomdoctor.memory import estimate

    accuracy = _accuracy()
    ref = accuracy._reference_shapes()
    pinned = _cases("fresh-2026-12i")["fj-03"]
    unpinned = {k: v for k, v in pinned.items() if k not in ("transformers_version", "transformers_source")}
    acts = {}
    for name, case in (("pinned", pinned), ("unpinned", unpinned)):
        setup, shape, hw = accuracy.convert(case, ref)
        acts[name] = estimate(setup, shape, hw).details["activations_gib"]
    assert acts["pinned"] < 6.0 < 20.0 < acts["unpinned"]
    rows = {r[0]: r for r in accuracy.run(verbose=False, subset="fresh-2026-12i")["rows"]}
    assert abs(rows["fj-03"][4]) <= 0.15


def test_torchtune_qlora_tutorial_row_is_reached_through_its_releases_init():
    # the row carries torchtune 0.1.0 (0914d5cfb; torchao==0.1): training's reserved starts from what the on-device
    # NF4 build and load left (memory/initload.py), 9.13 GB in the tutorial's model-init column (docs/estimates.md
    # section 34); -41.3% without it
    accuracy = _accuracy()
    case = _cases()["fg-01"]
    setup, shape, hw = accuracy.convert(case, accuracy._reference_shapes())
    assert setup.framework == "torchtune" and setup.framework_version == "0.1.0"
    from oomdoctor.memory import estimate
    est = estimate(setup, shape, hw)
    measured = accuracy.measured_gib(case)
    assert abs(accuracy.predicted(est, accuracy.kind_of(case)) - measured) / measured < 0.05


def test_bitsandbytes_pin_decides_whether_4bit_inputs_escape_checkpointing():
    # bitsandbytes 0.43.2 (9e753741) made MatMul4Bit keep `ctx.tensors = (None, B)`: from that release a 4-bit
    # linear keeps no input past non-reentrant checkpointing. ax-23 (Llama-4 Scout FSDP2 QLoRA) ran axolotl
    # 682a9cf79, whose requirements.txt pins bitsandbytes==0.45.4; read without the pin its 48 linearized experts
    # a layer keep the repeated input and the up * act product: +32.9% (docs/estimates.md section 36b)
    from oomdoctor.memory import estimate

    accuracy = _accuracy()
    ref = accuracy._reference_shapes()
    pinned = _cases("fresh-2026-12b")["ax-23"]
    assert pinned["bitsandbytes_version"] == "0.45.4"
    acts = {}
    for name, version in (("pinned", None), ("unpinned", ""), ("before the fix", "0.43.1")):
        case = dict(pinned) if version is None else {**pinned, "bitsandbytes_version": version}
        setup, shape, hw = accuracy.convert(case, ref)
        acts[name] = estimate(setup, shape, hw).details["activations_gib"]
    assert acts["pinned"] < 5.0 < 20.0 < acts["unpinned"] == acts["before the fix"]
    rows = {r[0]: r for r in accuracy.run(verbose=False, subset="fresh-2026-12b")["rows"]}
    assert abs(rows["ax-23"][4]) <= 0.10 and abs(rows["ax-22"][4]) <= 0.10
