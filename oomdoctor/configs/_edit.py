"""What every framework's patch side shares: collecting key edits, and the DeepSpeed JSON a ZeRO change
edits or creates. A key already in a file is edited where it is (its Source names file and key); an
absent key is inserted next to a related key (`after_key`).
"""
from __future__ import annotations

import json
import os
from typing import Any

from oomdoctor.configs._keys import DEEPSPEED, Key
from oomdoctor.facts import Change, KeyEdit, TrainingSetup


class Out:
    """The key edits being collected for one setup."""

    def __init__(self, setup: TrainingSetup) -> None:
        self.setup = setup
        self.edits: list[KeyEdit] = []
        self.ds_text: dict[str, Any] | None = None     # a DeepSpeed JSON being created
        self.version = setup.framework_version or None

    def put(self, key: str, value: Any, after: str | None = None, file: str | None = None) -> None:
        """Set `key` (dotted) in `file` (default: the main config) unless that edit is already there."""
        file = file or self.setup.config_file or ""
        # A script's flags are flat (`--fsdp_config.x` is one word); files are nested mappings.
        flat = file == self.setup.config_file and self.setup.extras.get("entry") is not None
        path = (key,) if flat else tuple(key.split("."))
        self.edits = [e for e in self.edits if not (e.file == file and e.key_path == path)]
        self.edits.append(KeyEdit(file=file, key_path=path, value=value, after_key=after))

    def put_key(self, key: Key, value: Any) -> None:
        """Set a table key: where the config already holds the field, under the name it used there."""
        src = self.setup.sources.get(key.field)
        name = src.key if src is not None and src.file == self._file(key) and src.key in key.names(self.version) \
            else key.name_for(self.version)
        self.put(name, value, after=key.after, file=self._file(key))

    def _file(self, key: Key) -> str | None:
        if key.file == DEEPSPEED:
            return self.setup.deepspeed_file
        return self.setup.config_file

    def has_key(self, key: str) -> bool:
        """Whether the main config holds `key` (known from any field's provenance or from the extras)."""
        cfg = self.setup.config_file
        return any(s.file == cfg and s.key == key for s in self.setup.sources.values()) or key in self.setup.extras

    def field_key(self, name: str) -> tuple[str | None, str | None]:
        s = self.setup.sources.get(name)
        return (s.file, s.key) if s is not None and s.file else (None, None)

    def finish(self) -> list[KeyEdit]:
        if self.ds_text is not None:
            name = self.ds_text.pop("__file__")
            self.edits.append(KeyEdit(file=name, key_path=(), value=json.dumps(self.ds_text, indent=2) + "\n",
                                      create=True))
            self.ds_text = None
        return self.edits


def zero(out: Out, c: Change, final: dict[str, Any], ref_key: str, ref_after: str) -> None:
    """zero_stage / offload_optimizer / offload_params: edit the run's JSON, or create one."""
    s = out.setup
    stage = final.get("zero_stage", s.zero_stage)
    off_opt = final.get("offload_optimizer", s.offload_optimizer)
    off_par = final.get("offload_params", s.offload_params)
    if s.deepspeed_file:
        f = s.deepspeed_file
        if c.field == "zero_stage":
            out.put("zero_optimization.stage", int(c.after), file=f)
        elif c.field == "offload_optimizer":
            _ds_offload(out, f, "offload_optimizer", bool(c.after))
        elif c.field == "offload_params":
            _ds_offload(out, f, "offload_param", bool(c.after))
        return
    if out.ds_text is None:
        if s.fsdp and c.field != "zero_stage":
            return          # FSDP offload lives in the launcher config: advice, not a key here
        base = os.path.dirname(s.config_file or "")
        name = f"ds_z{stage}{'_offload' if (off_opt or off_par) else ''}_config.json"
        out.put(ref_key, name, after=ref_after)
        out.ds_text = {"__file__": os.path.join(base, name) if base else name}
    out.ds_text.update(ds_template(stage, off_opt, off_par))


def _ds_offload(out: Out, f: str, block: str, on: bool) -> None:
    extras = out.setup.extras.get("deepspeed") or {}
    device = "cpu" if on else "none"
    if block in (extras.get("_blocks") or ()):
        out.put(f"zero_optimization.{block}.device", device, file=f)
    else:
        out.put(f"zero_optimization.{block}", {"device": device, "pin_memory": True}, after="stage", file=f)


def ds_template(stage: int, off_opt: bool, off_par: bool) -> dict[str, Any]:
    """A DeepSpeed JSON whose batch and precision entries follow the training config ("auto")."""
    zero_cfg: dict[str, Any] = {"stage": int(stage), "overlap_comm": False, "contiguous_gradients": True}
    if stage == 3:
        zero_cfg.update({"sub_group_size": 1_000_000_000, "reduce_bucket_size": "auto",
                         "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto",
                         "stage3_max_live_parameters": 1_000_000_000, "stage3_max_reuse_distance": 1_000_000_000,
                         "stage3_gather_16bit_weights_on_model_save": True})
    else:
        zero_cfg.update({"allgather_partitions": True, "allgather_bucket_size": 500_000_000, "reduce_scatter": True,
                         "reduce_bucket_size": 500_000_000})
    if off_opt:
        zero_cfg["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if off_par and stage == 3:
        zero_cfg["offload_param"] = {"device": "cpu", "pin_memory": True}
    return {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
            "zero_allow_untested_optimizer": True, "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"},
            "zero_optimization": zero_cfg}


def precision(out: Out, to: str, bf16_key: str = "bf16", fp16_key: str = "fp16", after: str | None = None) -> None:
    """bf16/fp16/fp32 as two booleans; the other flag is cleared only where the file set it."""
    if to == "bf16":
        out.put(bf16_key, True, after=fp16_key if out.has_key(fp16_key) else (after or fp16_key))
        if out.has_key(fp16_key) or out.setup.precision == "fp16":
            out.put(fp16_key, False)
    elif to == "fp16":
        out.put(fp16_key, True, after=bf16_key if out.has_key(bf16_key) else (after or bf16_key))
        if out.has_key(bf16_key) or out.setup.precision == "bf16":
            out.put(bf16_key, False)
    else:
        for k in (bf16_key, fp16_key):
            if out.has_key(k) or out.setup.precision == k[:4]:
                out.put(k, False)
