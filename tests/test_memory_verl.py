"""verl's hybrid engine as verl lays it out (oomdoctor/memory/hybrid.py): the rollout engine's share of the card and
what of it stays beside the actor's update, the log-prob passes, the critic, the CPU-offloaded reference model, the
actor's offloads between phases, and the actor's loss on compute-dtype logits. Each test reads a verl run from its
own overrides and changes one key."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.facts import GIB, Hardware, ModelShape
from oomdoctor.memory import estimate
from oomdoctor.memory.runtime import CUDA_CONTEXT_GIB

CORPUS = Path(__file__).parent / "data" / "real-configs"
H100 = Hardware(gpu="H100 80GB", gpu_gib=79.11, n_gpus=8)
# Qwen/Qwen2.5-7B-Instruct config.json
QWEN25_7B = ModelShape(name="Qwen/Qwen2.5-7B-Instruct", model_type="qwen2", hidden_size=3584, intermediate_size=18944,
                       num_layers=28, num_heads=28, num_kv_heads=4, vocab_size=152064, attention_bias=True)
# Qwen/Qwen2.5-VL-7B-Instruct's language model (config.json text part)
QWEN25_VL_7B = replace(QWEN25_7B, name="Qwen/Qwen2.5-VL-7B-Instruct")

BASE = {
    "algorithm.adv_estimator": "grpo",
    "data.max_prompt_length": "512",
    "data.max_response_length": "1024",
    "actor_rollout_ref.model.path": "Qwen/Qwen2.5-7B-Instruct",
    "actor_rollout_ref.actor.ppo_mini_batch_size": "32",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": "2",
    "actor_rollout_ref.rollout.name": "vllm",
    "actor_rollout_ref.rollout.gpu_memory_utilization": "0.6",
    "actor_rollout_ref.rollout.n": "4",
    "trainer.n_gpus_per_node": "8",
}


def _run(tmp_path: Path, **changes: str):
    keys = {**BASE, **{k.replace("__", "."): v for k, v in changes.items()}}
    text = "python3 -m verl.trainer.main_ppo \\\n" + " \\\n".join(f"    {k}={v}" for k, v in keys.items() if v) + "\n"
    path = tmp_path / "run.sh"
    path.write_text(text, encoding="utf-8")
    setup = load_config(str(path))
    return setup, estimate(setup, QWEN25_7B, H100)


def test_a_real_grpo_run_counts_its_engine_beside_the_update_when_free_cache_engine_is_off():
    # examples/grpo_trainer/run_qwen2_5_vl-7b_lora.sh: vLLM at 0.6 of the card, free_cache_engine=False, LoRA
    setup = load_config(str(CORPUS / "verl" / "head_grpo_qwen2_5_vl_7b_lora.sh"))
    est = estimate(setup, QWEN25_VL_7B, H100)
    engine = 0.6 * H100.gpu_gib
    assert est.details["verl_engine_gib"] == pytest.approx(engine)
    # the engine keeps its weights and KV cache through the update: its share and its process's CUDA context
    assert est.details["verl_engine_idle_gib"] == pytest.approx(engine + CUDA_CONTEXT_GIB)
    assert est.details["verl_update_peak_gib"] > engine + est.details["model_states_gib"]
    assert "rollout" in est.moments and "log prob" in est.moments
    assert any(n.code == "memory.note.verl_engine" for n in est.notes)


def test_a_real_full_grpo_run_keeps_its_kl_reference_in_host_ram_and_its_sleeping_engine_small():
    # examples/grpo_trainer/run_qwen2_5_vl-7b_freeze_vision.sh: full tuning, use_kl_loss, free_cache_engine=True
    setup = load_config(str(CORPUS / "verl" / "head_grpo_qwen2_5_vl_7b_freeze_vision.sh"))
    est = estimate(setup, QWEN25_VL_7B, H100)
    assert setup.mechanisms.ref_model_offloaded and setup.mechanisms.rollout_sleeps
    # the bf16 reference, sharded over 8 GPUs, all 8 shards in the node's RAM
    assert est.host_ram_gib == pytest.approx(est.details["params_total"] * 2 / GIB)
    assert est.details["verl_engine_idle_gib"] == pytest.approx(CUDA_CONTEXT_GIB)
    assert est.details["verl_rollout_peak_gib"] > 0.6 * H100.gpu_gib
    assert est.peak_gib == pytest.approx(max(est.details[f"verl_{k}_peak_gib"] for k in ("update", "log_prob", "rollout")))


def test_vllm_takes_its_fraction_of_the_whole_card_and_sglang_of_what_is_free(tmp_path):
    _, vllm = _run(tmp_path)
    _, sglang = _run(tmp_path, actor_rollout_ref__rollout__name="sglang")
    assert vllm.details["verl_engine_gib"] == pytest.approx(0.6 * H100.gpu_gib)
    resident = vllm.moments["rollout"] - vllm.details["cublas_workspace_gib"]
    assert sglang.details["verl_engine_gib"] == pytest.approx(0.6 * (H100.gpu_gib - resident - CUDA_CONTEXT_GIB))
    # the rollout moment: the trainer's resident shards, two CUDA contexts and the engine's share
    assert vllm.details["verl_rollout_peak_gib"] == pytest.approx(
        vllm.moments["rollout"] + 2 * CUDA_CONTEXT_GIB + 0.6 * H100.gpu_gib)


def test_a_sleeping_engine_leaves_only_its_context_beside_the_update(tmp_path):
    _, asleep = _run(tmp_path)
    _, awake = _run(tmp_path, actor_rollout_ref__rollout__free_cache_engine="False")
    assert asleep.details["verl_engine_idle_gib"] == pytest.approx(CUDA_CONTEXT_GIB)
    assert awake.details["verl_update_peak_gib"] - asleep.details["verl_update_peak_gib"] == \
        pytest.approx(awake.details["verl_engine_gib"])


def test_the_actors_offloads_free_the_rollout_but_not_the_update(tmp_path):
    _, kept = _run(tmp_path)
    setup, off = _run(tmp_path, actor_rollout_ref__actor__fsdp_config__param_offload="True",
                      actor_rollout_ref__actor__fsdp_config__optimizer_offload="True")
    assert setup.mechanisms.phase_offload
    assert off.details["verl_update_peak_gib"] == pytest.approx(kept.details["verl_update_peak_gib"])
    assert off.moments["rollout"] < 0.1 < kept.moments["rollout"]
    assert off.host_ram_gib > kept.host_ram_gib


def test_gae_trains_a_critic_whose_shards_stay_on_the_card_unless_offloaded(tmp_path):
    _, grpo = _run(tmp_path)
    _, ppo = _run(tmp_path, algorithm__adv_estimator="gae")
    _, ppo_off = _run(tmp_path, algorithm__adv_estimator="gae", critic__model__fsdp_config__param_offload="True",
                      critic__model__fsdp_config__optimizer_offload="True")
    # fp32 weights and two fp32 AdamW states of the model with a one-output value head, over 8 GPUs
    params = (grpo.details["params_total"] - QWEN25_7B.vocab_size * QWEN25_7B.hidden_size + QWEN25_7B.hidden_size)
    critic = params * 12 / 8 / GIB
    assert ppo.details["verl_critic_on_card_gib"] == pytest.approx(critic)
    assert ppo.details["verl_update_peak_gib"] - grpo.details["verl_update_peak_gib"] == pytest.approx(critic)
    assert ppo_off.details["verl_critic_on_card_gib"] == 0.0
    assert ppo_off.host_ram_gib == pytest.approx(critic * 8)


def test_the_kl_loss_loads_a_reference_model_into_host_ram_not_onto_the_card(tmp_path):
    _, none = _run(tmp_path)
    _, ref = _run(tmp_path, actor_rollout_ref__actor__use_kl_loss="True")
    assert ref.host_ram_gib - none.host_ram_gib == pytest.approx(none.details["params_total"] * 2 / GIB)
    assert ref.details["verl_update_peak_gib"] == pytest.approx(none.details["verl_update_peak_gib"])
    # with LoRA the reference is the actor with its adapters disabled: nothing more to hold
    _, lora = _run(tmp_path, actor_rollout_ref__actor__use_kl_loss="True", actor_rollout_ref__model__lora_rank="32")
    assert not lora.host_ram_gib


def test_the_log_prob_pass_holds_its_micro_batch_of_compute_dtype_logits(tmp_path):
    _, small = _run(tmp_path, actor_rollout_ref__rollout__log_prob_micro_batch_size_per_gpu="8")
    _, large = _run(tmp_path, actor_rollout_ref__rollout__log_prob_micro_batch_size_per_gpu="16")
    tokens = 8 * 1536
    assert small.details["verl_log_prob_logits_gib"] == pytest.approx(tokens * QWEN25_7B.vocab_size * 2 / GIB)
    assert large.moments["log prob"] > small.moments["log prob"] + tokens * QWEN25_7B.vocab_size * 2 / GIB
    # eager entropy (use_torch_compile off) materialises the softmax and its product beside the logits
    _, eager = _run(tmp_path, actor_rollout_ref__rollout__log_prob_micro_batch_size_per_gpu="8",
                    actor_rollout_ref__actor__use_torch_compile="False")
    assert eager.details["verl_log_prob_logits_gib"] == pytest.approx(3 * small.details["verl_log_prob_logits_gib"])


def test_a_large_log_prob_micro_batch_sets_the_peak(tmp_path):
    _, est = _run(tmp_path, actor_rollout_ref__rollout__log_prob_micro_batch_size_per_gpu="64",
                  actor_rollout_ref__rollout__gpu_memory_utilization="0.3")
    assert est.peak_moment == "log prob"
    assert est.peak_gib == pytest.approx(est.details["verl_log_prob_peak_gib"])
    assert est.components["logits"] == pytest.approx(est.details["verl_log_prob_logits_gib"])


def test_a_high_engine_share_with_resident_states_sets_the_peak_at_rollout(tmp_path):
    _, est = _run(tmp_path, actor_rollout_ref__rollout__gpu_memory_utilization="0.9")
    assert est.peak_moment == "rollout"
    assert est.peak_gib == pytest.approx(est.details["verl_rollout_peak_gib"])
    assert sum(est.components.values()) == pytest.approx(est.peak_gib, rel=1e-6)
    assert not est.fits


def test_the_actor_update_holds_compute_dtype_logits_not_an_fp32_copy(tmp_path):
    setup, est = _run(tmp_path)
    tokens = 2 * 1536
    assert est.details["moment_loss_logits_gib"] == pytest.approx(tokens * QWEN25_7B.vocab_size * 2 / GIB)
    _, entropy = _run(tmp_path, actor_rollout_ref__actor__entropy_coeff="0.001")
    # the entropy's gradient needs its own buffer: flash-attn's in-place backward is off
    assert entropy.details["moment_logits_backward_logits_gib"] > est.details["moment_logits_backward_logits_gib"]
