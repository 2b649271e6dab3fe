"""Mechanisms of this round, each from the code that does it: bitsandbytes' inputs escape the checkpoint's
saved-tensor hooks, ms-swift's own checkpointing default, and a training loop that keeps the model output
through backward."""
from __future__ import annotations

import pytest

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.estimate import _reentrant

A100 = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=1)
LLAMA2_7B = ModelShape(name="meta-llama/Llama-2-7b-hf", hidden_size=4096, intermediate_size=11008, num_layers=32,
                       num_heads=32, num_kv_heads=32, vocab_size=32000)


def qlora(**kw) -> TrainingSetup:
    base = dict(framework="hf", framework_version="4.36", method="qlora", quant_bits=4, lora_rank=8,
                lora_targets=("q_proj", "v_proj"), load_dtype="bf16", micro_batch=1, seq_len=2048, grad_ckpt=True)
    base.update(kw)
    return TrainingSetup(**base)


def _ckpt(reentrant: bool) -> dict:
    return {"gradient_checkpointing_kwargs": {"use_reentrant": reentrant}}


def test_bnb_inputs_stay_alive_under_non_reentrant_checkpointing():
    hooked = estimate(qlora(extras=_ckpt(False)), LLAMA2_7B, A100)
    reentrant = estimate(qlora(extras=_ckpt(True)), LLAMA2_7B, A100)
    # per layer and token, in bf16: q/k/v's shared input, o_proj's, gate/up's shared input, down_proj's
    per_token_layer = 2 * (4096 + 4096 + 4096 + 11008)
    kept = 32 * 2048 * per_token_layer / GIB
    assert hooked.details["moment_forward_gib"] - reentrant.details["moment_forward_gib"] == \
        pytest.approx(kept, rel=0.01)
    assert hooked.allocated_gib > reentrant.allocated_gib + 0.8 * kept


def test_bitsandbytes_0_43_2_keeps_no_4bit_input():
    # MatMul4Bit keeps `(None, B)` from 0.43.2 (bitsandbytes/autograd/_functions.py, 9e753741): nothing escapes the
    # checkpoint's hooks, and nothing is kept beside an adapter that sees another tensor (dropout); MatMul8bitLt
    # still keeps A, and a run that names no release keeps the conservative reading
    def forward(bits: int, version: str, **kw) -> float:
        extras = {**_ckpt(False), "bitsandbytes_version": version} if version else _ckpt(False)
        return estimate(qlora(quant_bits=bits, extras=extras, **kw), LLAMA2_7B, A100).details["moment_forward_gib"]

    reentrant = estimate(qlora(extras=_ckpt(True)), LLAMA2_7B, A100).details["moment_forward_gib"]
    kept = 32 * 2048 * 2 * (4096 + 4096 + 4096 + 11008) / GIB
    assert forward(4, "0.45.4") == pytest.approx(reentrant)
    assert forward(4, "0.43.1") == pytest.approx(forward(4, "")) == pytest.approx(reentrant + kept, rel=0.01)
    assert forward(8, "0.45.4") == pytest.approx(forward(8, ""))


def test_unquantized_lora_and_other_kernels_keep_nothing_past_the_checkpoint():
    lora = dict(method="lora", quant_bits=None)
    assert estimate(qlora(extras=_ckpt(False), **lora), LLAMA2_7B, A100).details["moment_forward_gib"] == \
        pytest.approx(estimate(qlora(extras=_ckpt(True), **lora), LLAMA2_7B, A100).details["moment_forward_gib"])
    gptq_hooked = estimate(qlora(extras={**_ckpt(False), "quant_method": "gptq"}), LLAMA2_7B, A100)
    gptq_reentrant = estimate(qlora(extras={**_ckpt(True), "quant_method": "gptq"}), LLAMA2_7B, A100)
    assert gptq_hooked.details["moment_forward_gib"] == pytest.approx(gptq_reentrant.details["moment_forward_gib"])


def test_torchtune_nf4_keeps_only_its_weight():
    # torchao's LinearNF4 keeps the NF4 weight on ctx, not the input; bitsandbytes keeps the input
    from oomdoctor.memory.activations import layer_bytes
    from oomdoctor.memory.regime import regime_of

    def escape(setup: TrainingSetup) -> float:
        return layer_bytes(setup, LLAMA2_7B, regime_of(setup, LLAMA2_7B), 2048, trains_weights=False).hook_escape
    assert escape(qlora(framework="torchtune", framework_version="")) == 0
    assert escape(qlora()) == 2 * (3 * 4096 + 11008)


def test_ms_swift_checkpointing_default_follows_its_own_patch():
    def swift(version: str, n_gpus: int = 1, **kw) -> TrainingSetup:
        return TrainingSetup(framework="ms-swift", framework_version=version, grad_ckpt=True, n_gpus=n_gpus, **kw)
    assert _reentrant(swift("1.5.1")) is False             # v1/v2: fix_gradient_checkpointing_warning
    assert _reentrant(swift("2.6.0")) is False
    assert _reentrant(swift("3.0.0")) is True              # 3.x: transformers' default
    assert _reentrant(swift("3.6.0", n_gpus=2)) is False   # 3.6+: plain DDP
    assert _reentrant(swift("3.6.0", n_gpus=2, zero_stage=3)) is True
    assert _reentrant(swift("1.5.1", extras=_ckpt(True))) is True   # the config's own kwargs win


def test_fsdp_qlora_loop_keeps_the_returned_logits_through_backward():
    base = dict(method="lora", lora_rank=64, load_dtype="bf16", pure_bf16=True, micro_batch=6, seq_len=2048,
                grad_ckpt=True, extras={"transformers_version": "4.38"})
    loop = estimate(TrainingSetup(framework="fsdp_qlora", **base), LLAMA2_7B, A100)
    logits = 6 * 2048 * 32000
    # transformers 4.38 returns logits.float(): 4 bytes per logit beside the loss's own 12 in backward
    assert loop.details["moment_logits_backward_logits_gib"] == pytest.approx(16 * logits / GIB, rel=0.01)
    assert loop.details["moment_optimizer_logits_gib"] == pytest.approx(4 * logits / GIB, rel=0.01)


def test_fsdp_root_unit_stays_unsharded_from_forward_through_backward():
    # the decoder-layer wrap leaves embeddings and the output layer in the root unit, which FSDP does not
    # reshard after forward: their full bf16 copy is alive beside the shards
    two = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=2)
    setup = TrainingSetup(framework="hf", framework_version="4.46", method="lora", load_dtype="bf16", micro_batch=1,
                          seq_len=1024, grad_ckpt=True, fsdp="full_shard", n_gpus=2)
    e = estimate(setup, LLAMA2_7B, two)
    root = 2 * 32000 * 4096 * 2 / GIB
    layer = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096
    assert e.details["gather_buffers_gib"] == pytest.approx(root + 2 * layer * 2 / GIB, rel=0.01)


@pytest.mark.slow
def test_torch_non_reentrant_checkpoint_keeps_what_a_function_stores_on_ctx():
    # The torch behaviour the bitsandbytes rule rests on: non-reentrant checkpointing drops what goes through
    # save_for_backward (its pack hook) but not a tensor kept as a ctx attribute, as MatMul4Bit keeps its input
    torch = pytest.importorskip("torch")
    import weakref

    from torch.utils.checkpoint import checkpoint

    class OnCtx(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, w):
            ctx.tensors = (a, w)
            return a @ w.t()

        @staticmethod
        def backward(ctx, g):
            return g @ ctx.tensors[1], None

    class Saved(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, w):
            ctx.save_for_backward(a, w)
            return a @ w.t()

        @staticmethod
        def backward(ctx, g):
            return g @ ctx.saved_tensors[1], None

    refs: dict = {}

    def layer(fn, x, w):
        a = x * 2.0
        refs[fn] = weakref.ref(a)
        return fn.apply(a, w)

    w = torch.randn(8, 8)
    alive = {}
    for fn in (OnCtx, Saved):
        for reentrant in (False, True):
            x = torch.randn(4, 8, requires_grad=True)
            y = checkpoint(layer, fn, x, w, use_reentrant=reentrant)
            alive[(fn.__name__, reentrant)] = refs[fn]() is not None
            y.sum().backward()
    assert alive == {("OnCtx", False): True, ("OnCtx", True): False, ("Saved", False): False, ("Saved", True): False}


def _full(optimizer: str, **kw) -> TrainingSetup:
    base = dict(framework="hf", framework_version="4.46", method="full", load_dtype="bf16", precision="bf16",
                micro_batch=1, seq_len=512, grad_ckpt=True, optimizer=optimizer)
    base.update(kw)
    return TrainingSetup(**base)


def test_eight_bit_states_carry_an_fp32_absmax_per_256_element_block():
    # bitsandbytes Optimizer8bit.init_state: a uint8 code per element and one float32 absmax per block of 256,
    # for each of Adam's two states; paging moves the codes to managed memory, the absmax stays on the GPU
    params = estimate(_full("adamw_8bit"), LLAMA2_7B, A100).details["params_trainable"]
    plain = estimate(_full("adamw_8bit"), LLAMA2_7B, A100).details
    paged = estimate(_full("paged_adamw_8bit"), LLAMA2_7B, A100).details
    assert plain["optimizer_states_gib"] * GIB == pytest.approx(params * 2 * (1 + 4 / 256), rel=1e-6)
    assert paged["paged_states_gib"] * GIB == pytest.approx(params * 2, rel=1e-6)
    # what torch's allocator holds of the paged optimizer: the absmax blocks alone
    assert (paged["optimizer_states_gib"] - paged["paged_states_gib"]) * GIB == \
        pytest.approx(params * 2 * 4 / 256, rel=1e-6)


def test_stepping_in_backward_never_holds_every_gradient_at_once():
    # torchtune optimizer_in_bwd: each parameter's gradient is freed by its own step, so the floor of what a
    # step must hold counts the largest gradient, not all of them
    kw = dict(framework="torchtune", optimizer="adamw_8bit")
    summed = estimate(_full(**kw), LLAMA2_7B, A100).details
    in_bwd = estimate(_full(**kw, extras={"optimizer_in_bwd": True}), LLAMA2_7B, A100).details
    largest = 32000 * 4096 * 2 / GIB                          # the bf16 gradient of the embedding or output layer
    assert summed["model_states_gib"] - in_bwd["model_states_gib"] == \
        pytest.approx(summed["grads_full_gib"] - largest, rel=0.01)


def test_quantized_experts_dequantized_on_access_hold_one_layer_of_experts():
    # axolotl quantize_moe_experts (monkeypatch/moe_quant.py): the routed experts stay quantized and are
    # dequantized whole while a layer runs: 4-bit to the compute dtype, 8-bit to fp32 (int8_vectorwise_dequant)
    from oomdoctor.memory.params import layer_linears
    from oomdoctor.models import resolve_model

    glm = resolve_model("zai-org/GLM-4.7-Flash")
    routed = sum(m.params for m in layer_linears(glm)[1] if m.copies > 1)
    assert routed > 5e8                       # 64 experts of one layer
    for bits, per_param in ((4, 2), (8, 4)):
        base = qlora(framework="axolotl", framework_version="", quant_bits=bits, micro_batch=2,
                     lora_targets=("q_proj", "k_proj", "v_proj", "o_proj"))
        on = estimate(base.with_changes(extras={"quantize_moe_experts": True}), glm, A100)
        off = estimate(base, glm, A100)
        for moment in ("forward", "layers backward"):
            assert on.moments[moment] - off.moments[moment] == pytest.approx(routed * per_param / GIB, rel=1e-6)
    dense = estimate(qlora(framework="axolotl", extras={"quantize_moe_experts": True}), LLAMA2_7B, A100)
    assert dense.allocated_gib == estimate(qlora(framework="axolotl"), LLAMA2_7B, A100).allocated_gib


@pytest.mark.parametrize("framework", ["hf", "trl", "swift"])
def test_accelerate_fsdp_mixed_precision_keeps_fp32_shards_of_a_half_loaded_full_fine_tune(framework):
    # accelerate upcasts FSDP's trainable parameters to fp32 when mixed precision is on: a bf16-loaded full
    # fine-tune holds fp32 shards, fp32 gradient shards and fp32 AdamW states (16 bytes per parameter over N)
    two = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=2)
    base = dict(framework=framework, method="full", load_dtype="bf16", precision="bf16", micro_batch=1, seq_len=512,
                grad_ckpt=True, optimizer="adamw_torch", n_gpus=2)
    sharded = estimate(TrainingSetup(fsdp="full_shard", **base), LLAMA2_7B, two)
    ddp = estimate(TrainingSetup(**base), LLAMA2_7B, two)
    P = 6.74e9
    assert sharded.details["optimizer_states_gib"] == pytest.approx(P * 8 / 2 / GIB, rel=0.02)
    assert sharded.details["grads_full_gib"] == pytest.approx(P * 4 / 2 / GIB, rel=0.02)
    assert ddp.details["optimizer_states_gib"] == pytest.approx(P * 4 / GIB, rel=0.02)   # bf16 states, unsharded
    assert any(n.code == "memory.regime.fsdp_upcast" for n in sharded.notes)
    assert not any(n.code == "memory.regime.fsdp_upcast" for n in ddp.notes)


def test_axolotl_fsdp2_prepares_its_own_model_without_the_upcast():
    two = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=2)
    setup = TrainingSetup(framework="axolotl", method="full", load_dtype="bf16", precision="bf16", micro_batch=1,
                          seq_len=512, grad_ckpt=True, optimizer="adamw_torch", n_gpus=2, fsdp="full_shard")
    e = estimate(setup, LLAMA2_7B, two)
    assert e.details["optimizer_states_gib"] == pytest.approx(6.74e9 * 4 / 2 / GIB, rel=0.02)
    assert not any(n.code == "memory.regime.fsdp_upcast" for n in e.notes)


@pytest.mark.parametrize("n_gpus", [2, 4])
def test_fsdp_backward_holds_one_unit_of_unsharded_gradients_and_its_reduce_scatter_input(n_gpus):
    # each unit's post-backward copies its unsharded half gradients into a reduce-scatter input of the whole
    # unit (torch fully_shard foreach_reduce): twice the largest unit in bf16 beside the fp32 gradient shards;
    # here the root (embeddings + output layer, 262 M) outweighs a decoder layer (202 M)
    hw = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=n_gpus)
    setup = TrainingSetup(framework="hf", method="full", load_dtype="bf16", precision="bf16", micro_batch=1,
                          seq_len=512, grad_ckpt=True, optimizer="adamw_torch", n_gpus=n_gpus, fsdp="full_shard")
    e = estimate(setup, LLAMA2_7B, hw)
    layer = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096
    root = 2 * 32000 * 4096
    assert root > layer
    unit_buffers = 2 * root * 2 / GIB
    assert e.details.get("moment_logits_backward_gradients_gib", 0.0) == 0.0   # no unit reduced yet
    assert e.details["moment_layers_backward_gradients_gib"] == pytest.approx(
        e.details["grads_full_gib"] + unit_buffers, rel=0.01)
    assert e.details["moment_optimizer_gradients_gib"] == pytest.approx(e.details["grads_full_gib"], rel=0.01)


def test_fsdp_backward_buffers_follow_the_largest_decoder_layer_when_it_outweighs_the_root():
    two = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=2)
    small_vocab = ModelShape(name="small-vocab", hidden_size=4096, intermediate_size=14336, num_layers=8,
                             num_heads=32, num_kv_heads=8, vocab_size=8000)
    setup = TrainingSetup(framework="hf", method="full", load_dtype="bf16", precision="bf16", micro_batch=1,
                          seq_len=512, grad_ckpt=True, optimizer="adamw_torch", n_gpus=2, fsdp="full_shard")
    e = estimate(setup, small_vocab, two)
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert layer > 2 * 8000 * 4096
    embed_shard = 8000 * 4096 * 4 / 2 / GIB          # the embedding's gradient comes after the first layer's
    assert e.details["moment_layers_backward_gradients_gib"] == pytest.approx(
        e.details["grads_full_gib"] - embed_shard + 2 * layer * 2 / GIB, rel=0.01)


def test_fsdp_mixed_precision_gathers_half_weights_so_autocast_caches_no_copies():
    two = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=2)
    base = dict(framework="hf", method="full", load_dtype="fp32", precision="bf16", micro_batch=1, seq_len=512,
                grad_ckpt=False, optimizer="adamw_torch", n_gpus=2)
    ddp = estimate(TrainingSetup(**base), LLAMA2_7B, two)
    sharded = estimate(TrainingSetup(fsdp="full_shard", **base), LLAMA2_7B, two)
    assert ddp.details["autocast_weight_copies_gib"] > 10
    assert sharded.details["autocast_weight_copies_gib"] == 0.0


def test_zero3_quantized_model_is_loaded_whole_on_every_rank_before_it_is_partitioned():
    # transformers skips zero.Init for a quantized model and bitsandbytes puts it whole on the rank's GPU;
    # DeepSpeed partitions it only in deepspeed.initialize, so each rank's peak has held the whole 4-bit model
    two = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=2)
    z3 = estimate(qlora(zero_stage=3, n_gpus=2, seq_len=256), LLAMA2_7B, two)
    z2 = estimate(qlora(zero_stage=2, n_gpus=2, seq_len=256), LLAMA2_7B, two)
    assert "load" not in z2.moments                       # ZeRO-2 keeps the whole model anyway: no extra moment
    assert z3.peak_moment == "load"                       # a 1 x 256 QLoRA step holds less per rank
    whole = z2.details["frozen_weights_gib"] + z2.details["trainable_weights_gib"]   # without ZeRO-2's buckets
    assert z3.moments["load"] == pytest.approx(whole, rel=0.02)   # the whole 4-bit model
    assert z3.moments["forward"] < 0.8 * z3.moments["load"]
    assert any(n.code == "memory.note.zero3_quantized_load" for n in z3.notes)
    unquantized = estimate(TrainingSetup(framework="hf", method="lora", lora_targets=("q_proj", "v_proj"),
                                         load_dtype="bf16", micro_batch=1, seq_len=2048, grad_ckpt=True,
                                         zero_stage=3, n_gpus=2), LLAMA2_7B, two)
    assert "load" not in unquantized.moments             # created partitioned under zero.Init


def _zero_full(zero: int = 2, n_gpus: int = 4, **kw) -> TrainingSetup:
    base = dict(framework="hf", method="full", load_dtype="bf16", micro_batch=1, seq_len=2048, grad_ckpt=True,
                zero_stage=zero, n_gpus=n_gpus)
    base.update(kw)
    return TrainingSetup(**base)


def test_deepspeed_fp32_gradient_partition_exists_only_in_the_optimizer_step():
    hw = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=4)
    est = estimate(_zero_full(), LLAMA2_7B, hw)
    d = est.details
    fp32_partition = 4 * d["params_trainable"] / 4 / GIB
    # the half gradient partition (ZeRO-2, contiguous_gradients) is held at every moment; the fp32 one only in
    # the step, so the step's optimizer term is larger than the forward's by exactly that partition
    assert d["moment_optimizer_optimizer_gib"] - d["moment_forward_optimizer_gib"] == pytest.approx(fp32_partition)
    assert d["moment_forward_gradients_gib"] == pytest.approx(d["grads_full_gib"])
    # it is part of the floor no step can go below
    assert d["model_states_gib"] >= d["optimizer_states_gib"] + fp32_partition


def test_zero2_reduce_buckets_are_allocated_whole_however_few_parameters_train():
    # DeepSpeed ZeRO-1/2 allocate `reduce_bucket_size` elements in the model dtype at every backward, twice under
    # overlap_comm (stage_1_and_2.py backward, `ipg_buffer`): a LoRA run holds the whole buckets
    hw = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=2)
    lora = dict(framework="hf", method="lora", lora_targets=("q_proj", "v_proj"), load_dtype="bf16", micro_batch=1,
                seq_len=512, grad_ckpt=True, zero_stage=2, n_gpus=2)
    swift_zero2 = {"reduce_bucket_size": 2e8, "allgather_bucket_size": 2e8, "overlap_comm": True}
    d = estimate(TrainingSetup(**lora, extras=swift_zero2), LLAMA2_7B, hw).details
    half_trainable = d["params_trainable"] * 2 / GIB
    assert half_trainable < 0.05
    assert 2 * 2e8 * 2 / GIB <= d["gather_buffers_gib"] <= 2 * 2e8 * 2 / GIB + half_trainable + 1e-9
    one = estimate(TrainingSetup(**lora, extras=dict(swift_zero2, overlap_comm=False)), LLAMA2_7B, hw).details
    assert d["gather_buffers_gib"] - one["gather_buffers_gib"] == pytest.approx(2e8 * 2 / GIB)
    # without contiguous_gradients a bucket flattens only the gradients it holds
    loose = estimate(TrainingSetup(**lora, extras=dict(swift_zero2, contiguous_gradients=False)), LLAMA2_7B, hw)
    assert loose.details["gather_buffers_gib"] <= loose.details["params_trainable"] * 2 / GIB + 1e-9


def test_zero2_without_contiguous_gradients_keeps_no_gradient_buffer_through_the_forward():
    hw = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=4)
    loose = estimate(_zero_full(extras={"contiguous_gradients": False}), LLAMA2_7B, hw).details
    contiguous = estimate(_zero_full(), LLAMA2_7B, hw).details
    assert loose.get("moment_forward_gradients_gib", 0.0) == 0.0
    # beside the buckets, which differ too (whole reduce buffers with contiguous_gradients, see below)
    assert (contiguous["moment_forward_gib"] - contiguous["gather_buffers_gib"]) - (
        loose["moment_forward_gib"] - loose["gather_buffers_gib"]) == pytest.approx(contiguous["grads_full_gib"])
    # ZeRO-3 allocates its partition buffer at init whatever contiguous_gradients says
    z3 = estimate(_zero_full(zero=3, extras={"contiguous_gradients": False}), LLAMA2_7B, hw).details
    assert z3["moment_forward_gradients_gib"] == pytest.approx(z3["grads_full_gib"])


def test_offloaded_optimizer_moves_the_fp32_gradient_partition_to_the_host():
    hw = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=4)
    d = estimate(_zero_full(offload_optimizer=True), LLAMA2_7B, hw).details
    assert d["moment_optimizer_optimizer_gib"] == 0.0
    assert d.get("moment_forward_gradients_gib", 0.0) == 0.0


def test_a_loop_that_keeps_outputs_holds_the_reference_logits_beside_the_policy_ones():
    hw = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=4)
    keeps = {"keeps_model_outputs": True, "transformers_version": "4.39.3"}
    fp32_logits = 2048 * 32000 * 4 / GIB          # one sequence's logits, fp32 (transformers < 4.46)
    for stage, sequences in (("sft", 1), ("simpo", 2)):
        kept = estimate(_zero_full(stage=stage, extras=keeps), LLAMA2_7B, hw).details
        plain = estimate(_zero_full(stage=stage, extras={"transformers_version": "4.39.3"}), LLAMA2_7B, hw).details
        assert kept["moment_optimizer_logits_gib"] == pytest.approx(sequences * fp32_logits)
        assert plain.get("moment_optimizer_logits_gib", 0.0) == 0.0
    # DPO on full weights runs a reference model over the same chosen + rejected rows: its logits are kept too
    with_ref = estimate(_zero_full(stage="dpo", extras=keeps), LLAMA2_7B, hw).details
    precomputed = estimate(_zero_full(stage="dpo", extras={**keeps, "precompute_ref_log_probs": True}),
                           LLAMA2_7B, hw).details
    assert with_ref["moment_optimizer_logits_gib"] == pytest.approx(2 * precomputed["moment_optimizer_logits_gib"])


def test_dpo_log_probs_are_taken_on_the_logits_as_the_forward_returns_them():
    # transformers <= 4.45 upcasts the logits inside the causal-LM forward: TRL-style per-token log-probs then
    # run on fp32 logits; later releases return them in the compute dtype (DeepSpeed bf16: no autocast)
    from oomdoctor.memory.loss import loss_bytes
    from oomdoctor.memory.regime import regime_of

    def per_logit(version: str) -> tuple[str, float, float]:
        setup = _zero_full(stage="dpo", extras={"transformers_version": version})
        lb = loss_bytes(setup, LLAMA2_7B, regime_of(setup, LLAMA2_7B))
        return lb.regime, lb.forward, lb.backward
    assert per_logit("4.39.3") == ("logps", 8, 12)
    assert per_logit("4.52.4") == ("logps", 4, 6)
