"""Which part of training was running when memory ran out, read from traceback frames.

Cues follow the "Phase cues" list of ../shared/reference/oom-log-formats.md. Outer phases
(save, eval, generate, ZeRO init, load) win over inner ones, because an evaluation or a
checkpoint save also runs forward passes; among the training-step phases the deepest wins
(backward recomputation runs forward frames, the optimizer runs after backward).
"""
from __future__ import annotations

import re

from oomdoctor.lazyre import LazyPattern, lazy_re


def _cue(pattern: str, *also: str) -> LazyPattern:
    r"""A cue `\b(?:word|word...)\b...`: frames that hold none of its words (nor `also`, the literals of
    what follows the words) skip compiling and running it."""
    words = pattern[len(r"\b(?:"):pattern.index(r")\b")].replace("\\", "").split("|")
    return lazy_re(pattern, needs=(*words, *also))


# (phase, pattern over frame function names and source lines), outermost first.
_CUES: tuple[tuple[str, LazyPattern], ...] = (
    ("save", _cue(r"\b(?:save_model|_save_checkpoint|save_pretrained|_save|save_checkpoint|_save_to_state_dict|"
                        r"save_state|_save_optimizer_and_scheduler|full_state_dict|_full_post_state_dict_hook|"
                        r"get_state_dict|_get_state_dict|consolidated_16bit_state_dict|_zero3_consolidated_16bit_state_dict|"
                        r"undo_layout|safe_save_file|save_file)\b|torch\.save\(|state_dict\(\)", "torch.save(", "state_dict()")),
    ("eval", _cue(r"\b(?:evaluate|_evaluate|evaluation_loop|prediction_step|prediction_loop|predict|eval_step|"
                        r"run_evaluation|do_eval|validation_step|_run_validation|validate)\b")),
    ("generate", _cue(r"\b(?:generate|_sample|greedy_search|beam_search|_generate|generate_completions|"
                            r"_generate_and_score_completions|rollout|llm\.generate)\b|\bin sample\b", "in sample")),
    ("zero_init", _cue(r"\b(?:_configure_zero_optimizer|_configure_optimizer|DeepSpeedZeroOptimizer|"
                             r"DeepSpeedZeroOptimizer_Stage3|initialize_optimizer_states|_create_fp16_partitions_with_defragmentation|"
                             r"_partition_param|_convert_to_zero_parameters|_post_init_method|_setup_for_real_optimizer|"
                             r"deepspeed\.initialize|_prepare_deepspeed|initializing optimizer states)\b")),
    ("load", _cue(r"\b(?:from_pretrained|_load_pretrained_model|load_checkpoint_and_dispatch|"
                        r"_load_state_dict_into_meta_model|set_module_tensor_to_device|load_state_dict|load_model|"
                        r"load_checkpoint|torch\.load|_apply|Params4bit|_quantize|init_device_mesh|determine_num_available_blocks|"
                        r"profile_run|_init_cache|initialize_cache|_initialize_kv_caches|load_weights|"
                        r"Loading checkpoint shards|to_empty|cuda\(\))\b|\.to\((?:device|'cuda|\"cuda|self\.device|torch\.device)", ".to(")),
)
_STEP_CUES: tuple[tuple[str, LazyPattern], ...] = (
    ("optimizer", _cue(r"\b(?:optimizer\.step|_multi_tensor_adamw|_single_tensor_adamw|_fused_adamw|adamw|"
                             r"exp_avg_sq|exp_avg|_init_group|_optimizer_step|_take_model_step|step_with_closure|"
                             r"clip_grad_norm_|optimizer_step|_update_scale)\b|optim/\w+\.py|\bstep\(\)", "optim/", "step()")),
    ("backward", _cue(r"\b(?:backward|_engine_run_backward|run_backward|_execution_engine|"
                            r"accelerator\.backward|scaler\.scale\(loss\)|allreduce_gradients|reduce_ready_partitions_and_remove_grads|"
                            r"reduce_partition_and_remove_grads|average_tensor|gradients/)\b")),
    ("loss", _cue(r"\b(?:cross_entropy|nll_loss|log_softmax|ForCausalLMLoss|fixed_cross_entropy|loss_function|"
                        r"_convert_to_fp32|compute_loss_func|chunked_cross_entropy|LigerFusedLinearCrossEntropy)\b|"
                        r"logits\.float\(\)|logits = logits\.float", "logits.float()", "logits = logits.float")),
    ("forward", _cue(r"\b(?:forward|_call_impl|_wrapped_call_impl|training_step|scaled_dot_product_attention|"
                           r"flash_attn_func|_flash_attention_forward|model\(\*\*inputs\)|compute_loss|inner_training_loop|"
                           r"_inner_training_loop|train)\b")),
)
_FRAME = lazy_re(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<func>[\w<>.]+)|^\s*(?P<rfile>\S+\.py):\d+ in (?P<rfunc>[\w<>.]+)|'
                    r'^\s*(?P<ifile>\S+\.py)(?:\s*:\s*\d+)? in (?P<ifunc>[\w<>.]+)', needs=('File "', ".py"))
TRACEBACK_HEAD = lazy_re(r"Traceback \(most recent call last\)|Traceback \(most recent call last\):|─+ Traceback", needs=("Traceback",))


def phase_of(frames: list[str]) -> str | None:
    """Phase from traceback lines (frame headers and source lines), outermost first, or None."""
    if not frames:
        return None
    text = "\n".join(frames)
    for phase, pat in _CUES:
        if pat.search(text):
            if phase == "generate" and _only_sampling_word(text):
                continue
            return phase
    for phase, pat in _STEP_CUES:
        if pat.search(text):
            return phase
    return None


def _only_sampling_word(text: str) -> bool:
    """'sample' alone in a data loader frame is not generation."""
    return not re.search(r"\b(?:generate|_sample|greedy_search|beam_search|_generate|rollout)\b", text) and bool(
        re.search(r"dataloader|__getitem__|sampler", text))


# Log lines (not frames) that say what the run was doing, for kills without a traceback.
_LINE_CUES: tuple[tuple[str, LazyPattern], ...] = (
    ("save", lazy_re(r"Saving model checkpoint to|Saving checkpoint|\[Torch\] Checkpoint|save_checkpoint|Saving the model")),
    ("eval", lazy_re(r"\*{3,} Running Evaluation \*{3,}|Running Evaluation|Evaluating:|\*\*\*\*\* eval metrics")),
    ("zero_init", lazy_re(r"initializing optimizer states|Creating ZeRO Offload|DeepSpeedZeRoOffload|Creating fp16 ZeRO stage")),
    ("load", lazy_re(r"Loading checkpoint shards|loading weights file|Loading model weights|Loading safetensors")),
)


def phase_from_log_lines(lines: list[str]) -> str | None:
    """Phase from the last lines printed before a kill (nearest first)."""
    for line in lines:
        if re.search(r"\d+/\d+ \[\d+:\d+|\{'loss'|'loss':", line):
            return None            # training steps were running; no finer phase without a traceback
        for phase, pat in _LINE_CUES:
            if pat.search(line):
                return phase
    return None


def is_frame(text: str) -> bool:
    return bool(_FRAME.search(text))
