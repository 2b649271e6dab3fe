"""Megatron-Core runs: ms-swift's `megatron sft` and verl's megatron strategy read with their parallel sizes, the
memory model's rank shard (tensor, pipeline, expert parallelism; fp32 main gradients; the distributed optimizer;
Korthikanti activations), and the plan's DeepSpeed/FSDP rungs kept away from them."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers import read_yaml

from oomdoctor.configs import load_config
from oomdoctor.facts import Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory import megatron as meg
from oomdoctor.memory.params import _count
from oomdoctor.models import resolve_model
from oomdoctor.planner import holds, load_rules
from oomdoctor.planner.registry import gather

DATA = Path(__file__).parent / "data"
SCRIPTS = DATA / "real-configs" / "scripts"
FIXTURES = read_yaml(DATA / "rules" / "fixtures.yaml")
H100 = Hardware(gpu="H100", gpu_gib=80.0, n_gpus=8)
# Qwen2.5-7B's numbers (config.json): 28 layers, hidden 3584, GQA 28/4, intermediate 18944, vocabulary 152064
QWEN7B = ModelShape("Qwen/Qwen2.5-7B", model_type="qwen2", hidden_size=3584, intermediate_size=18944,
                    num_layers=28, num_heads=28, num_kv_heads=4, vocab_size=152064, attention_bias=True)


def _run(**values) -> TrainingSetup:
    base = dict(framework="ms-swift", model="Qwen/Qwen2.5-7B", method="full", micro_batch=1, seq_len=2048,
                n_gpus=8, megatron=True, distributed_optimizer=True, recompute="selective", grad_ckpt=True)
    return TrainingSetup(**{**base, **values})


def test_megatron_sft_script_reads_its_parallel_sizes_and_splits_the_global_batch_over_data_parallel():
    setup = load_config(str(SCRIPTS / "swift_docs_mcore_bridge_qwen3_vl_8b.sh"))
    assert setup.megatron and setup.framework == "ms-swift"
    assert (setup.tensor_parallel, setup.pipeline_parallel, setup.sequence_parallel) == (2, 1, True)
    assert (setup.recompute, setup.recompute_method, setup.recompute_layers) == ("full", "uniform", 1)
    assert setup.source_of("tensor_parallel").key == "tensor_model_parallel_size"
    # --global_batch_size 4 over 2 GPUs that are one tensor-parallel pair: 1 data-parallel rank, 4 micro-batches
    assert (setup.n_gpus, setup.data_parallel, setup.grad_accum) == (2, 1, 4)
    # MegatronArguments' default (swift/megatron/arguments/megatron_args.py): the distributed optimizer is on
    assert setup.distributed_optimizer and not setup.stated("distributed_optimizer")


def test_megatron_model_name_is_the_self_cognition_name_not_the_model():
    setup = load_config(str(SCRIPTS / "swift_docs_megatron_quick_start_mcore.sh"))
    assert setup.model == "Qwen2.5-7B-Instruct-mcore"      # --mcore_model, not --model_name swift-robot


def test_verl_megatron_strategy_reads_the_actor_megatron_group():
    setup = load_config(str(DATA / "real-configs" / "verl" / "user_pr7519_megatron_qwen3_8b_cut.sh"))
    assert setup.megatron and setup.tensor_parallel == 2 and setup.data_parallel == 4
    assert setup.sequence_parallel and setup.distributed_optimizer       # verl's megatron defaults
    # ppo_mini_batch_size 32 over 4 data-parallel ranks (8 GPUs / TP 2), micro-batch 4: 2 micro-batches a step
    assert setup.grad_accum == 2
    # no override_transformer_config.recompute_granularity: the Megatron workers do not checkpoint
    assert not setup.grad_ckpt and setup.recompute == ""


def test_verl_megatron_run_counts_the_colocated_rollout_engine_beside_the_rank_shard():
    setup = load_config(str(DATA / "real-configs" / "verl" / "user_pr7519_megatron_qwen3_8b_cut.sh"))
    # the paste is cut before its rollout group: name the engine verl's examples use
    setup = replace(setup, extras={**setup.extras, "rollout_engine": "vllm"})
    shape = resolve_model(setup.model)
    est = estimate(setup, shape, H100)
    alone = estimate(replace(setup, framework="ms-swift"), shape, H100)
    # the rollout engine (memory/hybrid.py) is counted for verl's megatron workers as for its FSDP ones
    assert "rollout" in est.moments and est.details.get("verl_rollout_peak_gib", 0) > 0
    assert "rollout" not in alone.moments and est.peak_gib >= alone.peak_gib


def test_tensor_parallel_halves_the_weights_and_the_distributed_optimizer_splits_states_over_data_parallel():
    counts = _count(QWEN7B)
    one = meg.model_state_bytes(_run(n_gpus=1), QWEN7B, counts, meg.rank_shard(_run(n_gpus=1), QWEN7B, counts, "first"))
    tp2 = _run(n_gpus=2, tensor_parallel=2)
    two = meg.model_state_bytes(tp2, QWEN7B, counts, meg.rank_shard(tp2, QWEN7B, counts, "first"))
    assert two[0] == pytest.approx(one[0] / 2, rel=0.01)        # bf16 weights: the TP shard
    assert one[1] == pytest.approx(2 * one[0])                   # fp32 main gradients: twice the bf16 weights
    dp8 = _run(n_gpus=8)
    w, g, o = meg.model_state_bytes(dp8, QWEN7B, counts, meg.rank_shard(dp8, QWEN7B, counts, "first"))
    assert o == pytest.approx(one[2] / 8)                        # 12 bytes a weight over 8 data-parallel ranks
    off = replace(dp8, distributed_optimizer=False)
    assert meg.model_state_bytes(off, QWEN7B, counts, meg.rank_shard(off, QWEN7B, counts, "first"))[2] == \
        pytest.approx(one[2])


def test_first_pipeline_stage_holds_the_embedding_and_pp_micro_batches_in_flight():
    setup = _run(n_gpus=4, pipeline_parallel=4, grad_accum=8, recompute="")
    counts = _count(QWEN7B)
    first = meg.rank_shard(setup, QWEN7B, counts, "first")
    middle_layers = (counts.total - counts.embeddings - counts.lm_head) / 4
    assert first.total == pytest.approx(middle_layers + counts.embeddings, rel=1e-6)
    assert meg.in_flight(setup) == 4
    assert meg.in_flight(replace(setup, grad_accum=2)) == 2          # a step of 2 micro-batches fills 2 slots
    assert meg.in_flight(replace(setup, virtual_pipeline=2)) == pytest.approx(4 * (1 + 3 / 8))


def test_full_recompute_keeps_layer_inputs_only():
    none, full = _run(recompute="", grad_ckpt=False), _run(recompute="full", recompute_method="uniform", recompute_layers=1)
    kept_none, _ = meg.activation_bytes(none, QWEN7B)
    kept_full, _ = meg.activation_bytes(full, QWEN7B)
    tokens_hidden = 2048 * 3584
    # each layer's input in bf16 plus one layer rebuilt, against every layer's sbh(18 + 4f/h)
    assert kept_full == pytest.approx(28 * 2 * tokens_hidden + meg.layer_activation_bytes(full, QWEN7B, 2048)
                                      + tokens_hidden + 8 * 2048)
    assert kept_none > 5 * kept_full


def test_megatron_estimate_of_ms_swift_sft_example_is_near_its_published_figure():
    # ms-swift examples/megatron/sft.sh (3602360a): Qwen2.5-7B full, TP 2 with sequence parallelism, micro-batch 16,
    # full uniform recompute of 1 layer, 2 GPUs. The figure written for these flags is lora/dense.sh's
    # "full: 2 * 70GiB" (ea766ff5b; sft.sh's "2 * 80GiB" dates from its micro-batch-4 version); a Megatron-SWIFT
    # micro-batch is its samples flattened, at most 16 x 607 tokens of alpaca-gpt4 and self-cognition
    setup = _run(n_gpus=2, tensor_parallel=2, sequence_parallel=True, micro_batch=16, seq_len=607, recompute="full",
                 recompute_method="uniform", recompute_layers=1)
    est = estimate(setup, QWEN7B, replace(H100, n_gpus=2))
    assert est.peak_gib == pytest.approx(70, rel=0.05)
    assert est.components["gradients"] == pytest.approx(2 * est.components["weights"], rel=0.01)


def test_megatron_loss_holds_the_bf16_logits_beside_the_cross_entropys_fp32_copy():
    # vocab-parallel cross entropy: `.float()` of the bf16 logits (kept as the softmax) while the model still holds
    # the bf16 ones: 6 bytes a logit over TP, against the 4 of Megatron-LM's theoretical formula
    setup = _run(n_gpus=2, tensor_parallel=2, sequence_parallel=True, micro_batch=4, seq_len=2048)
    wider = replace(QWEN7B, vocab_size=QWEN7B.vocab_size + 64_000)
    grown = meg.logits_bytes(setup, wider) - meg.logits_bytes(setup, QWEN7B)
    assert grown == pytest.approx(4 * 2048 * 64_000 * (4 + 2) / 2)


@pytest.mark.parametrize("rid", ["OOM011", "OOM014", "OOM015", "OOM016", "OOM017"])
def test_deepspeed_fsdp_and_bitsandbytes_rungs_stay_quiet_for_a_megatron_run(rid):
    rule = load_rules().get(rid)
    case = FIXTURES[rid]["fires"]
    from test_rules_catalogue import SHAPE, _world

    setup, hw, crash, est = _world(case)
    assert holds(rule.when, gather(setup, SHAPE, hw, crash, est))        # fires for the HF Trainer
    setup = replace(setup, megatron=True)
    assert not holds(rule.when, gather(setup, SHAPE, hw, crash, est))


def test_megatron_estimate_is_only_taken_for_megatron_runs():
    plain = TrainingSetup(framework="ms-swift", method="full", n_gpus=2, tensor_parallel=2)
    assert not any(n.code == "memory.note.megatron" for n in estimate(plain, QWEN7B, H100).notes)
    assert any(n.code == "memory.note.megatron" for n in estimate(_run(), QWEN7B, H100).notes)
    assert _run().effective_batch == 8 and _run(tensor_parallel=2).effective_batch == 4


def test_a_megatron_plan_patches_the_micro_batch_flag_and_keeps_the_global_batch(tmp_path, capsys):
    from oomdoctor.cli import main

    script = tmp_path / "train.sh"
    script.write_text((SCRIPTS / "swift_docs_megatron_quick_start_mcore.sh").read_text())
    patch = tmp_path / "fix.diff"
    assert main([str(script), "--gpu", "H100", "--plain", "--export", str(patch)]) == 1
    capsys.readouterr()
    diff = patch.read_text()
    assert "-    --micro_batch_size 16 \\" in diff and "+    --micro_batch_size " in diff
    assert "global_batch_size" not in "".join(line for line in diff.splitlines() if line[:1] in "+-")


def test_the_report_names_megatron_parallelism_and_the_json_carries_it(capsys):
    import json

    from oomdoctor.cli import main

    script = str(SCRIPTS / "swift_docs_megatron_quick_start_mcore.sh")
    main([script, "--gpu", "H100", "--plain"])
    assert "Megatron TP 2 × PP 1" in capsys.readouterr().out.replace("\n       ", " ")
    main([script, "--gpu", "H100", "--json"])
    setup = json.loads(capsys.readouterr().out)["setup"]
    assert setup["megatron"]["tensor_parallel"] == 2 and setup["megatron"]["data_parallel"] == 1
