"""Which part of a run was going on when memory ran out, and the line that says so.

Three kinds of cue, in order of strength (parse.py asks them in this order):

1. frames: traceback frame headers and source lines, whole or a pasted fragment of them; a frame of a
   framework's module is also placed by taxonomy.py (module path and function class, from the frameworks' source). Outer
   phases (data, save, eval, generate, ZeRO init, load) win over the training-step ones, because an
   evaluation or a checkpoint save also runs forward passes; among the step phases the later one
   wins (backward recomputation runs forward frames, the optimizer runs after backward). The
   evidence is the innermost line of the winning phase.
2. lines: what the run printed just before the crash, nearest first: progress bars, trainer and
   launcher events (`Loading checkpoint shards`, `Saving model checkpoint to`, `***** Running
   Evaluation *****`, DeepSpeed's ZeRO set-up, MLX's `Iter 50: Train loss`). A finished bar or a
   "done" line ends its phase.
3. message: a prefix of the failure message itself (`Error saving model: CUDA out of memory`).

No cue, no phase: `unknown` stays unknown. Cues follow the "Phase cues" list of
docs/reference/oom-log-formats.md and the excerpts listed in tests/data/logs/real/SOURCES.md.
"""
from __future__ import annotations

import re

from oomdoctor.crashlog import callsites, taxonomy
from oomdoctor.lazyre import LazyPattern, lazy_re, required_literals

# Outer phases first (their frames enclose forward passes), then the steps of one training step.
OUTER = ("data", "save", "eval", "generate", "zero_init", "load")
STEP = ("optimizer", "backward", "loss", "forward")


def _cue(pattern: str, *also: str) -> LazyPattern:
    r"""A cue `\b(?:word|word...)\b...`: text that holds none of its words' literal parts (nor `also`,
    the literals of the alternatives after the word group) skips compiling and running it."""
    words = pattern[len(r"\b(?:"):pattern.index(r")\b")].split("|")
    # a word cue names a function or a statement, not a script: `File "generate.py", line 46, in main` runs
    # whatever main calls (a user's file name is theirs to choose); module paths have their own cues
    pattern = pattern.replace(r")\b", r")\b(?!\.py\b)", 1)
    return lazy_re(pattern, needs=tuple(dict.fromkeys(w for w in (*map(_literal, words), *also) if w)))


def _literal(word: str) -> str:
    r"""The longest run of plain characters every match of `word` holds: `_multi_tensor_adamw?` ->
    `_multi_tensor_adam`, `\w*DistributedDataParallel` -> `DistributedDataParallel`."""
    runs, run, i = [], "", 0
    while i < len(word):
        ch = word[i]
        if ch == "[":                           # a character class: ends the run, with its quantifier
            i = word.index("]", i + 1) + 1
            if i < len(word) and word[i] in "*+?":
                i += 1
            runs.append(run)
            run = ""
            continue
        if ch == "\\" and i + 1 < len(word):
            nxt = word[i + 1]
            i += 2
            if nxt.isalnum():                   # a class (\w, \d, \s): ends the run, with its quantifier
                if i < len(word) and word[i] in "*+?":
                    i += 1
                runs.append(run)
                run = ""
                continue
            ch = nxt
        else:
            i += 1
        if i < len(word) and word[i] in "*?":   # optional: not in every match
            runs.append(run)
            run = ""
            i += 1
            continue
        run += ch
    runs.append(run)
    return max(runs, key=len)


# Frame function names and source-line shapes, per phase.
_FRAME_CUES: dict[str, LazyPattern] = {
    "data": _cue(r"\b(?:__getitem__|_next_data|_get_data|fetch|collate_fn|default_collate|preprocess_\w*|"
                 r"_map_single|tokenize_function|map)\b", "__getitem__"),
    "save": _cue(r"\b(?:save_model|_save_checkpoint|save_pretrained\w*|_save|save_checkpoint|_save_to_state_dict|"
                 r"save_state|_save_optimizer_and_scheduler|full_state_dict|_full_post_state_dict_hook|get_state_dict|"
                 r"_get_state_dict|consolidated_16bit_state_dict|_zero3_consolidated_16bit_state_dict|undo_layout|"
                 r"safe_save_file|save_file|unsloth_\w*save\w*|save_lora\w*|merge_and_unload|push_to_hub\w*|_merge_lora)\b|"
                 r"torch\.save\(|"
                 r"\.state_dict\(\)", "torch.save(", ".state_dict()"),
    "eval": _cue(r"\b(?:evaluate\w*|_evaluate|evaluation_loop|prediction_step|prediction_loop|predict|eval_step|"
                 r"run_evaluation|do_eval|validation_step|_run_validation|validate|eval_loop|run_eval|_?eval_\w+|"
                 r"val_step|test_step|validation_epoch\w*)\b"),
    "generate": _cue(r"\b(?:generate\w*|_sample|greedy_search|beam_search|_generate\w*|rollout\w*|sample_sequence|"
                     r"wake_up)\b|"
                     r"\bin sample\b", "in sample"),
    "zero_init": _cue(r"\b(?:_configure_zero_optimizer|_configure_optimizer|DeepSpeedZeroOptimizer\w*|"
                      r"initialize_optimizer_states|_create_fp16_partitions_with_defragmentation|_partition_param\w*|"
                      r"_convert_to_zero_parameters|_post_init_method|_setup_for_real_optimizer|_create_fp32_partitions|"
                      r"_prepare_deepspeed|_configure_distributed_model|DeepSpeedEngine)\b|deepspeed\.initialize|"
                      r"deepspeed/__init__\.py\"?, line \d+, in initialize", "deepspeed.initialize",
                      "deepspeed/__init__.py"),
    # (readObject: Lua Torch's torch.load deserialises through File:readObject, torch7 File.lua)
    "load": _cue(r"\b(?:from_pretrained|_load_pretrained_model|load_checkpoint_and_dispatch|_load_state_dict_into_meta_model|"
                 r"set_module_tensor_to_device|load_state_dict|_?load_model|load_checkpoint|_load_checkpoint|"
                 r"load_pretrained\w*|_apply|Params4bit|_quantize|init_device_mesh|determine_num_available_blocks|"
                 r"profile_run|_init_cache|initialize_cache|_initialize_kv_caches|load_weights|to_empty|"
                 r"_sync_module_states|_sync_params_and_buffers|_verify_param_shape_across_processes|"
                 r"_verify_params_across_processes|prepare_model|init_process_group|load_adapter|"
                 r"_load_optimizer_and_scheduler|_load_from_checkpoint|_load_zero_checkpoint|get_peft_model|"
                 r"prepare_model_for_kbit_training|\w*DistributedDataParallel|readObject)\b|torch\.load\(|\.cuda\(\)|"
                 r"\.to\((?:device|'cuda|\"cuda|self\.device|torch\.device|local_rank|rank|dev\b)|"
                 r"parallel/distributed\.py\"?, line \d+, in __init__|Loading checkpoint shards",
                 "torch.load(", ".cuda()", ".to(", "parallel/distributed.py", "Loading checkpoint shards"),
    "optimizer": _cue(r"\b(?:optimizer\.step|_multi_tensor_adamw?|_single_tensor_adamw?|_fused_adamw?|adamw?|"
                      r"exp_avg_sq|exp_avg|_init_group|_optimizer_step|_take_model_step|step_with_closure|clip_grad_norm_|"
                      r"optimizer_step|_update_scale|_maybe_opt_step|unscale_and_clip_grads|_foreach_\w+|"
                      r"optimizer_update_\w+|multi_tensor_applier)\b|optim/\w+\.py|\.step\(|, in step$",
                      "optim/", ".step(", ", in step"),
    "backward": _cue(r"\b(?:\w*backward\w*|_engine_run_backward|run_backward|_execution_engine|allreduce_gradients|"
                     r"reduce_ready_partitions_and_remove_grads|reduce_partition_and_remove_grads|average_tensor|"
                     r"reduce_independent_p_g_buckets_and_remove_grads|_reduce_and_partition_ipg_grads|allreduce_bucket|"
                     r"backward_step)\b|accelerator\.backward|scaler\.scale\(loss\)|gradients/|"
                     r"C\+\+ engine to run the backward pass|autograd/__init__\.py|autograd\.grad\(",
                     "accelerator.backward", "scaler.scale(loss)", "gradients/", "C++ engine to run the backward pass",
                     "autograd/__init__.py", "autograd.grad("),
    "loss": _cue(r"\b(?:cross_entropy|cross_entropy_loss|nll_loss|log_softmax|ForCausalLMLoss|fixed_cross_entropy|"
                 r"loss_function|_convert_to_fp32|compute_loss_func|chunked_cross_entropy|LigerFusedLinearCrossEntropy\w*|"
                 r"CrossEntropyLoss|loss_fct|selective_log_softmax|get_batch_logps|_get_batch_logps|dpo_loss|kl_div)\b|"
                 r"logits\.float\(\)|logits = logits\.float|loss_utils\.py|cross_entropy\w*\.py|\bcriterion\(|\bloss_fn\(",
                 "logits.float()", "logits = logits.float", "loss_utils.py", "cross_entropy", "criterion(", "loss_fn("),
    # the layers' ops as torch/nn/functional.py calls them (F.linear -> torch._C._nn.linear, F.layer_norm ->
    # torch.layer_norm, F.embedding -> torch.embedding): a frame or a statement of one runs a forward pass
    # (Lua Torch's Module:forward runs updateOutput, THNN's kernels are <Module>_updateOutput: torch/nn Module.lua).
    # The word `model` is a frame's or a call's (`in model`, `model(x)`: Module.__call__ runs forward); before a dot
    # it is the receiver of the method named after it (`model.save_weights(...)`, `model.eval()`): that name says.
    "forward": _cue(r"\b(?:\w*forward\w*|\w*updateOutput|_call_impl|_wrapped_call_impl|training_step|scaled_dot_product_attention|"
                    r"flash_attn_\w+|compute_loss|inner_training_loop|_inner_training_loop|_fast_inner_training_loop|train|"
                    r"train_step|_loss_step|linear|addmm|matmul|bmm|baddbmm|einsum|conv[123]d|softmax|silu|gelu|apply_rotary_pos_emb|"
                    r"layer_norm|group_norm|batch_norm|instance_norm|rms_norm|embedding|"
                    r"_unsloth_training_step|fast_forward\w*)\b|torch\._C\._nn\.|activations\.py|modeling_\w+\.py|"
                    r"\bmodel\b(?!\.)", "torch._C._nn.", "activations.py", "modeling_", "model"),
}


def _taxonomy_cues() -> dict[str, LazyPattern]:
    """callsites.py's frame rows (functions, module paths, statements), one pattern per phase."""
    out: dict[str, LazyPattern] = {}
    for phase in OUTER + STEP:
        funcs = callsites.words(phase, "func")
        other = callsites.words(phase, "path") + callsites.words(phase, "stmt")
        parts = ([r"\b(?:" + "|".join(map(re.escape, funcs)) + r")\b(?!\.py\b)"] if funcs else []) + [f"(?:{x})" for x in other]
        if parts:
            out[phase] = lazy_re("|".join(parts))
    return out


_TAXONOMY = _taxonomy_cues()
# A module torch.fx generated (`File "<eval_with_key>.130", line 662, in forward`) is not evaluation.
_FX_FILE = lazy_re(r"<eval_with_key>(?:\.\d+)?")
_SAMPLING_ONLY = lazy_re(r"\b(?:generate|_sample|greedy_search|beam_search|_generate|rollout)\b")

_FRAME = lazy_re(
    r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<func>[\w<>.]+)'           # CPython
    r'|^\s*(?P<rfile>\S+\.py):\d+ in (?P<rfunc>[\w<>.]+)'                     # rich
    r'|^\s*(?P<ifile>\S+\.py)(?:\]\([^)\s]*\))?(?:\s*:\s*\d+)? in (?P<ifunc>[\w<>.]+)'  # IPython <= 7, Colab's [path](link)
    # IPython 8 (ultratb: `File <path>:<line>, in <func>`); JupyterLab copies the path as a link, `File [path:599](url), in`
    r'|^\s*File\s+\[?(?P<pfile>[^\s",\]]+\.py):\d+(?:\]\([^)\s]*\))?,?\s+in\s+(?P<pfunc>[\w<>.]+)'
    r'|^\s*(?P<tfile>\S+\.py):\d+:\s+in\s+(?P<tfunc>[\w<>.]+)'                # pytest
    r'|^\s*Cell In\s*\[\d*\], line \d+'                                        # IPython 8's notebook-cell frame (ultratb)
    r'|^\s*(?:\S*\.py)?"?,?\s*line \d+, in [\w<>.]+\s*$'                        # a fragment pasted from mid-line
    # Lua's `stack traceback:` (lauxlib.c luaL_traceback: `\n\t<source>:<line>: in function '<name>'`; a C function's
    # source is `[C]`), as Lua Torch (torch7, luajit) prints a failure
    r"|^\s*(?:\S+\.lua:\d+|\[C\]): in (?:function|method) '[\w.:<>]+'",
    needs=(".py", "line ", ": in function '", ": in method '"))
# Lua's traceback lists the innermost call first and follows the error it explains (lauxlib.c luaL_traceback)
LUA_FRAME = lazy_re(r"^\s*(?:\S+\.lua:\d+|\[C\]): in (?:function|method) ", needs=(": in function ", ": in method "))
TRACEBACK_HEAD = lazy_re(r"Traceback \(most recent call last\)|─+ Traceback", needs=("Traceback",))
_CODE_LINE = lazy_re(r"^\s{2,}\S|^\s*-+>\s*\d+|^\s*[❱│]|^\s*\[Previous line repeated")


def is_frame(text: str) -> bool:
    return bool(_FRAME.search(text))


def looks_like_code(text: str) -> bool:
    """A traceback's frame header or source line (indented, IPython's arrow, rich's box)."""
    return bool(_FRAME.search(text) or _CODE_LINE.search(text))


# IPython prints numbered source lines around each frame's arrow (`---> 30 out = net(x)`): only the
# arrowed line ran; its neighbours (`     28 y = y.cuda()`, `    658 self.validate()`) cue nothing.
_IPY_ARROW = lazy_re(r"^\s*-+>\s*\d+\s", needs=(">",))
_IPY_CONTEXT = lazy_re(r"^\s*\d+\s")
# rich numbers its code rows the same way, the row that ran marked `❱` (rich/syntax.py line_numbers, highlight_lines):
# the rows around it are context
_RICH_ARROW = lazy_re(r"^\s*❱\s*\d+\s*│", needs=("❱",))
_RICH_CONTEXT = lazy_re(r"^\s*\d+\s*│", needs=("│",))
# ... and names each frame with its signature (`train_utils.py in run_epoch(model, val_loader, eval_every)`):
# the function is the cue, its parameter names are not.
_IPY_SIGNATURE = lazy_re(r"^(\s*(?:File\s+)?\S+\.py(?:\s*:\s*\d+,?)?\s+in\s+)(?:[\w<>]+\.)*([\w<>]+)\(.*$", needs=(".py",))


def frame_phase(lines: list[str]) -> tuple[str, int] | None:
    """(phase, index of its evidence line) from traceback lines given outermost first, or None."""
    if not lines:
        return None
    if any(_IPY_ARROW.search(line) for line in lines):
        lines = ["" if _IPY_CONTEXT.search(line) else line for line in lines]
    if any(_RICH_ARROW.search(line) for line in lines):
        lines = ["" if _RICH_CONTEXT.search(line) else line for line in lines]
    # IPython prints a frame's signature after its name (`fitting.py:253, in fit_model(model, data, ...,
    # generate_progress_plots)`), CPython and rich never do: the parameters are no calls, whatever else is pasted;
    # nor is the class IPython 8 qualifies the method with (`DeepSpeedZeroOptimizer_Stage3.step` is the step, not the
    # optimizer's construction): the function is the frame's name (IPython/core/ultratb.py prints co_qualname)
    lines = [_IPY_SIGNATURE.sub(r"\1\2", line) for line in lines]
    text = "\n".join(lines)
    if "<eval_with_key>" in text:
        text = _FX_FILE.sub("<fx_generated>", text)
    placed = _placed_frames(lines)
    steps: dict[str, int] = {}
    for phase in OUTER + STEP:
        last = None
        named = False                       # a callsites.py row matched: the framework is known
        for m in _FRAME_CUES[phase].finditer(text):
            last = m
        if phase in _TAXONOMY:
            for m in _TAXONOMY[phase].finditer(text):
                named = True
                if last is None or m.start() > last.start():
                    last = m
        index = text.count("\n", 0, last.start()) if last is not None else None
        if phase in placed:                 # a frame of a framework's module whose function runs in this phase
            named = True
            index = max(index if index is not None else -1, placed[phase])
        if index is None:
            continue
        if phase == "generate" and not named and _only_sampling_word(text):
            continue
        if phase == "data" and not named and not _DATA_FRAMES.search(text):
            continue
        if phase in OUTER:
            return phase, index
        steps[phase] = index
    return _step_phase(steps, lines) if steps else None


def _step_phase(steps: dict[str, int], lines: list[str]) -> tuple[str, int]:
    """(phase, index) among the step phases found, {phase: index of its innermost cue}."""
    # the step phases nest either way: a loss function that runs the model (`loss = loss_fn(model, batch)` ->
    # `model(x)`), an optimizer step whose closure runs the forward and backward passes (torch/optim/optimizer.py
    # step(closure)): the frame nearest to the failure is the one that ran. The backward pass is the exception: it
    # runs forward code only as recomputation (torch/utils/checkpoint.py) or as hooks that gather parameters again
    # (FSDP's _pre_backward_hook -> _unshard), so a forward frame under it is still the backward pass.
    nearest = max(steps, key=lambda ph: steps[ph])
    if nearest == "forward" and "backward" in steps:
        nearest = "backward"
    if nearest == "forward":
        # no row names an outer phase, but a frame's own words may: evaluation and generation run forward passes,
        # so a forward frame under a caller named for them (`model.inference(...)`, `trainer.run_test()`) is theirs
        # (the word classes of lexical_phase; its load words, `init`, `apply`, `create`, name casts and layers too)
        outer = _caller_named(lines[:steps[nearest]])
        if outer is not None:
            return outer
    return nearest, steps[nearest]


def _caller_named(lines: list[str]) -> tuple[str, int] | None:
    """(phase, index) of the innermost frame above a forward pass whose function is named for evaluation or
    generation (lexical_phase's word classes). Only a frame's own name counts: a statement's calls name modules too
    (`self.generator(x)`, a distribution's `.sample()`), and a library's path names its package (`_dynamo/eval_frame`)."""
    named: dict[str, int] = {}
    for i in range(len(lines) - 1, -1, -1):
        m = _LEX_FRAME.search(lines[i])
        if m is None or taxonomy.frame_place(_lex_path(m), m.group("func")) is not None:
            continue
        found = _lex_phase_of(_lex_words(m.group("func")))
        if found is not None and found[0] in _FORWARD_CALLERS:
            named.setdefault(found[0], i)
    # in frame_phase's order: an evaluation loop that generates (Seq2SeqTrainer's prediction_step) is evaluation
    for phase in _FORWARD_CALLERS:
        if phase in named:
            return phase, named[phase]
    return None


_FORWARD_CALLERS = ("eval", "generate")


def _placed_frames(lines: list[str]) -> dict[str, int]:
    """{phase: index of its innermost frame} for the frame headers taxonomy.py places by module and function."""
    placed: dict[str, int] = {}
    for i, line in enumerate(lines):
        m = _FRAME.search(line)
        if m is None:
            continue
        path = m.group("file") or m.group("rfile") or m.group("ifile") or m.group("pfile") or m.group("tfile")
        func = m.group("func") or m.group("rfunc") or m.group("ifunc") or m.group("pfunc") or m.group("tfunc")
        if path and func:
            phase = taxonomy.frame_phase(path, func)
            if phase is not None:
                placed[phase] = i
    return placed


def phase_of(frames: list[str]) -> str | None:
    """Phase from traceback lines, outermost first, or None."""
    found = frame_phase(frames)
    return found[0] if found else None


def _only_sampling_word(text: str) -> bool:
    """'sample' alone in a data loader frame is not generation."""
    return not _SAMPLING_ONLY.search(text) and bool(re.search(r"dataloader|__getitem__|sampler", text))


# Data cues only count inside a data loader or a dataset map: `map` and `fetch` alone are everywhere.
_DATA_FRAMES = lazy_re(r"utils/data/|dataloader|datasets/arrow_dataset|__getitem__|_map_single|tokenize_function",
                       needs=("utils/data/", "dataloader", "datasets/arrow_dataset", "__getitem__", "_map_single",
                              "tokenize_function"))


# ------------------------------------------------------------------ lines printed before the crash

# A progress bar: "desc:  12%|███  | 60/500 [01:00<07:20,  1.00s/it]" (tqdm), its description before it.
_BAR = lazy_re(r"(?P<n>\d+)/(?P<total>\d+) \[\d+:\d+(?::\d+)?<[^\]]*?(?:s/it|it/s|s/ex|ex/s|examples/s|ba/s|s/ba)",
               needs=("s/it", "it/s", "s/ex", "ex/s", "examples/s", "ba/s", "s/ba"))
_BAR_DESC = (
    # Forge patches LoRA weights into the loaded model under a bar `Patching LoRAs for KModel`
    # (stable-diffusion-webui-forge backend/patcher/lora.py): the model is still being set up
    ("load", lazy_re(r"Loading checkpoint shards|Loading safetensors|Loading weights|Fetching \d+ files|Patching LoRAs? for", re.I)),
    # SimpleTuner walks a dataset's aspect buckets to fill its VAE latent cache and metadata under `Processing bucket
    # <aspect>` (helpers/caching/vae.py, helpers/metadata/backends/*.py: tqdm(desc=f"Processing bucket {bucket}"))
    ("data", lazy_re(r"\bMap\b|Filter|Running tokenizer|Tokeniz|Converting format|Generating \w+ split|Packing|"
                     r"Preprocess|Flattening the indices|Grouping texts|Applying chat template|examples/s|Processing bucket\b", re.I)),
    # Catalyst names its bars by loader key: "0/10 * Epoch (valid):" (catalyst/callbacks/tqdm)
    ("eval", lazy_re(r"\b(?:Val(?:id(?:ation|ating)?)?|Eval(?:uat\w*)?|Predict\w*|Testing|Test)\b", re.I)),
    ("generate", lazy_re(r"\b(?:Generat\w*|Rollout|Sampling)\b", re.I)),
    ("save", lazy_re(r"\bSaving\b|Merging|Unsloth: Saving", re.I)),
)
# Lines that say what the run is doing (nearest first wins).
_EVENTS: tuple[tuple[str, LazyPattern], ...] = (
    ("save", lazy_re(r"Saving model checkpoint to|Saving checkpoint|Saving the model|Saving model\b|Saving model to|"
                     r"Saving LoRA|Saving the (?:final )?(?:adapter|merged)|\[Torch\] Checkpoint \S+ is about to be saved|"
                     r"\bsave_checkpoint\b|Unsloth: Merging|Unsloth: Saving|Saving \S+ to disk|^Saving\b", re.I)),
    ("eval", lazy_re(r"\*{3,} Running Evaluation \*{3,}|Running Evaluation|Evaluating\b|\bEVALUATING\b|Running validation|"
                     r"Start(?:ing)? evaluation|Running prediction|\*{3,} Running Prediction", re.I)),
    # a server's line that it is up and taking requests (uvicorn/server.py `Uvicorn running on http://...`, its lifespan's
    # `Application startup complete.`, mistral.rs's server `Serving on http://...`): what fails after it fails serving
    ("generate", lazy_re(r"Generating (?:responses|completions|rollouts|samples)|Start(?:ing)? generation|Rollout|"
                         r"\b(?:Serving|Listening) on https?://|Uvicorn running on https?://|Application startup complete|"
                         # a transcription's start or the line that reports it (see _MESSAGE_CUES: decoding)
                         r"start(?:ing|ed)? (?:the )?transcri(?:be|bing|ption)\b|^Transcribing\b|\btranscribing\b", re.I)),
    ("zero_init", lazy_re(r"initializing optimizer states|Creating ZeRO Offload|DeepSpeedZeRoOffload initialize|"
                          r"Creating (?:fp16|bf16|torch\.\w+) ZeRO stage|Before creating fp(?:16|32) partitions|"
                          r"After creating fp(?:16|32) partitions|Stage 3 initialize beginning|Time to load (?:cpu|fused)_adam op|"
                          r"Loading extension module (?:cpu|fused)_adam|(?:Reduce|Allgather|Prefetch) bucket size|"
                          r"DeepSpeed Basic Optimizer|Using client Optimizer|Checking ZeRO support|DeepSpeed info: version=|"
                          r"Parameter Offload: Total persistent parameters|Removing param_group")),
    ("load", lazy_re(r"Loading checkpoint shards|loading weights file|Loading model weights|Loading safetensors|"
                     r"Loading pretrained model|Loading (?:the )?(?:base )?model|Attempting to resume from|Resuming from checkpoint|"
                     r"Continuing training from checkpoint|Loading checkpoint from|successfully read \d+ ZeRO state_dicts|"
                     r"Loading model from|loading configuration file|Instantiating \w+ model|Model loading took|"
                     r"Memory profiling takes|# (?:cuda|GPU) blocks:|KV Cache is|the current vLLM instance can use|"
                     r"finished initializing model|Fetching \d+ files|Loading (?:adapter|LoRA)|"
                     # Meta's reference loader (llama-models' Llama.build) before it reads the checkpoint's shards
                     r"Loading a checkpoint \(shards=", re.I)),
    # torch_geometric's Dataset._process prints "Processing..." alone before building the processed files
    ("data", lazy_re(r"Running tokenizer on dataset|Converting format of dataset|Generating \w+ split|Loading dataset|"
                     r"Preprocessing dataset|Tokenizing|Map \(num_proc=\d+\)|Loading datasets|^Processing\.\.\.\s*$", re.I)),
    ("train", lazy_re(r"\{'loss': |'train_loss'|\bIter \d+: (?:Train|Val) loss|Starting training|^Training(?:\.\.\.|…)?\s*$|"
                      r"\*{3,} Running training \*{3,}|\bglobal_step\b|^\s*Epoch[: ]+\[?\d+|\bstep \d+/\d+|"
                      r"\bEPOCH: \d+ ITER|\bstep=\d+, skipped=\d+|Starting trainer|\bloss['\"]?\s*[:=]?\s*-?\d|"
                      # a loss keyed by a longer name or printed as a pair (FunASR's train log line
                      # `(loss_avg_rank: 0.332), ... [('loss', 0.332)]`, funasr/train_utils/trainer.py log)
                      r"\bloss\w*['\"]?\s*[:=,]\s*-?\d|"
                      # a logged metric keyed by a path, as TensorBoard-style loggers name losses: "train/loss/dyn 5.41"
                      r"\btrain/loss(?:/\w+)*\s*[:=]?\s*-?\d", re.I)),
)
# Lines that say a phase is over: its earlier cue lines no longer count.
_CLOSERS: tuple[tuple[str, LazyPattern], ...] = (
    ("save", lazy_re(r"Done saving|Model weights saved in|Saved model|\[Torch\] Saved|Special tokens file saved|"
                     r"Model saved (?:in|to)", re.I)),
    ("eval", lazy_re(r"\*{3,} eval metrics \*{3,}|'eval_loss'|eval_loss\s*=|\bVal took\b", re.I)),
    ("zero_init", lazy_re(r"After initializing ZeRO optimizer|DeepSpeed Final Optimizer|DeepSpeed using configured LR scheduler|"
                          r"optimizer state initialized")),
    ("load", lazy_re(r"trainable params:|Running training|Model loading took|Loading model weights took", re.I)),
)
# Launcher, scheduler and shell lines around a kill: never the run's own last words.
_LAUNCHER = lazy_re(
    r"sigkill_handler|Killing subprocess|exits with return code|torch\.distributed\.elastic|torch/distributed/|"
    r"failed \(exitcode|closing signal|ChildFailedError|Root Cause|^\s*(?:rank|exitcode|error_file|traceback|time|host)\s+:|"
    r"^[=\-]{5,}|Failures:|<NO_OTHER_FAILURES>|To enable traceback|srun: |slurmstepd|^\s*Killed\s*$|: killed\b|"
    r"^\s*\[?\d*\]?\s*\d*\s*abort\b|libc\+\+abi|CPU Virtual Memory|^\s*MA [\d.]+ GB|Max_MA|exited with code|"
    r"Sending process|Unable to shutdown|WARNING:torch\.distributed|FAILED$|^\s*\^+\s*$|^\s*~+\s*$",
)


# What is left of a launcher's line once its words are cut: the level column of rich's or logging's handler
# (` WARNING  Sending process 14 closing signal SIGTERM   api.py:699`).
LEVEL_ONLY = lazy_re(r"^\s*(?:DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL)?\s*$")


def before_launcher(text: str) -> str:
    """What the run printed on a line before launcher words glued to it (a paste that lost its
    newlines: `Loading checkpoint shards:   0%| | 0/2 [00:00<?, ?it/s]WARNING:torch.distributed...`)."""
    m = _LAUNCHER.search(text)
    return text[:m.start()] if m else text


def line_phase(lines: list[str]) -> tuple[str, int] | None:
    """(phase, index) from log lines printed before the crash, nearest first, or None.

    Launcher and code lines are skipped. A finished progress bar counts only when it is the last
    thing printed; a closing line ("Done saving", "eval metrics") ends the phase it closes."""
    closed: set[str] = set()
    nearest = True
    for i, raw in enumerate(lines):
        text = raw.strip()
        if not text or _LAUNCHER.search(text) or LEVEL_ONLY.search(text):
            continue
        bar = _bar_phase(text)
        found = None
        tail = _after_bar(text) if bar is not None else ""
        tail_event = next((p for p, pat in _EVENTS if p not in closed and pat.search(tail)), None) if tail else None
        if tail_event is not None:
            # tqdm redraws its bar with \r and no newline, so what the run prints next lands on the bar's
            # line after it (`... 1.87s/it, loss=0.296] SAVING CHECKPOINT...`): that text is the later event
            return tail_event, i
        if bar is not None:
            found, finished = bar
            if finished:
                # a finished bar ends its phase; only a finished checkpoint load printed last still
                # counts (the weights are then being moved or wrapped, which is still loading)
                if not (found == "load" and nearest):
                    closed.add(found)
                    nearest = False
                    continue
        elif looks_like_code(raw):
            continue
        if found is None:
            for phase, pat in _CLOSERS:
                if pat.search(text):
                    closed.add(phase)
            found = taxonomy_line(text)
            for phase, pat in () if found else _EVENTS:
                if phase not in closed and pat.search(text):
                    found = phase
                    break
        nearest = False
        if found is not None and found not in closed:
            return found, i
    return None


# compiled when a line holds one of the literals every match needs (a log names few of these call sites)
_TAXONOMY_LINES = tuple((phase, lazy_re(pat, needs=required_literals(pat)))
                        for phase, _fw, kind, pat, _src in callsites.CALLSITES if kind == "line")


# ComfyUI names the node that failed: execution.py's `Error occurred when executing <NodeClass>:` and its error report's
# `Node Type: <NodeClass>` (app/logger). A node class is named for what it does (nodes.py: KSampler, VAEDecode,
# CheckpointLoaderSimple, SaveImage; custom nodes the same way: DiffusersGenerator), so its words are read as a
# frame's function is (lexical word classes); a step word names no node's phase (`model` is in loaders', patchers' and
# mergers' names), but a training node names its loop (ComfyUI-FluxTrainer's FluxTrainLoop, TrainLoop: nodes.py runs
# the training steps), as a `train` frame does.
_COMFY_NODE = lazy_re(r"Error occurred when executing (?P<a>\w+):|Node Type:\W*(?P<b>\w+)",
                      needs=("Error occurred when executing", "Node Type:"))


_TRAIN_WORDS = frozenset({"train", "training"})


def taxonomy_line(text: str) -> str | None:
    """The phase a log line names by its call site (callsites.py's `line` rows), or None."""
    for phase, rx in _TAXONOMY_LINES:
        if rx.search(text):
            return phase
    m = _COMFY_NODE.search(text)
    if m:
        found = _lex_phase_of(_lex_words(m.group("a") or m.group("b")))
        if found is not None and (found[0] in OUTER or found[1] in _TRAIN_WORDS):
            return found[0]
    return None


def _after_bar(text: str) -> str:
    """What follows the last progress bar on a line (its `[elapsed<left, rate, postfix]` closed)."""
    bars = list(_BAR.finditer(text))
    if not bars:
        return ""
    end = text.find("]", bars[-1].end())
    return text[end + 1:] if end >= 0 else ""


# tqdm opens its bar with the l_bar '{desc}: {percentage:3.0f}%|' (tqdm/std.py format_meter): a bar cut after it, or
# one whose counts a viewer dropped, still shows its description and how far it got
_BAR_LEFT = lazy_re(r"^\s*(?P<desc>[^\s|:][^|:]*?):\s+(?P<pct>\d{1,3})%\|", needs=("%|",))


def _bar_phase(text: str) -> tuple[str, bool] | None:
    """(the phase a progress bar shows, whether it is finished), or None for a line without one."""
    parts = _bar_parts(text)
    if parts is None:
        return None
    named, finished, counted = parts
    if named is None and not counted:
        return None          # a cut bar's counts and rate are gone, and with them the reason to call it training
    return named or "train", finished


def _bar_parts(text: str) -> tuple[str | None, bool, bool] | None:
    """(the phase the bar's description names or None, whether it is finished, whether its counts are there)."""
    bars = list(_BAR.finditer(text))
    if not bars:
        left = _BAR_LEFT.search(text)
        if left is None:
            return None
        return _desc_phase(left.group("desc")), int(left.group("pct")) >= 100, False
    m = bars[-1]                                   # tqdm redraws on one line: the last one shows
    start = max(text.rfind("\r", 0, m.start()), text.rfind("]", 0, m.start() - 1) if len(bars) > 1 else -1) + 1
    finished = int(m.group("n")) >= int(m.group("total")) > 0
    return _desc_phase(text[start:m.start()]), finished, True


def _desc_phase(desc: str) -> str | None:
    return next((p for p, pat in _BAR_DESC if pat.search(desc)), None)


# ------------------------------------------------------------------ the message itself

_MESSAGE_CUES: tuple[tuple[str, LazyPattern], ...] = (
    ("save", lazy_re(r"(?:Error|error|Failed|failed) (?:while |when |during )?sav(?:e|ing)|while saving|during sav(?:e|ing)")),
    # MLCommons AlgoPerf's submission runner logs a caught evaluation OOM as `error: GPU out of memory during eval during
    # step N, error : ...` (algorithmic_efficiency submission_runner.py train_once, its eval branch's logging.warning)
    ("eval", lazy_re(r"(?:Error|error|Failed|failed) (?:while |when |during )?(?:evaluat|validat)\w*|during (?:evaluation|validation)|"
                     r"while evaluating|\bduring eval\b")),
    # speech-to-text is decoding too (whisper/transcribe.py transcribe -> decode_with_fallback -> model.decode;
    # faster_whisper/transcribe.py WhisperModel.transcribe -> generate_segments -> model.generate): a transcription
    # fails in generation, `Error processing or transcribing <file>: ...`, `error while transcribing: ...`
    ("generate", lazy_re(r"(?:Error|error|Failed|failed) (?:\w+ or )?(?:while |when |during )?(?:generat|transcrib)\w*|"
                         r"during (?:generation|transcription)|while (?:generating|transcribing)")),
    ("load", lazy_re(r"(?:Error|error|Failed|failed) (?:while |when |during |to )?load\w*|while loading|during loading")),
)


def bar_after(lines: list[str]) -> tuple[str, int] | None:
    """(phase, index) of a progress bar among the lines printed after a failure, nearest first, or None.

    tqdm finishes a bar in close(), which its iterator calls in a finally block (tqdm/std.py __iter__): when the
    failure is raised in the loop's body, the abandoned iterator is closed only once the traceback that holds its
    frame is done with, so the loop's bar is printed last, after the error report: unfinished, and named by its
    description (an unnamed one could be any loop's)."""
    for i, raw in enumerate(lines):
        parts = _bar_parts(raw.strip())
        if parts is not None:
            named, finished, counted = parts
            if named is None and counted and _BAR_POSTFIX_LOSS.search(_bar_postfix(raw)):
                named = "train"
            return (named, i) if named and not finished else None
    return None


# tqdm's right part is `| n/total [elapsed<remaining, rate{postfix}]`, the postfix being set_postfix's `, key=value`
# pairs (tqdm/std.py format_meter, set_postfix): a loop that reports a loss there is a training loop, as a loss line is
_BAR_POSTFIX_LOSS = lazy_re(r"(?:^|,)\s*(?:\w+_)?loss\w*=\s*-?\d", needs=("loss",))


def _bar_postfix(text: str) -> str:
    """The postfix inside the last progress bar's brackets (after its rate), or ''."""
    bars = list(_BAR.finditer(text))
    if not bars:
        return ""
    end = text.find("]", bars[-1].end())
    return text[bars[-1].end():end if end >= 0 else len(text)]


def message_phase(text: str) -> str | None:
    """The phase a failure message names in its own words, or None."""
    for phase, pat in _MESSAGE_CUES:
        if pat.search(text):
            return phase
    return taxonomy_line(text)


# ------------------------------------------------------------------ the words of a traceback, when no cue names it

# A frame header's parts (CPython's `File "<path>", line N, in <func>`, rich's and pytest's `<path>:N in <func>`,
# IPython's `<path> in <func>(...)`): the function is the frame's name, the path its module.
_LEX_FRAME = lazy_re(r'(?:File "?(?P<file>[^",]+)"?,? line \d+,? in |File\s+(?P<pfile>[^\s",]+\.py):\d+,?\s+in\s+|'
                     r'(?P<rfile>\S+\.py):\d+:? in |(?P<ifile>\S+\.py) in )(?P<func>[\w<>.]+)', needs=("File", ".py"))
# Identifiers split into words the way they are written: snake_case, dotted paths, CamelCase and its acronyms
# (`DataLoader` -> data loader, `HFGenerate` -> hf generate), digits apart (PEP 8 naming conventions).
_LEX_WORD = lazy_re(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Word classes, each a phase: what a function, a module or a statement is named after in the Python libraries
# of training and serving (torch.autograd, torch.optim, transformers' generation/, trainer's evaluate/predict,
# torch.utils.data, Module.to/_apply, save/state_dict). A word is matched whole, in lower case.
_LEX_CLASSES: tuple[tuple[str, frozenset[str]], ...] = (
    ("backward", frozenset({"backward", "backwards", "grad", "grads", "gradient", "gradients", "autograd", "backprop",
                            "vjp"})),
    ("optimizer", frozenset({"step", "optimizer", "optimizers", "optim", "adam", "adamw", "sgd", "lamb", "lion",
                             "adafactor", "muon", "sophia"})),
    ("generate", frozenset({"generate", "generation", "generator", "sample", "sampling", "sampler", "decode", "decoding",
                            "infer", "inference", "rollout", "txt2img", "img2img", "denoise", "transcribe",
                            "transcription"})),
    ("eval", frozenset({"eval", "evaluate", "evaluation", "evaluator", "validation", "validate", "val", "predict",
                        "prediction", "test", "benchmark"})),
    ("save", frozenset({"save", "saving", "saver", "export", "dump", "serialize", "persist", "merge", "unload"})),
    ("data", frozenset({"dataloader", "dataset", "datasets", "collate", "collator", "getitem", "tokenize", "preprocess"})),
    # a trainer's `initialize`/`setup` sets up every part of a run (nnU-Net's builds data, model and optimizer and
    # waits at a barrier: tests/data/logs/real g32), so only the words of one kind of set-up are read as loading
    ("load", frozenset({"load", "loading", "loader", "pretrained", "init", "build", "builder", "create", "prepare",
                        "apply", "warmup", "capture", "instantiate", "restore", "wrap", "shard", "quantize",
                        "dispatch", "allocate"})),
    # `__call__` is any callable's (torch/_ops.py's OpOverloadPacket.__call__ dispatches every op): not a forward pass
    ("forward", frozenset({"forward", "model", "train", "training", "fit"})),
)
# Compounds read before their words: `DataLoader` is data, not load; `zero_grad` is the optimizer's; a gradient
# `checkpoint` recomputes the forward pass (torch/utils/checkpoint.py), so it names no phase of its own.
_LEX_COMPOUNDS: tuple[tuple[str, str], ...] = (
    ("data loader", "data"), ("data set", "data"), ("zero grad", "optimizer"), ("state dict", "save"),
    ("from pretrained", "load"), ("get item", "data"), ("next data", "data"),
    # a batch fetched (`get_next_batch`, `next_batch`, `load_batch`) and the training set named as data (`trainData`,
    # `train_dataset`): the input pipeline, not the step the words `train`/`load` would otherwise name
    ("next batch", "data"), ("get batch", "data"), ("load batch", "data"), ("train data", "data"),
    ("training data", "data"),
)
# Frames that name nothing of the run: wrappers, entry points, the interpreter's own (<module>, <lambda>).
_LEX_SILENT = frozenset({"main", "run", "wrapper", "inner", "wrapped", "decorate", "context", "fn", "func", "module",
                         "lambda", "self", "args", "kwargs", "py", "site", "packages", "lib", "python", "dist", "src",
                         "checkpoint", "utils", "util", "core", "api", "torch", "nn", "modules"})
# (`convert`, Module.to's inner function, is callsites.py's row; as a word it also names dtype casts such as
# accelerate's `_convert_to_fp32` of the logits.)
# A statement's calls, outermost first (`generated = model.generate(batch.to("cuda"))` is generation): the
# called names are read as a frame's are. `.to(`/`.cuda(` are frame_phase's cues with their arguments; alone they
# also move a batch or allocate (inductor's `empty_strided_cuda`), so the word `cuda` names nothing here.
_LEX_CALL = lazy_re(r"(?P<name>[A-Za-z_]\w*)\s*\(", needs=("(",))
_LEX_KEYWORDS = frozenset({"if", "elif", "while", "for", "return", "with", "assert", "print", "not", "and", "or", "in",
                           "list", "dict", "tuple", "set", "len", "super", "isinstance", "getattr", "int", "float", "str"})


def _lex_words(name: str) -> list[str]:
    return [w.lower() for w in _LEX_WORD.findall(name.replace("__", " "))]


def _lex_phase_of(words: list[str]) -> tuple[str, str] | None:
    """(phase, word) of the first word of a name that belongs to a class, a compound starting there first
    (`load_state_dict` is loading, `get_state_dict` saving: the verb leads a Python name)."""
    if words == ["wrap"]:
        # a bare `wrap`/`_wrap` is a generic wrapper (torch/multiprocessing/spawn.py `_wrap` runs a spawned process's
        # whole function, decorators' `def wrap(f)`); wrapping a model names its object (`auto_wrap`, `wrap_model`)
        return None
    for i, word in enumerate(words):
        for compound, phase in _LEX_COMPOUNDS:
            parts = compound.split()
            if words[i:i + len(parts)] == parts:
                return phase, "_".join(parts)
        if word in _LEX_SILENT:
            continue
        for phase, vocab in _LEX_CLASSES:
            if word in vocab:
                return phase, word
    return None




def _lex_module_phase(path: str) -> tuple[str, str] | None:
    """A library module's path, file name first then its packages (`transformers/generation/utils.py`): only an
    installed package's (site-packages, dist-packages) layout is the library's; a script's name is its user's."""
    m = taxonomy.INSTALLED.search(path)
    if m is None:
        return None
    parts = re.split(r"[\\/]", path[m.end():])
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    if parts[-1] == "__init__":                         # a package's own module: its name is the package's
        parts.pop()
    for part in reversed(parts[1:] or parts):         # the top package names the library, not what it does
        found = _lex_phase_of(_lex_words(part))
        if found is not None:
            return found
    return None


def lexical_phase(lines: list[str]) -> tuple[str, int, str] | None:
    """(phase, index of the line, the word) read off the words of traceback lines, outermost first, when no
    call-site cue names them. Each frame is read innermost first: its statement's calls, its function's name,
    then an installed module's path; frames whose words name nothing (wrappers, entry points) are passed over.
    As in frame_phase, an outer phase anywhere in the stack wins over the step phases (generation and evaluation
    run forward passes); among each, the one nearest to the failure wins."""
    ipython = any(_IPY_ARROW.search(line) for line in lines)
    silent = _under_silent_frames(lines)
    step: tuple[str, int, str] | None = None
    for i in range(len(lines) - 1, -1, -1):
        found = None if i in silent else _lex_line(lines[i], ipython)
        if found is None:
            continue
        if found[0] not in STEP:
            return found[0], i, found[1]
        if step is None:
            step = (found[0], i, found[1])
    return step


def _lex_path(m: re.Match[str]) -> str:
    """The file a `_LEX_FRAME` match names, in whichever traceback form it was printed."""
    return m.group("file") or m.group("pfile") or m.group("rfile") or m.group("ifile") or ""


def _under_silent_frames(lines: list[str]) -> set[int]:
    """Indices of the source lines printed under a framework frame that taxonomy.py places in no phase: the
    statement is that function's own (`return super().apply(*args, **kwargs)` under Function.apply)."""
    silent: set[int] = set()
    quiet = False
    for i, line in enumerate(lines):
        m = _LEX_FRAME.search(line)
        if m is not None:
            placed = taxonomy.frame_place(_lex_path(m), m.group("func"))
            quiet = placed is not None and placed[0] is None
        elif quiet:
            silent.add(i)
    return silent


def _lex_line(text: str, ipython: bool) -> tuple[str, str] | None:
    m = _LEX_FRAME.search(text)
    if m is not None:
        path = _lex_path(m)
        placed = taxonomy.frame_place(path, m.group("func"))
        if placed is not None:              # a framework's frame its taxonomy row speaks of: its words say no more
            return (placed[0], m.group("func")) if placed[0] else None
        return _lex_phase_of(_lex_words(m.group("func"))) or _lex_module_phase(path)
    if not looks_like_code(text) or ipython and _IPY_CONTEXT.search(text) and not _IPY_ARROW.search(text):
        return None                        # IPython's numbered neighbours of the arrowed line did not run
    for call in _LEX_CALL.finditer(text):
        name = call.group("name")
        if name not in _LEX_KEYWORDS:
            found = _lex_phase_of(_lex_words(name))
            if found is not None:
                return found
    return None


# A banner's first word, when it is a gerund: what the run said it was starting, the last thing it printed before
# a kill ("Initializing language decoder from ...", "Processing...", "training...", "Converting to CKPT ...").
_BANNER_WORD = lazy_re(r"^[^A-Za-z]*([A-Za-z]+ing)\b")
_BANNER_GERUNDS: dict[str, str] = {
    **dict.fromkeys(("loading", "initializing", "initialising", "building", "preparing", "creating", "instantiating",
                     "restoring", "resuming", "wrapping", "sharding", "quantizing", "quantising", "compiling",
                     "capturing", "warming"), "load"),
    **dict.fromkeys(("saving", "exporting", "merging", "converting", "writing", "serializing", "uploading",
                     "pushing", "checkpointing"), "save"),
    **dict.fromkeys(("evaluating", "validating", "testing", "predicting", "benchmarking"), "eval"),
    **dict.fromkeys(("generating", "sampling", "decoding", "inferring", "rendering", "transcribing"), "generate"),
    **dict.fromkeys(("training", "fitting", "finetuning", "tuning"), "train"),
    **dict.fromkeys(("tokenizing", "tokenising", "processing", "preprocessing", "collating", "packing", "mapping",
                     "filtering", "shuffling", "downloading"), "data"),
}


# ... unless the line says that work is over ("Training process finished. Exit code: 137", a supervisor's summary)
_BANNER_DONE = lazy_re(r"\b(?:finished|done|completed?|ended|exited|took|failed|error)\b", re.I)


def banner_phase(lines: list[str]) -> tuple[str, int] | None:
    """(phase, index) of the run's last printed line, nearest first, when it opens with a gerund of a class; None
    when that line says nothing of the kind (only the last thing printed counts: earlier banners were done)."""
    for i, raw in enumerate(lines):
        text = raw.strip()
        if not text or _LAUNCHER.search(text) or LEVEL_ONLY.search(text) or looks_like_code(raw):
            continue
        m = _BANNER_WORD.search(text)
        phase = _BANNER_GERUNDS.get(m.group(1).lower()) if m and not _BANNER_DONE.search(text) else None
        return (phase, i) if phase else None
    return None


# ------------------------------------------------------------------ the reporter's words, when nothing in the log does

# A sentence that says when the failure came: a temporal conjunction or preposition (`when`, `while`, `during`, `upon`,
# `at the start of`), at most three words, then the verb or noun of one phase (`when saving the model`, `during
# evaluation`, `while loading checkpoint shards`). English grammar, not a tool's: read only after every reading of
# the log named nothing. `after`/`before` place the failure next to a phase, not in it, and the words of a whole run
# (`training`, `fine-tuning`, `step`) name no phase of it, so neither is read.
_PROSE_WHEN = lazy_re(r"\b(?:when|while|during|upon|whilst|in the middle of|at the (?:start|beginning|end) of)\s+"
                      r"((?:[\w'-]+[ \t]*){1,4})", needs=("when", "while", "during", "upon", "whilst",
                                                                      "middle of", "start of", "beginning of", "end of"))
_PROSE_CLASSES: tuple[tuple[str, frozenset[str]], ...] = (
    ("backward", frozenset({"backward", "backprop", "backpropagation", "backpropagate"})),
    ("optimizer", frozenset({"optimizer"})),
    ("generate", frozenset({"generate", "generation", "inference", "infer", "sample", "sampling", "decode",
                            "decoding", "rollout", "transcribe", "transcription"})),
    ("eval", frozenset({"eval", "evaluate", "evaluation", "validation", "validate", "predict", "prediction"})),
    ("save", frozenset({"save", "saving", "export", "merge", "checkpointing"})),
    ("data", frozenset({"dataloader", "tokenize", "tokenization", "preprocess", "preprocessing", "collate"})),
    ("load", frozenset({"load", "loading", "from_pretrained"})),
)


def _prose_word(word: str) -> str | None:
    """The phase of one English word, its inflections undone (`saving` -> save, `evaluating` -> evaluate)."""
    w = word.lower()
    forms = [w]
    if w.endswith("ing") and len(w) > 5:
        forms += [w[:-3], w[:-3] + "e"]
    elif w.endswith("ed") and len(w) > 4:
        forms += [w[:-2], w[:-1]]
    elif w.endswith("s") and len(w) > 3:
        forms += [w[:-1]]
    for phase, vocab in _PROSE_CLASSES:
        if any(f in vocab for f in forms):
            return phase
    return None


def prose_phase(text: str) -> str | None:
    """The phase a reporter's sentence or an issue's title places the failure in (`... when saving the model`), or
    None; the first phrase that names one wins."""
    for m in _PROSE_WHEN.finditer(text):
        for word in m.group(1).split():
            found = _prose_word(word.strip("'-"))
            if found is not None:
                return found
    return None
