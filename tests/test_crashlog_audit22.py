"""The phase rules audit 22 added (tests/data/logs/audit22/SOURCES.md), each on a log written here: the cue the rule
reads gives its phase, and the same log without that cue does not."""
from __future__ import annotations

import pytest

from oomdoctor.crashlog import parse_log

MSG = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
       "23.65 GiB of which 3.31 MiB is free.")


def _phase(tmp_path, lines: list[str]) -> str | None:
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.kind == "cuda_oom"
    return ev.phase


def _tb(*frames: tuple[str, str, str]) -> list[str]:
    out = ["Traceback (most recent call last):"]
    for path, func, stmt in frames:
        out += [f'  File "{path}", line 12, in {func}', f"    {stmt}"]
    return out


def test_a_transcription_reported_in_the_error_line_is_generation(tmp_path):
    said = f"2026-03-08 20:13:36 ERROR: Encountered an error while transcribing: {MSG}"
    assert _phase(tmp_path, ["Model loaded.", said]) == "generate"
    assert _phase(tmp_path, ["Model loaded.", f"2026-03-08 20:13:36 ERROR: {MSG}"]) != "generate"


def test_a_frame_named_for_transcription_is_generation_but_a_script_named_so_is_not(tmp_path):
    named = _tb(("/app/service.py", "main", "handle(job)"), ("/app/service.py", "transcribe_file", "segments = run(audio)"))
    assert _phase(tmp_path, [*named, MSG]) == "generate"
    script = _tb(("/app/transcribe.py", "main", "handle(job)"), ("/app/transcribe.py", "run", "out = go(audio)"))
    assert _phase(tmp_path, [*script, MSG]) is None


def test_the_web_uis_job_report_after_the_message_encloses_the_forward_frames_above_it(tmp_path):
    frames = _tb(("/sd/repositories/ldm/modules/attention.py", "forward", "return x * F.gelu(gate)"))
    report = ["", "---", "*** Error completing request", "*** Arguments: ('task(jgo1kuv5xm4kht4)', 'a cat', '', [], 20)"]
    assert _phase(tmp_path, [*frames, MSG, *report]) == "generate"
    assert _phase(tmp_path, [*frames, MSG]) == "forward"


@pytest.mark.parametrize("ready", ["Running on local URL:  http://127.0.0.1:7860",
                                   'time=2024-02-23T10:01:27 level=INFO msg="Starting llama main loop"',
                                   '[GIN] 2024/02/23 - 10:01:27 | 200 |    4.05s |   127.0.0.1 | POST     "/api/chat"'])
def test_a_servers_ready_or_request_line_before_the_failure_is_serving(tmp_path, ready):
    start = ["llm_load_tensors: offloaded 6/33 layers to GPU", "Loading model from /models/m.ckpt"]
    assert _phase(tmp_path, [*start, ready, MSG]) == "generate"
    assert _phase(tmp_path, [*start, MSG]) == "load"


def test_mmcvs_progress_bar_after_the_epochs_log_is_the_evaluation_hook(tmp_path):
    epoch = "2023-02-12 11:51:16,618 - mmdet - INFO - Epoch [2][250/267]\tlr: 7.813e-06, loss: 1.7086"
    bar = "[>>>>>>>>>>>>>                    ] 6/15, 0.6 task/s, elapsed: 10s, ETA:    15s"
    assert _phase(tmp_path, [epoch, bar, MSG]) == "eval"
    assert _phase(tmp_path, [epoch, MSG]) == "train"


def test_invokeais_could_not_generate_after_the_message_is_generation(tmp_path):
    before = [">> Model loaded in 14.76s", ">> Setting Sampler to k_heun"]
    assert _phase(tmp_path, [*before, MSG, "", ">> Could not generate image.", ">> Usage stats:"]) == "generate"
    assert _phase(tmp_path, [*before, MSG, "", ">> Usage stats:"]) is None


@pytest.mark.parametrize("node,want", [("FluxTrainLoop", "forward"), ("ModelMergeSimple", None),
                                       ("CheckpointLoaderSimple", "load")])
def test_comfyuis_node_type_names_a_training_loop_but_not_a_model_node(tmp_path, node, want):
    report = ["# ComfyUI Error Report", "## Error Details", f"- **Node Type:** {node}",
              "- **Exception Type:** torch.OutOfMemoryError", f"- **Exception Message:** {MSG}"]
    assert _phase(tmp_path, report) == want


def test_a_loaders_private_load_model_frame_is_loading(tmp_path):
    frames = _tb(("/venv/lib/site-packages/ldm/invoke/model_cache.py", "get_model", "m = self._load_model(name)"),
                 ("/venv/lib/site-packages/ldm/invoke/model_cache.py", "_load_model",
                  "model = instantiate_from_config(omega_config.model)"))
    assert _phase(tmp_path, [*frames, MSG]) == "load"


def test_a_traceback_far_under_a_title_is_read_by_its_frame_words(tmp_path):
    form = [f"### field {i}" if i % 2 else f"answer {i}" for i in range(30)]
    frames = _tb(("inference_main.py", "main", "out_audio = svc_model.infer(spk, tran, raw_path)"),
                 ("/svc/inference/infer_tool.py", "infer", "audio = self.net_g_ms.infer(c, f0=f0)"))
    title = "# [Help]: CUDA out of memory during the run"
    assert _phase(tmp_path, [title, "", *form, "```python", *frames, "```"]) == "generate"
    plain = _tb(("inference_main.py", "main", "out = run_all(spk)"), ("/svc/tool.py", "run_all", "return go(spk)"))
    assert _phase(tmp_path, [title, "", *form, "```python", *plain, "```"]) is None


def test_a_bare_wrap_frame_names_no_loading(tmp_path):
    # torch/multiprocessing/spawn.py's `_wrap` runs a spawned process's whole function: no phase of its own
    form = [f"answer {i}" for i in range(30)]
    spawn = _tb(("/usr/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", "_wrap", "fn(i, *args)"),
                ("/srv/job/train_net.py", "main", "return go(cfg)"))
    title = "# CUDA out of memory in the second run"
    assert _phase(tmp_path, [title, "", *form, *spawn]) is None
    wrapped = _tb(("/srv/job/train_net.py", "main", "return go(cfg)"), ("/srv/job/setup.py", "wrap_model", "m = FSDP(m)"))
    assert _phase(tmp_path, [title, "", *form, *wrapped]) == "load"
