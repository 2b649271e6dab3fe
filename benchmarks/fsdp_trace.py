"""FSDP2 per-rank memory, traced: torch's own `fully_shard` in one CPU process, against the estimate.

    python benchmarks/fsdp_trace.py [--worlds 1,2,4,8] [--layers 4]

torch's fake process group (`torch.testing._internal.distributed.fake_pg.FakeStore`, backend "fake") lets
`fully_shard` run its real sharding, all-gather and reduce-scatter buffers, prefetching and resharding in a
single process at any world size; the collectives move no data, which memory does not need. The model is
wrapped the way accelerate 1.6-1.13 and axolotl's own prepare do it (each decoder layer, then the root with the
embeddings, final norm and output layer; `--layout 1.14`: accelerate 1.14+'s utils/fsdp_utils.py
`fsdp2_prepare_model`, which also shards the input embedding alone and `[final norm, lm_head]` with
reshard_after_forward=False), trainable
parameters upcast to fp32 with `MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=bf16)` (accelerate's
`set_mixed_precision`). Live bytes are every storage counted once when an op creates it and subtracted when it
dies (as `oomdoctor/simulate/tracer.py` counts), plus the rank's local shards at the start. Real CPU tensors,
a small Llama, one full step (forward, backward, AdamW) and a second so the optimizer states exist.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup  # noqa: E402

HW = Hardware(gpu="trace", gpu_gib=1e6)


def shape_of(layers: int, hidden: int = 256, inter: int = 704, vocab: int = 8192) -> ModelShape:
    return ModelShape(name="fsdp-trace-llama", model_type="llama", hidden_size=hidden, intermediate_size=inter,
                      num_layers=layers, num_heads=8, num_kv_heads=8, head_dim=hidden // 8, vocab_size=vocab,
                      torch_dtype="fp32")


def setup_of(world: int, micro_batch: int, seq_len: int) -> TrainingSetup:
    return TrainingSetup(framework="hf", method="full", precision="bf16", load_dtype="fp32", grad_ckpt=False,
                         optimizer="adamw_torch", micro_batch=micro_batch, seq_len=seq_len, attention="sdpa",
                         n_gpus=world, fsdp="full_shard" if world > 1 else None)


def trace(world: int, shape: ModelShape, micro_batch: int, seq_len: int, layout: str = "1.6") -> int:
    """Peak live bytes of rank 0 over two FSDP2 training steps at `world` ranks."""
    import weakref

    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
    from torch.utils.weak import WeakIdKeyDictionary
    from transformers import LlamaConfig, LlamaForCausalLM

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    try:
        torch.manual_seed(0)
        cfg = LlamaConfig(hidden_size=shape.hidden_size, intermediate_size=shape.intermediate_size,
                          num_hidden_layers=shape.num_layers, num_attention_heads=shape.num_heads,
                          num_key_value_heads=shape.num_kv_heads, vocab_size=shape.vocab_size,
                          tie_word_embeddings=False, attn_implementation="sdpa")
        model = LlamaForCausalLM(cfg).float()
        model.train()
        mesh = init_device_mesh("cpu", (world,))
        kw = dict(mesh=mesh, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16))
        for layer in model.model.layers:
            fully_shard(layer, **kw)
        if layout == "1.14":
            fully_shard(model.model.embed_tokens, **kw)
            fully_shard([model.model.norm, model.lm_head], reshard_after_forward=False, **kw)
        # the root keeps its parameters unsharded from forward through backward: torch < 2.9 always
        # (_fsdp_state.py _lazy_init), torch 2.13 when reshard_after_forward is None
        fully_shard(model, reshard_after_forward=None, **kw)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)

        class Live(TorchDispatchMode):
            def __init__(self) -> None:
                super().__init__()
                self.entries: WeakIdKeyDictionary = WeakIdKeyDictionary()
                self.live = 0
                self.peak = 0
                self.phase = "setup"
                self.peaks: dict = {}

            def count(self, t: torch.Tensor) -> None:
                st = t.untyped_storage()
                if st in self.entries or st.nbytes() == 0:
                    return
                cell = [st.nbytes()]
                self.entries[st] = cell
                self.live += cell[0]
                weakref.finalize(st, self._free, cell)
                self.peak = max(self.peak, self.live)
                self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), self.live)

            def _free(self, cell: list) -> None:
                self.live -= cell[0]

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                for t in tree_flatten(out)[0]:
                    if isinstance(t, torch.Tensor):
                        # a DTensor's op runs on its local shard below this mode: count the shard
                        self.count(t.to_local() if hasattr(t, "to_local") else t)
                return out

        live = Live()
        for p in model.parameters():
            live.count(p.to_local() if hasattr(p, "to_local") else p)
        for b in model.buffers():
            live.count(b)
        ids = torch.randint(0, shape.vocab_size, (micro_batch, seq_len))
        with live:
            for step in (1, 2):
                live.phase = f"{step} forward"
                loss = model(input_ids=ids, labels=ids).loss
                live.phase = f"{step} backward"
                loss.backward()
                del loss
                live.phase = f"{step} optimizer"
                opt.step()
                opt.zero_grad(set_to_none=True)
        if os.environ.get("FSDP_TRACE_PHASES"):   # the peak of each phase, MiB, on stderr
            print(world, {k: round(v / 2**20, 1) for k, v in live.peaks.items()}, file=sys.stderr)
        return live.peak
    finally:
        dist.destroy_process_group()


def estimated(world: int, shape: ModelShape, micro_batch: int, seq_len: int) -> float:
    from oomdoctor.memory import estimate
    from oomdoctor.memory.estimate import CUBLAS_WORKSPACE_GIB

    return (estimate(setup_of(world, micro_batch, seq_len), shape, HW).allocated_gib - CUBLAS_WORKSPACE_GIB) * GIB


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", default="1,2,4,8")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--seq-len", type=int, default=32)
    ap.add_argument("--layout", choices=("1.6", "1.14"), default="1.6")
    a = ap.parse_args(argv)
    shape = shape_of(a.layers)
    print(f"{'world':>5} {'traced MiB':>11} {'estimate MiB':>13} {'error':>7}")
    for world in (int(w) for w in a.worlds.split(",")):
        t = trace(world, shape, a.micro_batch, a.seq_len, a.layout)
        e = estimated(world, shape, a.micro_batch, a.seq_len)
        print(f"{world:>5} {t / 2**20:>11.1f} {e / 2**20:>13.1f} {(e - t) / t:>+7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
