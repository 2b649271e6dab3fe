"""The cards of the fit matrix, their Hardware, and how a setup changes on a card that lacks a feature."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from oomdoctor.facts import Hardware, Msg, TrainingSetup, msg

if TYPE_CHECKING:
    from oomdoctor.gpus import GpuSpec

# The cards people rent by the hour (V100, RTX 4090D, RTX A6000, A40 and L20 are common on Chinese
# and community clouds); names as oomdoctor.gpus.lookup_gpu reads them.
MATRIX_CARDS = ("V100 32GB", "RTX 3090", "RTX 4090D", "RTX 4090", "RTX 5090", "L4", "A10G", "RTX A6000", "A40",
                "L20", "L40S", "A100 40GB SXM", "A100 80GB SXM", "A800", "H100", "H800", "H20", "H200")
# Host RAM a rented machine gives per GPU when --host-ram does not say: community and Chinese clouds rent
# a 24-48 GB card with 32-120 GB of RAM and 8-card nodes with 512 GB-1 TB, so 64 GiB per card is typical.
HOST_RAM_PER_GPU_GIB = 64.0
MATRIX_COUNTS = (1, 2, 4, 8)

# Cards sold without NVLink/NVSwitch: gradients and parameter shards cross PCIe between cards, so data
# parallel and ZeRO-3 scale worse. The catalog has no interconnect field yet; this set stands in for it.
# The A40 and the RTX A6000 take an NVLink bridge between two cards only: across 4 or 8 they talk over PCIe.
PCIE_ONLY = frozenset({"RTX 3090", "RTX 4090", "RTX 4090D", "RTX 5090", "L4", "L20", "L40S", "A10G", "A10", "A40",
                       "Tesla T4", "RTX A6000", "A100 40GB PCIe", "A100 80GB PCIe", "H100 PCIe"})

# Host <-> GPU bandwidth a transfer really gets (bytes/s): about 25 GB/s on PCIe 4.0 x16, 50 on 5.0.
_PCIE_GEN5_ARCHS = ("hopper", "blackwell")
PCIE4_BYTES_PER_S = 25e9
PCIE5_BYTES_PER_S = 50e9


def spec_of(name: str) -> GpuSpec | None:
    """The catalog GpuSpec for a card name, or None when the catalog does not know it."""
    from oomdoctor import gpus
    from oomdoctor.errors import InputError

    try:
        return gpus.lookup_gpu(name)
    except InputError:
        return None


def card_hardware(spec, n_gpus: int, host_ram_gib: float | None = None) -> Hardware:
    return Hardware(gpu=spec.name, gpu_gib=spec.usable_gib, n_gpus=n_gpus, source="flag", bf16=spec.bf16,
                    flash_attn2=spec.flash_attn2, host_ram_gib=host_ram_gib)


def pcie_bytes_per_s(spec) -> float:
    return PCIE5_BYTES_PER_S if spec is not None and spec.arch in _PCIE_GEN5_ARCHS else PCIE4_BYTES_PER_S


def nvlink(spec) -> bool:
    return spec is not None and spec.name not in PCIE_ONLY


def adapt_to_card(setup: TrainingSetup, hw: Hardware) -> tuple[TrainingSetup, tuple[Msg, ...]]:
    """What the framework would run on this card, and the sentences that say what was assumed.

    The HF Trainer (and LLaMA-Factory, axolotl on top of it) refuses bf16=True on a card without bf16
    (training_args.py checks is_torch_bf16_gpu_available), so users switch to fp16: the same 2 bytes.
    FlashAttention-2 does not run before Ampere; PyTorch SDPA's memory-efficient kernel does.
    """
    changes: dict[str, Any] = {}
    said: list[Msg] = []
    if not hw.bf16:
        if setup.precision == "bf16":
            changes["precision"] = "fp16"
            said.append(msg("advise.assumed.fp16", gpu=hw.gpu))
        if setup.pure_bf16:
            changes["pure_bf16"] = False
            changes["precision"] = "fp16"
            said.append(msg("advise.assumed.pure_fp16", gpu=hw.gpu))
        if setup.load_dtype and str(setup.load_dtype).lower() in ("bf16", "bfloat16"):
            changes["load_dtype"] = "fp16"
    if not hw.flash_attn2 and setup.attention == "fa2":
        changes["attention"] = "sdpa"
        said.append(msg("advise.assumed.sdpa", gpu=hw.gpu))
    return (replace(setup, **changes) if changes else setup), tuple(said)
