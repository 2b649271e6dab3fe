"""The rules audit 24 added (tests/data/logs/audit24/SOURCES.md, docs/crashlogs.md "Audit 24"), each on a log written
here: the form the rule reads gives its kind, request or phase, and the same log without it does not."""
from __future__ import annotations

from oomdoctor.crashlog import parse_log

GIB = float(1 << 30)
MSG = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
       "23.65 GiB of which 3.31 MiB is free.")


def _event(tmp_path, lines: list[str]):
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return parse_log(str(log)).primary


def _ort(op: str, level: str = "E") -> str:
    return (f"2024-05-01 10:00:00.1 [{level}:onnxruntime:, sequential_executor.cc:494 ExecuteKernel] Non-zero status code "
            f"returned while running {op} node. Name:'{op}_7' Status Message: bfc_arena.cc:368 "
            "onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 33554432")


def test_onnx_runtime_error_line_is_a_failure_with_its_request_and_the_node_that_ran(tmp_path):
    ev = _event(tmp_path, [_ort("Conv")])
    assert ev is not None and ev.kind == "cuda_oom"
    assert ev.tried_gib is not None and round(ev.tried_gib * GIB) == 33554432
    assert ev.phase == "forward" and ev.phase_evidence is not None
    # ORT training's gradient graph names its ops <Op>Grad: the backward pass
    assert _event(tmp_path, [_ort("SoftmaxCrossEntropyLossGrad")]).phase == "backward"
    # a warning-level line of the sink is no failure
    assert _event(tmp_path, [_ort("Conv", level="W")]) is None


def test_a_bare_size_after_an_allocators_size_word_is_bytes(tmp_path):
    title = ("# [Bug] RuntimeError: Failed to allocate memory for batch_prefill_tmp_v with size 435814400 and "
             "alignment 16 in AlignedAllocator")
    ev = _event(tmp_path, [title])
    assert ev is not None and ev.tried_gib is not None and round(ev.tried_gib * GIB) == 435814400
    # a size with its unit is read by the unit, as before
    ev = _event(tmp_path, ["RuntimeError: Failed to allocate memory of size 2 GiB on the device"])
    assert ev is not None and ev.tried_gib == 2.0


def test_a_progress_bar_after_the_message_with_a_loss_in_its_postfix_is_training(tmp_path):
    bar = "Progress:|                         |:   0% 1/4700 [00:10<13:18:38, 10.20s/it, loss=0.0911, lr=2e-6]"
    assert _event(tmp_path, [MSG, bar]).phase == "train"
    plain = "Progress:|                         |:   0% 1/4700 [00:10<13:18:38, 10.20s/it, lr=2e-6]"
    assert _event(tmp_path, [MSG, plain]).phase is None
    done = "Progress:|█████████████████████████|: 100% 4700/4700 [10:10<00:00, 10.20s/it, loss=0.0911]"
    assert _event(tmp_path, [MSG, done]).phase is None      # a finished bar is no loop the failure left


def test_algoperf_eval_warning_names_evaluation(tmp_path):
    line = ("W1019 19:13:49.873734 140551252768576 submission_runner.py:350] error: GPU out of memory during eval "
            "during step 1, error : CUDA out of memory. Tried to allocate 6.05 GiB (GPU 7; 15.78 GiB total capacity; "
            "1.54 GiB already allocated; 6.05 GiB free; 8.28 GiB reserved in total by PyTorch)")
    assert _event(tmp_path, [line]).phase == "eval"
    assert _event(tmp_path, [line.replace("during eval during", "during")]).phase != "eval"


RAY_KILL = ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
            "Memory on the node (IP: 10.0.0.1, ID: abc) where the task (actor ID: 9e43, name=WorkerDict.__init__, "
            "pid=4100606, memory used=56.57GB) was running was 246.41GB / 251.54GB (0.979583), which exceeds the memory "
            "usage threshold of 0.95. Ray killed this worker (ID: c9e1) because it was the most recently scheduled task. "
            "Top 10 memory users:")


def test_rays_top_memory_users_name_the_running_method_by_its_process_title(tmp_path):
    top = ["PID\tMEM(GB)\tCOMMAND", "4100606\t56.57\tray::WorkerDict.actor_rollout_generate_sequences",
           "4100605\t56.36\tray::WorkerDict.actor_rollout_generate_sequences"]
    ev = _event(tmp_path, [*RAY_KILL.split("\n"), *top])
    assert ev is not None and ev.kind == "host_oom" and ev.phase == "generate"
    idle = ["PID\tMEM(GB)\tCOMMAND", "4100606\t56.57\tray::IDLE"]
    assert _event(tmp_path, [*RAY_KILL.split("\n"), *idle]).phase is None


def test_verls_before_init_cache_line_is_the_rollout_engines_start_up(tmp_path):
    kill = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. There are "
            "some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage.")
    cache = "(WorkerDict pid=3566775) before init cache memory allocated: 5.96926464GB, reserved: 6.079643648GB"
    assert _event(tmp_path, [cache, kill]).phase == "load"
    assert _event(tmp_path, ["(WorkerDict pid=3566775) local rank 0", kill]).phase != "load"
