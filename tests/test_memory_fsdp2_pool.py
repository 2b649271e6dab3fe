"""FSDP2's all-gather outputs live in their own stream's pool (docs/estimates.md section 29): torch's fully_shard
allocates them on the all-gather copy-in stream, and the caching allocator never lends one stream's cached blocks
to another, so the pool's peak (two units' outputs) stays reserved beside every moment's tensors. FSDP1 gathers into the unsharded
parameters themselves, which the estimate already holds."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.facts import GIB, Hardware, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.models import _from_catalog

GPT_OSS = _from_catalog("openai/gpt-oss-20b")   # 24 layers of 32 experts; 201088 x 2880 embeddings and output
HW = Hardware(gpu="grid", gpu_gib=1e6)
REF = Path(__file__).parent / "data" / "reference"


def full_ft(version: int | None, **kw) -> TrainingSetup:
    extras = {"fsdp_version": version} if version else {}
    base = dict(framework="axolotl", precision="bf16", load_dtype="bf16", method="full", micro_batch=1,
                seq_len=4096, packing=True, grad_ckpt=True, attention="flash_attention_2", fsdp="full_shard",
                n_gpus=8, optimizer="adamw_torch_fused", extras=extras)
    base.update(kw)
    return TrainingSetup(**base)


def test_fsdp2_reserves_two_all_gather_outputs_beside_the_compute_stream():
    v1, v2 = estimate(full_ft(None), GPT_OSS, HW), estimate(full_ft(2), GPT_OSS, HW)
    assert v2.allocated_gib == v1.allocated_gib          # what is live does not change, only what stays cached
    from oomdoctor.memory.params import count_params
    counts = count_params(GPT_OSS)
    # two outputs at the pool's peak (the root's 2.2 GiB and a layer's 1.5); the prefetched layer's is one of the
    # two gathered units every moment already holds, so the root's block is what stays idle beside them
    root = (counts.embeddings + counts.lm_head) * 2 / GIB
    assert root > counts.largest_layer * 2 / GIB and root > 2.0
    grown = v2.details["reserved_gib"] - v1.details["reserved_gib"]
    assert abs(grown - root) <= v1.details["allocator_reserve_gib"] + 1e-9


def test_fsdp2_pool_is_in_quantized_storage_for_qlora_and_absent_without_sharding():
    qlora = dict(method="qlora", quant_bits=4, lora_rank=16, lora_targets=("all",))
    with_pool = estimate(full_ft(2, **qlora), GPT_OSS, HW).details["reserved_gib"]
    without = estimate(full_ft(1, **qlora), GPT_OSS, HW).details["reserved_gib"]
    assert with_pool > without
    ddp = estimate(full_ft(2, fsdp=None), GPT_OSS, HW).details["reserved_gib"]
    assert ddp == estimate(full_ft(None, fsdp=None), GPT_OSS, HW).details["reserved_gib"]


def test_readers_name_fsdp2_from_accelerate_and_from_axolotls_fsdp_config():
    from oomdoctor.configs import load_config
    accelerate = load_config(str(REF / "example-configs" / "trl_fsdp2.yaml"))   # fsdp_config.fsdp_version: 2
    axolotl = load_config(str(REF / "axolotl-examples" / "glm47-flash" / "qlora_fsdp.yaml"))  # nested likewise
    fsdp1 = load_config(str(REF / "axolotl-examples" / "llama-3" / "qlora-fsdp-70b.yaml"))
    assert (accelerate.mechanisms.fsdp_version, axolotl.mechanisms.fsdp_version) == (2, 2)
    assert fsdp1.mechanisms.fsdp_version == 1 and fsdp1.fsdp == "full_shard"


def test_fsdp2_offload_adds_the_host_shard_and_the_reduce_scatter_output_on_their_streams():
    from oomdoctor.memory.params import count_params
    counts_layer = count_params(GPT_OSS).largest_layer * 2 / GIB
    on = estimate(full_ft(2, offload_params=True, n_gpus=2), GPT_OSS, HW).details["reserved_gib"]
    off_v1 = estimate(full_ft(None, offload_params=True, n_gpus=2), GPT_OSS, HW).details["reserved_gib"]
    plain = estimate(full_ft(2, n_gpus=2), GPT_OSS, HW).details["reserved_gib"] - \
        estimate(full_ft(None, n_gpus=2), GPT_OSS, HW).details["reserved_gib"]
    counts = count_params(GPT_OSS)
    # the host shard copied in on the all-gather stream, and the reduce-scatter stream's gradient shard of the
    # largest trainable unit (the root, in a full fine-tune), freed there once copied to the host
    rs_block = (counts.embeddings + counts.lm_head) * 2 / GIB / 2
    assert (on - off_v1) - plain == pytest.approx(counts_layer / 2 + rs_block, abs=0.05)



def test_torchtune_distributed_recipes_are_fsdp2_from_0_3():
    from oomdoctor.configs import load_config
    path = str(Path(__file__).parent / "data" / "real-configs" / "torchtune" / "head_llama3_1_8B_full.yaml")
    assert load_config(path).mechanisms.fsdp_version == 2          # fully_shard since 0.3.0
    assert load_config(path, framework_version="0.2.1").mechanisms.fsdp_version == 1
