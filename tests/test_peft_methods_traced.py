"""The per-token bytes oomdoctor's layer model gives each PEFT adapter type, against what autograd really keeps:
a tiny Llama (random weights, bf16, PEFT's fp32 adapters) runs one forward on the CPU under saved-tensor hooks,
and the tensors still held for backward at its end are counted (parameters and buffers excluded)."""
from __future__ import annotations

import gc
import weakref

import pytest

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.activations import layer_bytes
from oomdoctor.memory.regime import regime_of

pytestmark = [pytest.mark.simulate, pytest.mark.slow]

H, INTER, HEADS, KV_HEADS, LAYERS, VOCAB, BATCH, SEQ = 64, 176, 4, 2, 3, 256, 2, 24
SHAPE = ModelShape(name="tiny-llama", hidden_size=H, intermediate_size=INTER, num_layers=LAYERS, num_heads=HEADS,
                   num_kv_heads=KV_HEADS, vocab_size=VOCAB)


class _Box:
    __slots__ = ("t", "__weakref__")

    def __init__(self, t):
        self.t = t


def _kept_bytes(peft_config, seq: int = SEQ) -> int:
    """Bytes autograd keeps for backward after one forward of the tiny model with this adapter (None: the frozen
    base); every variant's embedding output needs a gradient, so every layer records."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(hidden_size=H, intermediate_size=INTER, num_attention_heads=HEADS,
                                   num_key_value_heads=KV_HEADS, num_hidden_layers=LAYERS, vocab_size=VOCAB,
                                   max_position_embeddings=512, attn_implementation="sdpa")
    model = transformers.LlamaForCausalLM(cfg).to(torch.bfloat16)
    if peft_config is None:
        model.requires_grad_(False)
        base = model
    else:
        model = peft.get_peft_model(model, peft_config)
        base = model.get_base_model()
    base.enable_input_require_grads()
    model.train()
    ids = torch.randint(0, VOCAB, (BATCH, seq))
    mask = torch.ones(BATCH, seq, dtype=torch.long)
    mask[0, -3:] = 0                                    # a padded batch: SDPA gets a mask
    own = {t.untyped_storage().data_ptr() for t in [*model.parameters(), *model.buffers()]}
    boxes = []

    def pack(t):
        box = _Box(t)
        if t.untyped_storage().data_ptr() not in own:
            boxes.append(weakref.ref(box))
        return box

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda box: box.t):
        out = model(input_ids=ids, attention_mask=mask, labels=ids)
    gc.collect()
    alive = {}
    for ref in boxes:
        box = ref()
        if box is not None:
            storage = box.t.untyped_storage()
            alive[storage.data_ptr()] = storage.nbytes()
    del out
    return sum(alive.values())


def _setup(peft_type: str = "", targets=("nothing",), rank: int = 8, seq: int = SEQ, **extras) -> TrainingSetup:
    if peft_type:
        extras["peft_type"] = peft_type
    return TrainingSetup(framework="hf", method="lora", lora_rank=rank, lora_targets=targets, micro_batch=BATCH,
                         seq_len=seq, precision="bf16", pure_bf16=True, load_dtype="bf16", grad_ckpt=False,
                         use_dora=extras.pop("use_dora", False), extras=extras)


def _model_bytes(*args, **kw) -> float:
    """oomdoctor's bytes per token kept by one layer, for the same run."""
    s = _setup(*args, **kw)
    return layer_bytes(s, SHAPE, regime_of(s, SHAPE), s.seq_len, trains_weights=False).saved


def _per_token_layer(kept: int, seq: int = SEQ) -> float:
    return kept / (BATCH * seq * LAYERS)


@pytest.fixture(scope="module")
def frozen() -> int:
    return _kept_bytes(None)


@pytest.mark.parametrize("name", ["lora", "dora", "ia3", "vera"])
def test_an_adapters_kept_bytes_per_token_match_the_trace(frozen, name):
    peft = pytest.importorskip("peft")

    targets = {"ia3": ("k_proj", "v_proj", "down_proj")}.get(name, ("q_proj", "v_proj"))
    cases = {
        "lora": (lambda: peft.LoraConfig(task_type="CAUSAL_LM", r=8, target_modules=list(targets)), {}),
        "dora": (lambda: peft.LoraConfig(task_type="CAUSAL_LM", r=8, target_modules=list(targets), use_dora=True),
                 {"use_dora": True}),
        "ia3": (lambda: peft.IA3Config(task_type="CAUSAL_LM", target_modules=list(targets),
                                       feedforward_modules=["down_proj"]),
                {"peft_type": "IA3", "feedforward_modules": ["down_proj"]}),
        "vera": (lambda: peft.VeraConfig(task_type="CAUSAL_LM", r=16, target_modules=list(targets)),
                 {"peft_type": "VERA"}),
    }
    make, extras = cases[name]
    config = make()
    traced = _per_token_layer(_kept_bytes(config) - frozen)
    modelled = _model_bytes(targets=targets, rank=16 if name == "vera" else 8, **extras) - _model_bytes()
    # what is left is per layer, not per token: the scaling vectors and DoRA's magnitude scale (a few out-wide
    # fp32 vectors per module, 1152 bytes a layer here)
    assert modelled == pytest.approx(traced, abs=1200 / (BATCH * SEQ)), (traced, modelled)
    assert modelled > 0


def test_prompt_tuning_is_the_frozen_base_on_a_longer_sequence():
    peft = pytest.importorskip("peft")

    tokens = 8
    prompt = _kept_bytes(peft.PromptTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=tokens))
    longer = _kept_bytes(None, seq=SEQ + tokens)
    assert _per_token_layer(prompt - longer, SEQ + tokens) == pytest.approx(0, abs=1)
    # and the estimate takes it so: its logits are the frozen base's at SEQ + tokens, and its activations too but
    # for the first layer, which records (the prompt's embeddings need a gradient) where the frozen base's does not
    card = Hardware(gpu="L40S", gpu_gib=44.4, n_gpus=1)
    prompt_est = estimate(_setup("PROMPT_TUNING", num_virtual_tokens=tokens), SHAPE, card)
    longer = _setup(seq=SEQ + tokens)
    longer_est = estimate(longer, SHAPE, card)
    first = layer_bytes(longer, SHAPE, regime_of(longer, SHAPE), SEQ + tokens, trains_weights=False).first_unrecorded
    assert prompt_est.components["logits"] == pytest.approx(longer_est.components["logits"], rel=1e-9)
    assert prompt_est.components["activations"] - longer_est.components["activations"] == \
        pytest.approx(first * BATCH * (SEQ + tokens) / GIB, rel=1e-6)


def test_prefix_tuning_lengthens_the_keys_and_values_as_traced(frozen):
    peft = pytest.importorskip("peft")

    tokens = 8
    traced = _per_token_layer(_kept_bytes(peft.PrefixTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=tokens))
                              - frozen)
    modelled = _model_bytes("PREFIX_TUNING", num_virtual_tokens=tokens) - _model_bytes()
    assert modelled == pytest.approx(traced, abs=1)
