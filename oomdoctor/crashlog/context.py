"""Facts a log states around the crash: versions, GPU, world size, parameters, arguments, step, memory.

Read line by line over a few regions of the file (the head, the stretch before the crash, the tail),
with a cheap substring test before every regex so that megabytes of loss lines cost little.
"""
from __future__ import annotations

import re
from dataclasses import field

from oomdoctor.crashlog.formats import clean
from oomdoctor.facts import MemorySample
from oomdoctor.lazyre import lazy_re
from oomdoctor.records import record

_VERSION_NAMES = {
    "torch": "torch", "pytorch": "torch", "transformers": "transformers", "deepspeed": "deepspeed",
    "llamafactory": "llamafactory", "llama-factory": "llamafactory", "llama factory": "llamafactory",
    "accelerate": "accelerate", "peft": "peft", "trl": "trl", "bitsandbytes": "bitsandbytes", "vllm": "vllm",
    "flash-attn": "flash_attn", "flash_attn": "flash_attn", "axolotl": "axolotl", "torchtune": "torchtune",
    "unsloth": "unsloth", "datasets": "datasets", "python": "python", "liger-kernel": "liger_kernel",
    "liger_kernel": "liger_kernel", "triton": "triton", "cuda": "cuda",
}
_VER = r"v?(\d+\.\d+(?:\.\d+)?(?:[.+\-]?(?:dev|post|rc|a|b|cu|rocm)[\w.]*|\+\w+)?)"
_VERSION_RES = (
    # `llamafactory-cli env` / `transformers-cli env`: "- PyTorch version (GPU?): 2.1.0+cu121 (True)"
    lazy_re(r"^-\s*`?([A-Za-z][\w -]*?)`?\s+version(?:\s*\([^)]*\))?:\s*" + _VER, re.I),
    lazy_re(r"\b(torch|transformers|deepspeed|llamafactory|accelerate|peft|trl|bitsandbytes|vllm|flash[-_]attn|axolotl|torchtune|unsloth|datasets|liger[-_]kernel|triton)==" + _VER, re.I),
    lazy_re(r"Welcome to (LLaMA[ -]?Factory), version " + _VER, re.I),
    lazy_re(r"\b(DeepSpeed) info: version=" + _VER, needs=("DeepSpeed info: version=",)),
    lazy_re(r"\b(torch|pytorch|transformers|deepspeed|vllm|unsloth|axolotl|torchtune|llamafactory)(?:\.__version__)?\s+(?:version\s*)?(?:[:=]\s*|is\s+)" + _VER, re.I),
    lazy_re(r"\b(Torch|Transformers|Triton|Unsloth|vLLM|TRL|Bitsandbytes)\s*[:=]\s*" + _VER, needs=("Torch", "Transformers", "Triton", "Unsloth", "vLLM", "TRL", "Bitsandbytes")),   # unsloth / vLLM banners
    lazy_re(r"\b(vLLM|Unsloth|Axolotl|torchtune|LLaMA[ -]?Factory)\s+" + _VER + r"(?=[:\s,)]|$)", needs=("vLLM", "Unsloth", "Axolotl", "torchtune", "LLaMA")),
)
_GPU_NAME = lazy_re(
    r"\b((?:NVIDIA|Tesla|Quadro|AMD Instinct|Radeon)\s+(?:GeForce\s+)?(?:RTX\s+|Tesla\s+)?[A-Z0-9][\w-]*(?:\s(?:PCIe|SXM\d?|NVL|Ti|SUPER|Ada|Generation|D\b|\d+GB|HBM\d\w*|[A-Z]\d+[\w-]*|\d{3,4}\w*))*)"
    r"|\b((?:A100|H100|H200|H800|A800|L40S?|A10G?|A6000|V100|T4|L4|B200|MI\d{3}X?)(?:[-\s](?:SXM\d?|PCIe|NVL)[\w-]*)?(?:[-\s]\d+GB)?)\b")
_GPU_LINE_CUES = ("GPU type", "GPU:", "GPU =", "NVIDIA", "Tesla", "device name", "Device name", "AMD Instinct", "gpu_name", "GPU name")
_GPU_LINE_CUE = lazy_re("|".join(re.escape(c) for c in _GPU_LINE_CUES), needs=_GPU_LINE_CUES)    # one search, not ten `in` tests a line
_WORLD = (
    lazy_re(r"world[ _]size(?:\s*[:=]\s*|\s+)(\d+)", re.I),
    lazy_re(r"\bWORLD_SIZE=(\d+)", needs=("WORLD_SIZE=",)),
    lazy_re(r"\bNum processes:\s*(\d+)", needs=("Num processes:",)),
    lazy_re(r"\bnum_processes\s*[:=]\s*(\d+)", needs=("num_processes",)),
    lazy_re(r"n_gpu: (\d+), distributed training: False", needs=("n_gpu: ",)),      # LLaMA-Factory, single process
)
_NPROC = lazy_re(r"--nproc[_-]per[_-]node[= ](\d+)", needs=("--nproc",))
_NNODES = lazy_re(r"--nnodes[= ](\d+)", needs=("--nnodes",))
_PARAMS = lazy_re(r"trainable params:\s*([\d,]+)\s*\|\|\s*all params:\s*([\d,]+)", needs=("all params:",))
_HF_NPARAMS = lazy_re(r"Number of trainable parameters\s*=\s*([\d,]+)", needs=("Number of trainable parameters",))
_HF_SUMMARY = (
    (lazy_re(r"Instantaneous batch size per device\s*=\s*(\d+)", needs=("Instantaneous batch size per device",)), "per_device_train_batch_size"),
    (lazy_re(r"Gradient Accumulation steps\s*=\s*(\d+)", needs=("Gradient Accumulation steps",)), "gradient_accumulation_steps"),
    (lazy_re(r"Num Epochs\s*=\s*([\d.]+)", needs=("Num Epochs",)), "num_train_epochs"),
    (lazy_re(r"Total train batch size \([^)]*\)\s*=\s*(\d+)", needs=("Total train batch size (",)), "total_train_batch_size"),
    (lazy_re(r"Num examples\s*=\s*([\d,]+)", needs=("Num examples",)), "num_examples"),
)
_TOTAL_STEPS = lazy_re(r"Total optimization steps\s*=\s*([\d,]+)|Total steps\s*=\s*([\d,]+)", needs=("Total optimization steps", "Total steps"))
_ARGS_BLOCK = lazy_re(r"\b(?:Seq2Seq|SFT|DPO|ORPO|KTO|GRPO|PPO|Reward|CPO)?(?:Training|Config)?Arguments\($|\b\w*(?:Training|Finetuning|Model|Data)Arguments\($", needs=("Arguments(",))
_ARG_LINE = lazy_re(r"^(\w+)=(.*?),?$")
_FLAG = lazy_re(r"(?:^|\s)--([a-z][a-z0-9_]*[a-z0-9])(?:[= ]+(?!--)([^\s\\]+))?", needs=("--",))
_LIST_ITEM = lazy_re(r"'([^'\s]*)'")
_KNOWN_KEYS = frozenset("""
per_device_train_batch_size per_device_eval_batch_size gradient_accumulation_steps cutoff_len max_seq_length
sequence_len max_length max_source_length max_target_length bf16 fp16 pure_bf16 gradient_checkpointing deepspeed
finetuning_type lora_rank lora_alpha lora_target quantization_bit model_name_or_path learning_rate num_train_epochs
max_steps optim logging_steps eval_steps save_steps packing flash_attn template stage do_train do_eval eval_strategy
evaluation_strategy micro_batch_size batch_size output_dir fsdp fsdp_config use_unsloth enable_liger_kernel
eval_accumulation_steps torch_compile tf32 dataset val_size save_strategy
""".split())
_YAML_KEY = lazy_re(r"^\s*([a-z_][a-z0-9_]*):\s+([^\s#][^#]*?)\s*$")
_RANK_HEAD = lazy_re(r"\[(?:rank|default)(\d+)\]:", needs=("[default", "[rank"))      # torchrun's per-rank prefixes, at a line's start
_TQDM = lazy_re(r"(?:^|[|\s])(\d+)/(\d+) \[\d+:\d+(?::\d+)?<[^\]]*?(?:s/it|it/s)", needs=("s/it", "it/s"))
_TQDM_DESC_BAD = lazy_re(r"(?:Map|Loading|Converting|Running tokenizer|Filter|Generating|Downloading|Fetching|shards|examples|Evaluat|Predict|eval)", re.I)
_LOSS = lazy_re(r"\{'loss': ", needs=("{'loss': ",))
_STEP_WORD = lazy_re(r"\b(?:[Ss]tep|global_step)[\s:=]+(\d+)(?:\s*/\s*(\d+))?", needs=("Step", "step"))
_SEQLEN = (
    lazy_re(r"(?:seq(?:uence)?[_ ]?len(?:gth)?|num_tokens|input_len(?:gth)?)\s*[=:]\s*(\d{2,7})\b", re.I),
    lazy_re(r"input_ids(?:\.shape| shape)?\s*[=:]?\s*(?:torch\.Size\()?\[(\d+),\s*(\d+)\]", needs=("input_ids",)),
    lazy_re(r"sequence length is longer than the specified maximum sequence length for this model \((\d+) > \d+\)", needs=("sequence length is longer than the specified maximum sequence length for this model (",)),
)
_DS_MEM = lazy_re(r"MA ([\d.]+) GB\s+Max_MA ([\d.]+) GB\s+CA ([\d.]+) GB\s+Max_CA ([\d.]+) GB", needs=("Max_MA ",))
# DeepSpeed's see_memory_usage: "CPU Virtual Memory:  used = 250.12 GB, percent = 99.4%" (GB there are GiB)
_DS_HOST = lazy_re(r"CPU Virtual Memory:\s+used = ([\d.]+) GB, percent = ([\d.]+)%", needs=("CPU Virtual Memory:",))
_SMI_ROW = lazy_re(r"\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|", needs=("MiB",))
_SMI_GPU = lazy_re(r"^\|?\s*(\d+)\s+((?:NVIDIA|Tesla|Quadro)[^|]*?)\s+(?:On|Off)\s*\|", needs=("NVIDIA", "Tesla", "Quadro"))
_KV_MEM = lazy_re(
    r"['\"]?(max_memory_allocated|memory_allocated|max_memory_reserved|memory_reserved|peak_memory_alloc|peak_memory_reserved|"
    r"peak_memory_active|memory/max_mem_allocated\(gib\)|memory/max_mem_active\(gib\)|memory/device_mem_reserved\(gib\)|"
    r"memory/max_allocated|memory/max_active|memory/max_reserved|gpu_mem(?:ory)?(?:_allocated|_reserved)?)['\"]?\s*[:=]\s*([\d.]+)\s*(GiB|GB|MiB|MB)?")
_AXOLOTL_MEM = lazy_re(r"GPU memory usage[^:]*:\s*([\d.]+)\s*GB(?:\s*\(\+([\d.]+)\s*GB cache)?", needs=("GPU memory usage",))
_TORCHTUNE_MEM = lazy_re(r"GPU peak memory (allocation|reserved|active):\s*([\d.]+)\s*GiB", needs=("GPU peak memory ",))


DESC_LOOKBACK_CHARS = 16384


@record(frozen=False)
class Context:
    """Facts gathered line by line around the crash; parse.py turns them into a CrashReport."""

    versions: dict = field(default_factory=dict)
    gpu_name: str | None = None
    world_size: int | None = None
    params_trainable: int | None = None
    params_total: int | None = None
    train_args: dict = field(default_factory=dict)
    step: int | None = None
    total_steps: int | None = None
    seq_len: int | None = None
    samples: list = field(default_factory=list)
    max_rank: int | None = None
    host_ram_gib: float | None = None
    host_ram_used_pct: float | None = None
    _in_args: bool = False
    _last_label: str = ""
    _bars: dict = field(default_factory=dict)       # total -> last step seen
    _tt: dict = field(default_factory=dict)

    # -------------------------------------------------------------- one line
    def feed_progress(self, block: str) -> bool:
        """Training progress of a whole block before the crash: tqdm bars and step counters.
        True when any was seen so far."""
        for m in _TQDM.finditer(block):
            # A bar's description is the text since the last newline or carriage return; looking back
            # at most DESC_LOOKBACK_CHARS keeps a megabyte-long line of redraws linear, not quadratic.
            lo = max(0, m.start() - DESC_LOOKBACK_CHARS)
            seg_start = max(block.rfind("\n", lo, m.start()), block.rfind("\r", lo, m.start()), lo - 1) + 1
            if _TQDM_DESC_BAD.search(block, seg_start, m.start()):
                continue
            self._bars[int(m.group(2))] = int(m.group(1))
        if "tep" in block:
            for m in _STEP_WORD.finditer(block):
                line_start = block.rfind("\n", 0, m.start()) + 1
                line_end = block.find("\n", m.end())
                if "|" in block[line_start:line_end if line_end >= 0 else len(block)] or "global_step" in m.group(0):
                    self._bars[-1] = int(m.group(1))
                    if m.group(2):
                        self._bars[int(m.group(2))] = int(m.group(1))
        return bool(self._bars)

    def feed(self, raw: str, line_no: int, before_crash: bool) -> None:
        if len(raw) < 4 or "{'loss'" in raw or ("it/s]" in raw or "s/it]" in raw) and "GPU" not in raw:
            # progress lines are read block-wise by feed_progress; only their rank prefix counts here
            if raw.startswith("[") and (m := _RANK_HEAD.match(raw)):
                self._saw_rank(int(m.group(1)))
            return
        if "\r" in raw.rstrip("\r"):
            for seg in raw.split("\r"):
                if seg.strip():
                    self._feed_clean(clean(seg), line_no, before_crash)
            return
        self._feed_clean(clean(raw), line_no, before_crash)

    def _feed_clean(self, cl, line_no: int, before_crash: bool) -> None:
        text = cl.text
        if cl.rank is not None:
            self._saw_rank(cl.rank)
        if not text or self._argument_dump(text):
            return
        if before_crash:
            self._memory(text, line_no)
        if "ersion" in text or "==" in text or "Torch" in text or "Transformers" in text or "Unsloth" in text \
                or "vLLM" in text or "Welcome" in text:
            self._versions(text)
        if self.gpu_name is None and _GPU_LINE_CUE.search(text):
            self._gpu(text)
        if "world" in text or "WORLD" in text or "processes" in text or "--nproc" in text or "distributed training" in text:
            self._world(text)
        if "params" in text or "parameters" in text:
            self._params(text)
        if " = " in text:
            self._summary(text)
        text = self._flags(text)
        if before_crash and ("len" in text or "input_ids" in text or "sequence" in text or "tokens" in text):
            for rx in _SEQLEN:
                m = rx.search(text)
                if m:
                    self.seq_len = int(m.group(m.lastindex or 1))

    def _argument_dump(self, text: str) -> bool:
        """A training-argument dump (`TrainingArguments(` then one `key=value,` a line): True for its lines.
        They come first: they are many short lines."""
        if self._in_args:
            m = _ARG_LINE.match(text.strip())
            if m:
                self.train_args.setdefault(m.group(1), m.group(2).strip())
                return True
            self._in_args = False
            if text.strip().startswith(")"):
                return True
        if text.endswith("Arguments(") and _ARGS_BLOCK.search(text):
            self._in_args = True
            return True
        return False

    def _world(self, text: str) -> None:
        for rx in _WORLD:
            m = rx.search(text)
            if m:
                self.world_size = max(self.world_size or 0, int(m.group(1)))
        m = _NPROC.search(text)
        if m:
            nn = _NNODES.search(text)
            self.world_size = max(self.world_size or 0, int(m.group(1)) * (int(nn.group(1)) if nn else 1))

    def _params(self, text: str) -> None:
        m = _PARAMS.search(text)
        if m:
            self.params_trainable = int(m.group(1).replace(",", ""))
            self.params_total = int(m.group(2).replace(",", ""))
        elif self.params_trainable is None:
            m = _HF_NPARAMS.search(text)
            if m:
                self.params_trainable = int(m.group(1).replace(",", ""))

    def _summary(self, text: str) -> None:
        """The HF Trainer's `***** Running training *****` summary lines (`Num examples = 1,000`)."""
        for rx, key in _HF_SUMMARY:
            m = rx.search(text)
            if m:
                self.train_args.setdefault(key, m.group(1).replace(",", ""))
        m = _TOTAL_STEPS.search(text)
        if m:
            self.total_steps = int((m.group(1) or m.group(2)).replace(",", ""))

    def _flags(self, text: str) -> str:
        """Command-line flags and YAML keys the run printed; the text as read (a printed list joined)."""
        if "'--" in text and "', '" in text:
            # a command line printed as a Python list (DeepSpeed's launcher: ['python', '-u', 'train.py', '--x', '1'])
            text = " ".join(_LIST_ITEM.findall(text))
        if "--" in text:
            flags = _FLAG.findall(text)
            if len(flags) >= 2 or any(k in _KNOWN_KEYS for k, _ in flags):
                for key, value in flags:
                    if "_" in key or key in _KNOWN_KEYS:
                        self.train_args.setdefault(key, value if value else "True")
        elif ": " in text and not text.startswith((" ", "\t")) or text.startswith("  ") and ": " in text:
            m = _YAML_KEY.match(text)
            if m and m.group(1) in _KNOWN_KEYS:
                self.train_args.setdefault(m.group(1), m.group(2).strip().strip("'\""))
        return text

    def _saw_rank(self, rank: int) -> None:
        if self.max_rank is None or rank > self.max_rank:
            self.max_rank = rank

    def _versions(self, text: str) -> None:
        for rx in _VERSION_RES:
            for m in rx.finditer(text.strip()):
                name = re.sub(r"\s+", " ", m.group(1).strip().lower())
                name = {"llama-factory": "llamafactory", "llama factory": "llamafactory", "pytorch": "torch"}.get(name, name)
                canon = _VERSION_NAMES.get(name) or _VERSION_NAMES.get(name.replace(" ", "-"))
                if canon:
                    self.versions.setdefault(canon, m.group(2))

    def _gpu(self, text: str) -> None:
        m = _SMI_GPU.search(text)
        if m:
            self.gpu_name = m.group(2).strip()
            return
        if "GPU type" in text or "GPU name" in text or "device name" in text.lower() or "GPU:" in text or "GPU =" in text or "NVIDIA" in text or "Tesla" in text:
            m = _GPU_NAME.search(text)
            if m and "driver" not in text.lower()[: m.start()] and "NVIDIA-SMI" not in text:
                name = (m.group(1) or m.group(2)).strip().rstrip(".")
                if name not in ("NVIDIA Corporation", "NVIDIA"):
                    self.gpu_name = name

    def _memory(self, text: str, line_no: int) -> None:
        if "CPU Virtual Memory:" in text:
            m = _DS_HOST.search(text)
            if m and float(m.group(2)) > 0:
                used, pct = float(m.group(1)), float(m.group(2))
                self.host_ram_gib = round(used * 100.0 / pct, 1)      # total = used / share used
                self.host_ram_used_pct = pct
            return
        if "GB" in text and "MA " in text:
            m = _DS_MEM.search(text)
            if m:
                self.samples.append(MemorySample(line=line_no, allocated_gib=float(m.group(1)), max_allocated_gib=float(m.group(2)),
                                                 reserved_gib=float(m.group(3)), max_reserved_gib=float(m.group(4)),
                                                 label=self._last_label or "see_memory_usage", step=self._current_step()))
                return
        if "MiB" in text and "|" in text:
            m = _SMI_ROW.search(text)
            if m and len(m.group(1)) <= 24:
                self.samples.append(MemorySample(line=line_no, reserved_gib=int(m.group(1)) / 1024, label="nvidia-smi",
                                                 step=self._current_step()))
                return
            g = _SMI_GPU.search(text)
            if g and self.gpu_name is None:
                self.gpu_name = g.group(2).strip()
        if "mem" in text and self._logged_memory(text, line_no):
            return
        if "see_memory_usage" in text or text.rstrip().endswith(("optimizer", "Before", "After")) and len(text) < 200:
            self._last_label = text.split("]")[-1].strip()[:80]

    def _logged_memory(self, text: str, line_no: int) -> bool:
        """A memory sample a trainer logged (`memory/allocated: 12.3 GiB`, axolotl's, torchtune's); True when read."""
        pairs = _KV_MEM.findall(text)
        if pairs:
            vals: dict[str, float] = {}
            for key, num, unit in pairs:
                gib = float(num) / 1024 if unit in ("MiB", "MB") else float(num)
                if "reserved" in key:
                    vals.setdefault("max_reserved_gib" if ("max" in key or "peak" in key) else "reserved_gib", gib)
                elif "active" in key:
                    vals.setdefault("max_allocated_gib", gib)
                else:
                    vals.setdefault("max_allocated_gib" if ("max" in key or "peak" in key) else "allocated_gib", gib)
            self.samples.append(MemorySample(line=line_no, label="logged", step=self._current_step(), **vals))
            return True
        m = _AXOLOTL_MEM.search(text)
        if m:
            alloc = float(m.group(1))
            cache = float(m.group(2)) if m.group(2) else None
            self.samples.append(MemorySample(line=line_no, allocated_gib=alloc,
                                             reserved_gib=alloc + cache if cache is not None else None,
                                             label=text.split(":")[0].strip()[-60:], step=self._current_step()))
            return True
        m = _TORCHTUNE_MEM.search(text)
        if m:
            key = {"allocation": "max_allocated_gib", "reserved": "max_reserved_gib", "active": "max_allocated_gib"}[m.group(1)]
            self._tt.setdefault(key, float(m.group(2)))
            if len(self._tt) == 2:
                self.samples.append(MemorySample(line=line_no, label="torchtune memory stats", step=self._current_step(), **self._tt))
                self._tt = {}
            return True
        return False

    def _current_step(self) -> int | None:
        step = self.final_step()
        return step

    def final_step(self) -> int | None:
        if not self._bars:
            return None
        if self.total_steps and self.total_steps in self._bars:
            return self._bars[self.total_steps]
        if -1 in self._bars and len(self._bars) == 1:
            return self._bars[-1]
        real = {t: s for t, s in self._bars.items() if t > 0}
        if not real:
            return self._bars.get(-1)
        total = max(real)
        return real[total]

    def final_total(self) -> int | None:
        if self.total_steps:
            return self.total_steps
        real = [t for t in self._bars if t > 0]
        return max(real) if real else None
