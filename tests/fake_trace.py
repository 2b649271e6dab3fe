"""Minimal fake-tensor tracer for the memory grid test (no GPU, no weights).

Builds a transformers Llama model on `meta`, materialises it under FakeTensorMode on "cpu" (same storage
bytes a CUDA run allocates, bar the allocator's 512-byte rounding), runs two training steps and records the
peak of live storage bytes with a TorchDispatchMode (recipe: /work/shared/reference/fake-tensor-tracing.md).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass


@dataclass(frozen=True)
class GridCase:
    layers: int = 2
    hidden: int = 256
    inter: int = 688
    heads: int = 8
    kv_heads: int = 8
    vocab: int = 32000
    tied: bool = False
    method: str = "full"          # full | lora | freeze
    dtype: str = "fp32"           # load dtype: fp32 | bf16
    amp: bool = True              # autocast bf16 (HF Trainer bf16=True); False = pure (no autocast)
    grad_ckpt: bool = False
    attention: str = "sdpa"       # sdpa | eager
    optimizer: str = "adamw"      # adamw (foreach) | adamw_fused | sgd
    batch: int = 1
    seq: int = 128
    lora_rank: int = 8
    freeze_layers: int = 1


def _materialise_keeping_shared(model) -> None:
    """to_empty() makes a new Parameter per owning module, so a tied lm_head/embedding would become two
    tensors (a real run from from_pretrained shares one): note who shares what on meta, re-share after."""
    owners: dict[int, list] = {}
    for module in model.modules():
        for name, param in module._parameters.items():
            if param is not None:
                owners.setdefault(id(param), []).append((module, name))
    model.to_empty(device="cpu")
    for shared in owners.values():
        keep = shared[0][0]._parameters[shared[0][1]]
        for module, name in shared[1:]:
            module._parameters[name] = keep


def trace_peak_bytes(case: GridCase) -> int:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.weak import WeakIdKeyDictionary
    from transformers import LlamaConfig, LlamaForCausalLM

    dtype = torch.bfloat16 if case.dtype == "bf16" else torch.float32
    cfg = LlamaConfig(hidden_size=case.hidden, intermediate_size=case.inter, num_hidden_layers=case.layers,
                      num_attention_heads=case.heads, num_key_value_heads=case.kv_heads,
                      vocab_size=case.vocab, tie_word_embeddings=case.tied, max_position_embeddings=4096)
    cfg._attn_implementation = case.attention
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg).to(dtype)
        if case.method == "lora":
            from peft import LoraConfig, get_peft_model
            model = get_peft_model(model, LoraConfig(r=case.lora_rank, lora_alpha=16, lora_dropout=0.0,
                                                     target_modules="all-linear"))

    class Live(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.seen = WeakIdKeyDictionary()
            self.live = 0
            self.peak = 0

        def track(self, t) -> None:
            if not isinstance(t, torch.Tensor):
                return
            st = t.untyped_storage()
            if st in self.seen:
                return
            nbytes = st.nbytes()
            self.seen[st] = True
            self.live += nbytes
            weakref.finalize(st, self._free, nbytes)
            if self.live > self.peak:
                self.peak = self.live

        def _free(self, nbytes: int) -> None:
            self.live -= nbytes

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                self.track(t)
            return out

    fake = FakeTensorMode(allow_non_fake_inputs=True)
    with fake:
        _materialise_keeping_shared(model)
        if case.method == "freeze":
            for p in model.parameters():
                p.requires_grad_(False)
            for layer in model.model.layers[-case.freeze_layers:]:
                for p in layer.parameters():
                    p.requires_grad_(True)
        if case.grad_ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
            if case.method != "full":
                model.enable_input_require_grads()
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        if case.optimizer == "sgd":
            opt = torch.optim.SGD(params, lr=1e-3)
        else:
            opt = torch.optim.AdamW(params, lr=1e-4, foreach=case.optimizer == "adamw",
                                    fused=case.optimizer == "adamw_fused" or None)
        ids = torch.zeros(case.batch, case.seq, dtype=torch.long)
        mode = Live()
        with mode:
            for t in list(model.parameters()) + list(model.buffers()):
                mode.track(t)
            for _ in range(2):
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=case.amp):
                    loss = model(input_ids=ids, labels=ids).loss
                loss.backward()
                del loss
                opt.step()
                opt.zero_grad(set_to_none=True)
    return mode.peak
