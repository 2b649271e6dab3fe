"""The phase taxonomy (oomdoctor/crashlog/taxonomy.py) checked against the frameworks' own functions.

tests/data/callsites/inventory.tsv lists every function the frameworks define in the modules the taxonomy's rows
name (written by benchmarks/callsite_inventory.py from installed packages and git checkouts, each line with the
version it was read from). The checks: every row speaks of a module and of functions that exist; a module's
functions land only in the phases that module runs; names that say their phase are placed there; and how much of
each framework the rows place (run with -s to see the table). Then real frame lines of each framework, none of them
in a fixture, read through parse_log.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from oomdoctor.crashlog import parse_log
from oomdoctor.crashlog.taxonomy import _ANY, _NOT_A_PASS, MODULES, PACKAGES, frame_phase, module_path, place

DATA = Path(__file__).parent / "data"
# packages whose source no checkout here holds (vLLM's, TensorFlow's and ComfyUI's repositories are larger than a
# mirror may be; the Keras TensorFlow bundled is read as its fork, tf-keras): their rows come from the files they cite,
# not measured
UNREAD = {"vllm", "tensorflow", "comfy"}


def _inventory() -> dict[str, tuple[str, list[str]]]:
    out = {}
    for line in (DATA / "callsites" / "inventory.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            module, version, funcs = line.split("\t")
            out[module] = (version, funcs.split())
    return out


INVENTORY = _inventory()


def _phase(module: str, func: str) -> str | None:
    found = place(module, func)
    return found[0] if found else None


def test_the_inventory_reads_every_package_the_rows_name_but_the_unread():
    read = {m.split("/")[0] for m in INVENTORY}
    assert set(PACKAGES) - read - {"pytorch_lightning"} == UNREAD
    assert len(INVENTORY) > 1000 and sum(len(f) for _v, f in INVENTORY.values()) > 10000


@pytest.mark.parametrize("row", [r for r in MODULES if r[0] != r"\S+\.py"], ids=lambda r: f"{r[0][:40]}:{r[2]}")
def test_every_row_names_modules_and_functions_the_frameworks_define(row):
    module_rx, func_rx, _phase_, source = row
    top = re.match(r"\(?(?:\?:)?(\w+)", module_rx).group(1)
    if top in UNREAD:
        pytest.skip(f"{top}'s source is not read: {source}")
    modules = [m for m in INVENTORY if re.match(module_rx, m)]
    assert modules, f"no module of the inventory matches {module_rx} ({source})"
    funcs = [f for m in modules for f in INVENTORY[m][1]]
    assert any(re.fullmatch(func_rx, f) for f in funcs), f"no function of {module_rx} matches {func_rx}"


# What each area of a framework runs, stated apart from the rows: its functions may be placed in these phases or in
# none, never in another.
AREAS = (
    (r"torch/optim/(?!swa_utils)", {"optimizer", "load", "save"}),  # a checkpoint's optimizer state in and out
    (r"torch/autograd/", {"backward", "forward"}),
    (r"torch/utils/data/", {"data"}),
    (r"torch/nn/modules/loss\.py", {"loss", "load", "save"}),
    (r"torch/serialization\.py", {"load", "save"}),
    (r"torch/distributed/checkpoint/", {"load", "save"}),
    (r"transformers/generation/(?!configuration_utils)", {"generate", "backward"}),
    (r"transformers/loss/", {"loss", "backward"}),       # a loss Function's own backward
    (r"transformers/trainer\.py", {"eval", "save", "load", "data", "forward"}),
    (r"transformers/quantizers/", {"load", "forward"}),
    (r"accelerate/big_modeling\.py", {"load", "forward"}),
    (r"peft/tuners/", {"load", "save", "forward", "backward"}),
    (r"bitsandbytes/optim/", {"optimizer", "forward", "load"}),
    (r"deepspeed/ops/adam/", {"optimizer", "backward", "forward"}),
    (r"deepspeed/runtime/zero/", {"zero_init", "forward", "backward", "optimizer", "load", "save", "generate"}),
    (r"liger_kernel/ops/", {"forward", "backward", "loss"}),
    (r"torchtune/modules/loss/", {"loss", "backward", "forward"}),
    (r"unsloth/save\.py", {"save", "forward"}),
    (r"lightning/pytorch/loops/evaluation_loop\.py", {"eval"}),
    (r"flash_attn/", {"forward", "backward"}),
)


@pytest.mark.parametrize("area,allowed", AREAS, ids=[a for a, _ in AREAS])
def test_a_modules_functions_land_only_in_the_phases_it_runs(area, allowed):
    modules = [m for m in INVENTORY if re.match(area, m)]
    assert modules
    wrong = [f"{m}:{f}={_phase(m, f)}" for m in modules for f in INVENTORY[m][1] if _phase(m, f) not in allowed | {None}]
    assert not wrong, wrong[:20]


# Names that say what they do, wherever they are defined.
NAMES = (
    (r"save_pretrained|save_model|save_checkpoint|_save_checkpoint|save_state|save_16bit_model", {"save"}),
    (r"from_pretrained|_load_pretrained_model|load_checkpoint|_load_checkpoint", {"load"}),
    (r"backward", {"backward"}),
    (r"step", {"optimizer", "generate", None}),          # a rollout env's step is generation; an LR schedule's nothing
    (r"forward", {"forward", "loss", "generate", "backward"}),  # a loss module's, a served model's, a backward Function's
    (r"evaluate|evaluation_loop|prediction_step", {"eval"}),
)


@pytest.mark.parametrize("name,allowed", NAMES, ids=[n.split("|")[0] for n, _ in NAMES])
def test_names_that_say_their_phase_are_placed_in_it(name, allowed):
    found = [(m, f) for m, (_v, fs) in INVENTORY.items() for f in fs if re.fullmatch(name, f)]
    assert found
    wrong = [f"{m}:{f}={_phase(m, f)}" for m, f in found if _phase(m, f) not in allowed]
    assert not wrong, wrong[:20]


def test_how_much_of_each_framework_the_rows_place():
    total, placed = Counter(), Counter()
    for module, (_v, funcs) in INVENTORY.items():
        top = module.split("/")[0]
        for f in funcs:
            total[top] += 1
            placed[top] += _phase(module, f) is not None
    print("\n" + "\n".join(f"  {top:18s} {placed[top]:5d} of {total[top]:5d} functions placed"
                           for top in sorted(total)))
    assert sum(placed.values()) >= 0.5 * sum(total.values())
    # areas whose every function runs in one phase are placed whole
    for area in ("torch/optim/", "transformers/generation/", "transformers/loss/", "liger_kernel/ops/"):
        funcs = [(m, f) for m in INVENTORY if m.startswith(area) and "lr_scheduler" not in m and "swa_utils" not in m
                 and "configuration_utils" not in m for f in INVENTORY[m][1]]
        # but for the rows that place nothing anywhere: finalizers, helpers of both passes (liger's get_amp_custom_fwd_bwd)
        assert funcs and all(_phase(m, f) is not None for m, f in funcs if f != "__del__" and "fwd_bwd" not in f), area


def test_a_module_path_is_read_from_its_top_package_in_every_install_layout():
    assert module_path("/usr/lib/python3/dist-packages/torch/optim/adamw.py") == "torch/optim/adamw.py"
    assert module_path(r"C:\Users\me\venv\Lib\site-packages\torch\optim\adamw.py") == "torch/optim/adamw.py"
    assert module_path("/root/transformers/src/transformers/trainer.py") == "transformers/trainer.py"
    assert module_path("/srv/me/torch_experiments/train.py") is None
    # a package folder inside another package: installed, the folder under site-packages names the framework; in a
    # checkout, the leftmost start a row speaks of
    assert module_path("/x/site-packages/openrlhf/utils/deepspeed/deepspeed.py") == "openrlhf/utils/deepspeed/deepspeed.py"
    assert module_path("/srv/OpenRLHF/openrlhf/utils/deepspeed/deepspeed.py") == "openrlhf/utils/deepspeed/deepspeed.py"
    assert frame_phase("/srv/OpenRLHF/openrlhf/utils/deepspeed/deepspeed.py", "save_ckpt") == "save"
    assert frame_phase("/srv/me/train.py", "train") is None                   # a user's script is theirs to name
    assert frame_phase("/x/site-packages/torch/autograd/grad_mode.py", "decorate_context") is None


# Real frames of each framework (module path and function as its source defines them), none of them in a fixture,
# under a user script's frame and above torch's OOM message.
FRAMES = (
    ("torch", "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py", "foreach_reduce", "backward"),
    ("torch", "torch/amp/grad_scaler.py", "_unscale_grads_", "optimizer"),
    ("torch", "torch/utils/checkpoint.py", "unpack_hook", "backward"),
    ("torch", "torch/nn/parallel/distributed.py", "_sync_buffers", "forward"),
    ("transformers", "transformers/core_model_loading.py", "convert_and_load_state_dict_in_model", "load"),
    ("transformers", "transformers/integrations/tensor_parallel.py", "shard_and_distribute_module", "load"),
    ("accelerate", "accelerate/accelerator.py", "unscale_gradients", "optimizer"),
    ("peft", "peft/utils/save_and_load.py", "set_peft_model_state_dict", "load"),
    ("DeepSpeed", "deepspeed/runtime/zero/stage3.py", "_prepare_fp32_grad_for_sub_group", "optimizer"),
    ("DeepSpeed", "deepspeed/runtime/zero/stage3.py", "_create_fp16_sub_groups", "zero_init"),
    ("DeepSpeed", "deepspeed/runtime/zero/partitioned_param_coordinator.py", "__all_gather_params", "forward"),
    ("DeepSpeed", "deepspeed/runtime/engine.py", "_get_zero_param_shapes", "save"),
    ("bitsandbytes", "bitsandbytes/optim/optimizer.py", "update_step", "optimizer"),
    ("trl", "trl/trainer/utils.py", "entropy_from_logits", "loss"),
    ("LLaMA-Factory", "llamafactory/model/patcher.py", "patch_model", "load"),
    ("ms-swift", "swift/infer_engine/vllm_engine.py", "_add_request", "generate"),
    ("torchtune", "torchtune/training/checkpointing/_checkpointer.py", "save_checkpoint", "save"),
    ("axolotl", "axolotl/loaders/model.py", "_configure_embedding_dtypes", "load"),
    ("unsloth", "unsloth/kernels/rms_layernorm.py", "_rms_layernorm_backward", "backward"),
    ("OpenRLHF", "openrlhf/trainer/ppo_utils/samples_generator.py", "_generate_vllm", "generate"),
    ("Liger-Kernel", "liger_kernel/ops/fused_linear_cross_entropy.py", "fused_linear_cross_entropy_forward", "loss"),
    ("litgpt", "litgpt/generate/base.py", "next_token", "generate"),
    ("Lightning", "lightning/pytorch/loops/evaluation_loop.py", "_evaluation_step", "eval"),
    ("flash-attn", "flash_attn/flash_attn_interface.py", "_flash_attn_varlen_backward", "backward"),
    ("diffusers", "diffusers/models/attention_processor.py", "get_attention_scores", "forward"),
    ("Megatron-LM", "megatron/core/optimizer/optimizer.py", "prepare_grads", "optimizer"),
    ("Megatron-LM", "megatron/core/distributed/param_and_grad_buffer.py", "start_grad_sync", "backward"),
    ("ColossalAI", "colossalai/zero/low_level/low_level_optim.py", "_run_reduction", "backward"),
    ("mmengine", "mmengine/_strategy/deepspeed.py", "_wrap_model", "load"),
    ("Keras", "keras/src/backend/tensorflow/trainer.py", "test_step", "eval"),
    ("text-generation-webui", "modules/text_generation.py", "generate_reply_HF", "generate"),
    ("text-generation-webui", "modules/models.py", "reload_model", "load"),
    ("stable-diffusion-webui-forge", "modules/sd_models.py", "reload_model_weights", "load"),
    ("stable-diffusion-webui-forge", "modules/sd_samplers_kdiffusion.py", "sample_img2img", "generate"),
    ("tf-keras", "tf_keras/engine/training.py", "predict_step", "eval"),
)
MESSAGE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           "79.10 GiB of which 1.01 GiB is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use.")


# The samples drawn after these frames were chosen: they may hold one of them (audit 12 holds ZeRO-3's
# __all_gather_params, audit 15b Lightning's _evaluation_step, audit 20b ZeRO-3's __all_gather_params again, audit 22
# Forge's sample_img2img), which says nothing about whether the table was written against it.
DRAWN_LATER = ("audit12", "audit12b", "audit15", "audit15b", "audit20", "audit20b", "audit22", "audit22b")


def _fixture_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in (DATA / "logs").rglob("*")
                     if p.is_file() and p.suffix not in (".md", ".yaml")
                     and p.relative_to(DATA / "logs").parts[0] not in DRAWN_LATER)


def test_the_framework_frames_are_in_no_fixture_and_in_the_inventory():
    fixtures = _fixture_text()
    for _fw, module, func, _want in FRAMES:
        assert func in INVENTORY[module][1], (module, func)
        assert not re.search(re.escape(module.rsplit("/", 1)[-1]) + r"\W+line \d+, in " + re.escape(func) + r"\b",
                             fixtures), (module, func)


@pytest.mark.parametrize("framework,module,func,want", FRAMES, ids=[f"{f[0]}-{f[2]}" for f in FRAMES])
def test_a_framework_frame_names_its_phase(tmp_path, framework, module, func, want):
    frame = f'  File "/usr/local/lib/python3.11/site-packages/{module}", line 412, in {func}'
    log = tmp_path / "run.log"
    log.write_text("\n".join(["Traceback (most recent call last):", '  File "/workspace/job.py", line 30, in <module>',
                              "    sys.exit(cli())", frame, "    out = impl(*args, **kwargs)", MESSAGE, ""]),
                   encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.phase == want
    assert ev.phase_evidence is not None and ev.phase_evidence.text == frame.strip()


def test_the_innermost_frame_of_the_winning_phase_is_the_evidence(tmp_path):
    # ZeRO-2's backward hook under the engine's backward under the trainer's training step: backward wins over the
    # forward word of the step, and the evidence is the hook nearest to the failure
    frames = [
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 3318, in training_step',
        '  File "/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py", line 2151, in backward',
        '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1976, in backward',
        '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1004, in '
        'copy_grads_in_partition',
    ]
    log = tmp_path / "run.log"
    log.write_text("\n".join(["Traceback (most recent call last):", *frames, MESSAGE, ""]), encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.phase == "backward" and ev.phase_evidence.text == frames[-1].strip()


@pytest.mark.parametrize("row", MODULES, ids=lambda r: f"{r[0][:40]}:{r[2]}")
def test_every_row_is_cited_and_compiles(row):
    module_rx, func_rx, phase, source = row
    re.compile(module_rx)
    re.compile(func_rx)
    assert phase in (None, "data", "save", "eval", "generate", "zero_init", "load", "optimizer", "backward", "loss",
                     "forward")
    assert len(source) > 10 and ("/" in source or "." in source)
    # the rows are indexed by the package their module path starts with: it must be one the paths are read from
    if module_rx != r"\S+\.py":
        head = re.match(r"\(\?:([\w|]+)\)/|(\w+)/", module_rx)
        assert head and set((head.group(1) or head.group(2)).split("|")) <= set(PACKAGES), module_rx
    assert func_rx in (_ANY, _NOT_A_PASS) or func_rx


def test_the_committed_inventory_matches_the_rows_module_selection():
    # every module in the inventory is one some row names (the generator keeps only those), so the coverage above is
    # measured on what the rows claim, not on the whole of each framework
    rows = [re.compile(m) for m, _f, _p, _s in MODULES if m != r"\S+\.py"]
    stray = [m for m in INVENTORY if not any(r.match(m) for r in rows)]
    assert not stray, stray[:10]


def test_the_words_of_a_framework_frame_the_taxonomy_places_nowhere_name_no_phase(tmp_path):
    # torch/autograd/function.py's Function.apply runs a custom Function in forward and in backward alike; the word
    # `apply` (loading's, for Module._apply) must not name a phase for it when nothing else does
    log = tmp_path / "run.log"
    log.write_text("\n".join([
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.11/site-packages/torch/autograd/function.py", line 575, in apply',
        "    return super().apply(*args, **kwargs)",
        MESSAGE, ""]), encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.phase is None


# One framework frame (ZeRO-3's optimizer step preparing a sub-group's fp32 gradients) in each form a traceback is
# printed or pasted in: CPython, CPython on Windows, rich's box, IPython 8 with the class and signature, pytest's.
FORMS = (
    '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py", line 2090, in '
    '_prepare_fp32_grad_for_sub_group',
    '  File "C:\\Users\\me\\miniconda3\\envs\\ft\\Lib\\site-packages\\deepspeed\\runtime\\zero\\stage3.py", line 2090, in '
    '_prepare_fp32_grad_for_sub_group',
    "│ /opt/conda/lib/python3.11/site-packages/deepspeed/runtime/zero/stage3.py:2090 in "
    "_prepare_fp32_grad_for_sub_group │",
    "File ~/miniconda3/lib/python3.11/site-packages/deepspeed/runtime/zero/stage3.py:2090, in "
    "DeepSpeedZeroOptimizer_Stage3._prepare_fp32_grad_for_sub_group(self, sub_group_id)",
    "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/zero/stage3.py:2090: in _prepare_fp32_grad_for_sub_group",
)


@pytest.mark.parametrize("frame", FORMS, ids=("cpython", "windows", "rich", "ipython8", "pytest"))
def test_a_framework_frame_is_placed_in_every_traceback_form(tmp_path, frame):
    log = tmp_path / "run.log"
    log.write_text("\n".join(["Traceback (most recent call last):", frame, "    fp32_grad = grad.float()", MESSAGE, ""]),
                   encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.phase == "optimizer"
    assert ev.phase_evidence is not None and "_prepare_fp32_grad_for_sub_group" in ev.phase_evidence.text


# ComfyUI's frames as its source names them (comfy/sample.py sample -> comfy/samplers.py KSampler.sample; a node's
# weights moved on by comfy/model_management.py load_models_gpu -> LoadedModel.model_load -> comfy/model_patcher.py
# ModelPatcher.partially_load -> patch_weight_to_device -> cast_to_device; comfy/ops.py casts a weight kept off the
# device inside its forward through the same cast_to)
_COMFY = "/data/u/ComfyUI/comfy/"


def _comfy_log(tmp_path, frames):
    log = tmp_path / "comfy.log"
    lines = ["Traceback (most recent call last):", '  File "/data/u/ComfyUI/execution.py", line 327, in execute']
    for module, func in frames:
        lines += [f'  File "{_COMFY}{module}", line 100, in {func}', "    x = f(x)"]
    log.write_text("\n".join(lines + [MESSAGE, ""]), encoding="utf-8")
    return parse_log(str(log)).primary


def test_comfyui_moving_a_models_weights_is_load(tmp_path):
    # (under a sampler's own frame phase.py's order of the outer phases reads generation first)
    ev = _comfy_log(tmp_path, [("model_management.py", "load_models_gpu"),
                               ("model_management.py", "model_load"), ("model_patcher.py", "partially_load"),
                               ("model_patcher.py", "patch_weight_to_device"), ("model_management.py", "cast_to_device")])
    assert ev.phase == "load" and "patch_weight_to_device" in ev.phase_evidence.text


def test_comfyui_a_cast_inside_the_sampling_forward_is_not_load(tmp_path):
    ev = _comfy_log(tmp_path, [("samplers.py", "sample"), ("ops.py", "forward_comfy_cast_weights"),
                               ("ops.py", "cast_bias_weight"), ("model_management.py", "cast_to")])
    assert ev.phase == "generate" and "samplers.py" in ev.phase_evidence.text
    assert place("comfy/model_management.py", "cast_to") == (None, place("comfy/model_management.py", "cast_to")[1])


def test_text_generation_webuis_output_line_after_the_message_is_generation(tmp_path):
    # modules/text_generation.py logs it in generate_reply_HF's finally block, after the failed generate's exception
    log = tmp_path / "webui.log"
    log.write_text("\n".join([MESSAGE, "Output generated in 0.28 seconds (0.00 tokens/s, 0 tokens, context 500, seed 7)",
                              ""]), encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.phase == "generate" and ev.phase_evidence.text.startswith("Output generated in")


def _boxed(rows: list[str]) -> str:
    return "\n".join(f"│ {r:<76} │" for r in rows)


# rich's frame header wrapped at the box's width with its path rows cut, then a blank row and the numbered code
# (rich/traceback.py _render_stack, rich/syntax.py line_numbers); the code is diffusers'
# models/attention_processor.py Attention.get_attention_scores
_RICH_CUT = ["get_attention_scores", "",
             "   696 │   │   if self.upcast_softmax:",
             "   697 │   │   │   attention_scores = attention_scores.float()",
             "   698 │   │",
             "❱  699 │   │   attention_probs = attention_scores.softmax(dim=-1)",
             "   700 │   │   del attention_scores",
             "   701 │   │",
             "   702 │   │   attention_probs = attention_probs.to(dtype)"]


def test_a_rich_frame_whose_header_path_was_cut_places_its_arrowed_statement(tmp_path):
    log = tmp_path / "rich.log"
    log.write_text("\n".join([_boxed(_RICH_CUT), "╰" + "─" * 78 + "╯", MESSAGE, ""]), encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.phase == "forward"
    assert ev.phase_evidence.text.startswith("❱") and "softmax" in ev.phase_evidence.text


def test_rich_context_rows_around_the_arrow_ran_nothing(tmp_path):
    # only the arrowed row ran: a numbered context row that names a phase (a `save_pretrained` two rows below) is not it
    rows = _RICH_CUT[:-1] + ["   702 │   │   self.save_pretrained(out_dir)"]
    log = tmp_path / "rich.log"
    log.write_text("\n".join([_boxed(rows), "╰" + "─" * 78 + "╯", MESSAGE, ""]), encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.phase == "forward" and ev.phase_evidence.text.startswith("❱")


def _frames_log(tmp_path, frames: list[tuple[str, str, str]]) -> object:
    log = tmp_path / "frames.log"
    lines = ["Traceback (most recent call last):"]
    for path, func, stmt in frames:
        lines += [f'  File "{path}", line 10, in {func}', f"    {stmt}"]
    log.write_text("\n".join(lines + [MESSAGE, ""]), encoding="utf-8")
    return parse_log(str(log)).primary


_CALL = ("/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", "_call_impl", "return forward_call(*args)")


def test_a_loss_function_that_runs_the_model_fails_in_the_forward_pass(tmp_path):
    # score_sde's losses.py: step_fn -> loss_fn -> model_fn -> model(x): the frame nearest to the failure ran
    ev = _frames_log(tmp_path, [("/w/losses.py", "step_fn", "loss = loss_fn(model, batch)"),
                                ("/w/losses.py", "loss_fn", "score = model_fn(x, labels)"),
                                ("/w/models/utils.py", "model_fn", "return model(x, labels)"), _CALL])
    assert ev.phase == "forward"


def test_a_loss_computed_under_the_forward_call_is_the_loss(tmp_path):
    ev = _frames_log(tmp_path, [("/w/train.py", "train", "out = model(x)"),
                                ("/w/train.py", "criterion_step", "loss = criterion(out, y)")])
    assert ev.phase == "loss"


def test_forward_code_the_backward_pass_reruns_stays_backward(tmp_path):
    # activation checkpointing recomputes the forward inside the backward pass (torch/utils/checkpoint.py)
    ev = _frames_log(tmp_path, [("/w/train.py", "train", "loss.backward()"),
                                ("/venv/lib/python3.10/site-packages/torch/_tensor.py", "backward", "torch.autograd.backward(self)"),
                                ("/venv/lib/python3.10/site-packages/torch/utils/checkpoint.py", "recompute_fn", "fn(*args)"),
                                _CALL])
    assert ev.phase == "backward"


def test_a_forward_pass_under_a_caller_named_for_inference_or_testing_is_that_pass(tmp_path):
    gen = _frames_log(tmp_path, [("/w/user_generate.py", "main", "preds = model.inference(imgs)"),
                                 ("/w/models/model.py", "inference", "emb = self.Feat_Encoder(imgs)"), _CALL])
    assert gen.phase == "generate" and "inference" in gen.phase_evidence.text
    # an evaluation loop that generates is evaluation, as in frame_phase's order of the outer phases
    ev = _frames_log(tmp_path, [("/w/trainer.py", "run_test", "out = model.restoration(x)"),
                                ("/w/model.py", "decode_occ", "q = self.quantize(x)"), _CALL])
    assert ev.phase == "eval" and "run_test" in ev.phase_evidence.text


def test_a_module_called_generator_or_a_distribution_sampled_is_no_caller_name(tmp_path):
    # only a frame's own function names its pass: `self.generator(x)` is a GAN's layer, `.sample()` a distribution's
    ev = _frames_log(tmp_path, [("/w/train_second.py", "main", "y = model.decoder(en, s)"),
                                ("/w/hifigan.py", "forward", "x = self.generator(x, s)"),
                                ("/w/train.py", "encode", "z = vae.encode(x).latent_dist.sample()"), _CALL])
    assert ev.phase == "forward"


def test_lua_torchs_traceback_under_its_error_names_the_load_innermost_first(tmp_path):
    # torch7 File.lua: torch.load reads through File:readObject; luaL_traceback lists the innermost call first
    log = tmp_path / "lua.log"
    log.write_text("\n".join([
        "THCudaCheck FAIL file=/tmp/cutorch/lib/THC/generic/THCStorage.cu line=65 error=2 : out of memory",
        "/usr/local/bin/luajit: /usr/local/share/lua/5.1/torch/File.lua:351: cuda runtime error (2) : out of memory",
        "stack traceback:",
        "        [C]: in function 'read'",
        "        /usr/local/share/lua/5.1/torch/File.lua:351: in function 'readObject'",
        "        /usr/local/share/lua/5.1/nn/Module.lua:184: in function 'read'",
        "        test.lua:12: in main chunk", ""]), encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.kind == "cuda_oom" and ev.phase == "load" and "readObject" in ev.phase_evidence.text


def test_a_lua_forward_frame_under_the_error_is_the_failures_own(tmp_path):
    log = tmp_path / "lua.log"
    log.write_text("\n".join([
        "nn/THNN.lua:109: $ Torch: not enough memory: you tried to reallocate 11GB. Buy new RAM! at THGeneral.c:251",
        "stack traceback:",
        "        [C]: in function 'v'",
        "        /t/share/lua/5.1/nn/Sequential.lua:44: in function 'forward'",
        "        train.lua:208: in function 'opfunc'",
        "        /t/share/lua/5.1/optim/lbfgs.lua:66: in function 'lbfgs'", ""]), encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.kind == "host_oom" and ev.phase == "forward" and "Sequential.lua" in ev.phase_evidence.text
