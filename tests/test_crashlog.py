"""Crash-log stage: one fixture per message format, prefix style and edge case of oom-log-formats.md."""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from oomdoctor.crashlog import parse_log
from oomdoctor.errors import InputError

LOGS = Path(__file__).parent / "data" / "logs"
DEMO = Path(__file__).parent.parent / "oomdoctor" / "data" / "demo" / "train.log"


def parse(name: str):
    return parse_log(str(LOGS / name))


def only(name: str):
    report = parse(name)
    assert len(report.events) == 1, report.events
    return report, report.events[0]


# (fixture, kind, phase, {field: expected GiB or int}); numbers are what the message prints, converted to GiB
FORMATS = [
    ("f01_torch25_backward.log", "cuda_oom", "backward",
     dict(tried_gib=1.96, capacity_gib=23.64, free_gib=1.02, allocated_gib=18.20, reserved_unallocated_gib=2.44,
          process_gib=21.10, other_processes_gib=1.50, device=0, line=29)),
    ("f01_torch21_capacty.log", "cuda_oom", "forward",
     dict(tried_gib=172 / 1024, capacity_gib=23.69, free_gib=95.06 / 1024, allocated_gib=22.97,
          reserved_unallocated_gib=313.41 / 1024, process_gib=23.58, other_processes_gib=0.0)),
    ("f01_empty_device_underflow.log", "cuda_oom", "forward",
     dict(tried_gib=64.0, capacity_gib=14.75, device=None, process_gib=None, allocated_gib=1.23)),
    ("f01_hip_allowed_private_pools.log", "hip_oom", "forward",
     dict(tried_gib=1.95, capacity_gib=191.98, free_gib=1.45, allocated_gib=150.20, reserved_unallocated_gib=3.40)),
    ("f01_five_other_processes.log", "cuda_oom", "forward",
     dict(tried_gib=500 / 1024, capacity_gib=79.14, process_gib=46.90, other_processes_gib=32.0)),
    ("f01t_wrapped_rank_prefix.log", "cuda_oom", "backward",
     dict(tried_gib=0.4375, capacity_gib=39.38, free_gib=356.88 / 1024, process_gib=39.02, allocated_gib=36.51,
          reserved_unallocated_gib=1.99, device=3, rank=3)),
    ("f02_legacy_runtimeerror.log", "cuda_oom", "backward",
     dict(tried_gib=20 / 1024, capacity_gib=15.78, allocated_gib=14.50, free_gib=3.12 / 1024, reserved_gib=14.60,
          reserved_unallocated_gib=0.10, device=0)),
    ("f02_cached_very_old.log", "cuda_oom", "forward",
     dict(tried_gib=24 / 1024, capacity_gib=11.17, allocated_gib=10.42, reserved_unallocated_gib=250 / 1024,
          reserved_gib=10.42 + 250 / 1024, device=1)),
    ("f02_npu_current_active.log", "npu_oom", "forward",
     dict(tried_gib=2.0, capacity_gib=60.97, allocated_gib=56.12, free_gib=1.37, reserved_gib=58.39)),
    ("f02t_legacy_cut.log", "cuda_oom", "backward", dict(tried_gib=0.125, device=2, capacity_gib=None)),
    ("f03_bare_bnb_save.log", "bnb_alloc", "save", dict(tried_gib=None)),
    ("f04_cuda_error_load.log", "cuda_oom", "load", dict(line=9)),
    # MPS: "other allocations" are the same process's; "max allowed" is the watermark limit, not the card
    ("f05_mps.log", "mps_oom", "forward", dict(tried_gib=64 / 1024, allocated_gib=18.13, capacity_gib=None,
                                               other_processes_gib=None)),
    ("f06_cublas_alloc.log", "cublas_alloc", "backward", {}),
    ("f07_cudnn_alloc.log", "cudnn_alloc", "forward", {}),
    ("f09_cpu_allocator.log", "host_oom", "load", dict(tried_gib=26214400000 / 2**30)),
    ("f10_habana.log", "hpu_oom", "forward", dict(tried_gib=1.0)),
    ("f11_torchrun_sigkill.log", "host_oom", "train", {}),
    ("f12_deepspeed_sigkill.log", "host_oom", "zero_init", {}),
    ("f13_shell_killed.log", "host_oom", "train", dict(line=2)),
    ("f14_dmesg.log", "host_oom", None, dict(process_gib=98765432 / 2**20)),
    ("f15_docker_137.log", "host_oom", "train", {}),
    ("f16_ray_host.log", "host_oom", None, {}),
    ("f16_ray_gpu.log", "cuda_oom", None, {}),
    ("f17_xla_bytes.log", "xla_oom", None, dict(tried_gib=4.0)),
    ("f17b_tpu_hbm.log", "xla_oom", None, dict(capacity_gib=15.48)),
    ("f18_jax_bfc.log", "xla_oom", None, dict(tried_gib=8.0)),
    ("f19_tf.log", "tf_oom", "backward", {}),       # the node sits under gradients/: TF1's backward ops
    ("f20_vllm_cache.log", "vllm_cache", "load", dict(line=9)),
    ("f21_vllm_free_memory.log", "vllm_cache", "load", dict(capacity_gib=79.19, free_gib=14.2, tried_gib=71.27)),
    ("f22_no_executable_batch.log", "batch_size_exhausted", "forward", {}),
    ("f24_deepspeed_zero_init.log", "cuda_oom", "zero_init", dict(tried_gib=12.55, capacity_gib=39.38)),
    ("f25_fsdp_clone_save.log", "cuda_oom", "save", dict(tried_gib=32 / 1024, capacity_gib=79.15, device=2, rank=2)),
    ("f26_mlx_metal.log", "mlx_oom", None, {}),
    ("f28_ipython_class_only.log", "cuda_oom", "optimizer", dict(line=2)),
    ("p02_srun_label.log", "cuda_oom", "forward", dict(tried_gib=3.91, capacity_gib=79.11, rank=0)),
    ("p03_pdsh_host.log", "cuda_oom", "backward", dict(tried_gib=2.5, device=5)),
    ("p04_ray_actor.log", "cuda_oom", None, dict(tried_gib=1.0, capacity_gib=44.35, free_gib=612 / 1024)),
    ("p06_docker_compose.log", "cuda_oom", "backward", dict(tried_gib=0.25, capacity_gib=23.68)),
    ("p07_loguru.log", "cuda_oom", None, dict(tried_gib=2.0, capacity_gib=47.5, device=1)),
    ("p08_rich_box.log", "cuda_oom", "backward",
     dict(tried_gib=1.25, capacity_gib=23.65, free_gib=410.81 / 1024, process_gib=23.24, allocated_gib=21.81,
          reserved_unallocated_gib=1.01)),
    ("e_crlf.log", "cuda_oom", "forward", dict(tried_gib=0.5, capacity_gib=15.77, line=18)),
    ("e_ansi.log", "cuda_oom", None, dict(tried_gib=2.0, capacity_gib=23.64, allocated_gib=20.0)),
    ("e_double_spaced.log", "cuda_oom", None, dict(free_gib=1.5, allocated_gib=20.0, reserved_unallocated_gib=1.7)),
    ("e_latin1_truncated.log", "cuda_oom", "forward", dict(tried_gib=1.5, capacity_gib=23.64, free_gib=1.12, allocated_gib=None)),
    ("e_eval_phase.log", "cuda_oom", "eval", dict(tried_gib=7.81)),
    ("e_loss_phase_after_steps.log", "cuda_oom", "loss", dict(tried_gib=4.64)),
]


@pytest.mark.parametrize("name,kind,phase,numbers", FORMATS, ids=[f[0] for f in FORMATS])
def test_each_format_parses_to_its_kind_numbers_and_phase(name, kind, phase, numbers):
    _, ev = only(name)
    assert ev.kind == kind
    assert ev.phase == phase
    for key, want in numbers.items():
        got = getattr(ev, key)
        if want is None or isinstance(want, int) and not isinstance(want, bool) and key in ("device", "rank", "line"):
            assert got == want, key
        else:
            assert got == pytest.approx(want, rel=1e-3, abs=1e-4), key


@pytest.mark.parametrize("name", ["f07_cudnn_internal_lookalike.log", "f26b_metal_internal_lookalike.log",
                                  "f27_triton_lookalike.log", "f11_sighup_not_oom.log", "e_no_oom.log"])
def test_lookalikes_and_clean_logs_have_no_events(name):
    assert parse(name).events == ()


def test_host_kills_are_never_called_gpu_oom():
    for name in ("f09_cpu_allocator.log", "f11_torchrun_sigkill.log", "f12_deepspeed_sigkill.log", "f13_shell_killed.log",
                 "f14_dmesg.log", "f15_docker_137.log", "f16_ray_host.log"):
        report = parse(name)
        assert {e.kind for e in report.events} == {"host_oom"}, name
        assert "host_ram" in report.diagnoses


def test_torchrun_kill_names_the_failed_local_rank():
    report = parse("f11_torchrun_sigkill.log")
    assert report.failed_ranks == (1,)
    assert report.step == 5 and report.total_steps == 500


def test_interleaved_ranks_give_one_event_per_rank_with_its_device():
    report = parse("p01_interleaved_ranks.log")
    assert [(e.rank, e.device) for e in report.events] == [(1, 1), (0, 0)]
    assert all(e.phase == "backward" for e in report.events)
    assert report.failed_ranks == (0, 1)
    assert report.world_size == 2
    assert report.events[0].free_gib == pytest.approx(500 / 1024)


def test_ranks_seen_only_on_progress_lines_count_towards_the_world_size(tmp_path):
    p = tmp_path / "run.log"
    lines = [f"[rank{r}]: {{'loss': 1.2, 'grad_norm': 0.4, 'epoch': 0.1}}" for r in range(8)]
    lines += [f"[rank{r}]:  12%|█▏        | 60/500 [01:00<07:20,  1.00s/it]" for r in range(8)]
    p.write_text("\n".join(lines) + "\n" + (LOGS / "f01_torch25_backward.log").read_text())
    report = parse_log(str(p))
    assert report.world_size == 8 and [e.kind for e in report.events] == ["cuda_oom"]


def test_the_command_a_deepspeed_launcher_prints_as_a_list_gives_the_training_arguments(tmp_path):
    p = tmp_path / "ds.log"
    p.write_text(
        "[2024-05-02 10:00:01,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 4242\n"
        "[2024-05-02 10:00:01,020] [ERROR] [launch.py:321:sigkill_handler] ['/opt/venv/bin/python', '-u', "
        "'src/train.py', '--local_rank=0', '--stage', 'sft', '--deepspeed', 'ds_z3.json', '--model_name_or_path', "
        "'Qwen/Qwen2.5-7B', '--finetuning_type', 'full', '--per_device_train_batch_size', '2', '--cutoff_len', "
        "'4096', '--bf16'] exits with return code = -9\n")
    r = parse_log(str(p))
    assert [e.kind for e in r.events] == ["host_oom"]
    args = r.train_args
    assert (args["model_name_or_path"], args["per_device_train_batch_size"], args["cutoff_len"], args["deepspeed"],
            args["bf16"]) == ("Qwen/Qwen2.5-7B", "2", "4096", "ds_z3.json", "True")


def test_deepspeeds_cpu_memory_reading_gives_the_hosts_ram():
    r = parse("f12_deepspeed_sigkill.log")        # "CPU Virtual Memory:  used = 250.12 GB, percent = 99.4%"
    assert r.host_ram_gib == pytest.approx(250.12 / 0.994, abs=0.1) and r.host_ram_used_pct == 99.4
    assert parse("f01_torch25_backward.log").host_ram_gib is None


def test_repeated_message_of_the_same_rank_is_reported_once():
    report = parse("p01_interleaved_ranks.log")
    assert sum(1 for e in report.events if e.rank == 0) == 1


def test_nccl_allocation_failure_is_nccl_oom_with_bytes():
    report = parse("f08_nccl.log")
    assert report.events and all(e.kind == "nccl_oom" for e in report.events)
    assert report.events[0].tried_gib == pytest.approx(6291456 / 2**30)


def test_two_ranks_glued_on_one_line_still_give_a_gpu_oom():
    report = parse("e_glued_ranks.log")
    assert report.events[0].kind == "cuda_oom"
    assert report.events[0].capacity_gib == pytest.approx(31.75)


def test_fragmentation_other_process_eval_save_and_long_run_diagnoses():
    assert {"fragmentation", "other_process"} <= set(parse("f01_torch25_backward.log").diagnoses)
    assert "fragmentation" not in parse("f01_torch21_capacty.log").diagnoses   # 0.31 of 23.3 GiB reserved
    assert "eval" in parse("e_eval_phase.log").diagnoses
    assert "save" in parse("f25_fsdp_clone_save.log").diagnoses
    long_run = parse("e_loss_phase_after_steps.log")
    assert long_run.step == 239 and long_run.total_steps == 1000
    assert "long_samples" in long_run.diagnoses
    assert "long_samples" not in parse("f01_torch25_backward.log").diagnoses    # died at step 5


def test_request_larger_than_the_gpu_is_flagged_and_bogus_self_usage_dropped():
    report, ev = only("f01_empty_device_underflow.log")
    assert "request_exceeds_gpu" in report.diagnoses
    assert ev.process_gib is None


def test_context_banner_versions_gpu_world_params_and_args():
    r = parse("e_context_banner.log")
    assert r.versions["llamafactory"] == "0.9.2"
    assert r.versions["torch"] == "2.5.1+cu124"
    assert r.versions["transformers"] == "4.48.2"
    assert r.versions["deepspeed"] == "0.16.3"
    assert r.gpu_name == "NVIDIA H100 80GB HBM3"
    assert r.world_size == 8
    assert (r.params_trainable, r.params_total) == (20185088, 7635801600)
    assert r.train_args["per_device_train_batch_size"] == "4"
    assert r.train_args["cutoff_len"] == "4096"
    assert r.train_args["gradient_checkpointing"] == "True"
    assert r.train_args["learning_rate"] == "0.0001"
    assert r.seq_len_failing == 4096


def test_deepspeed_see_memory_usage_becomes_a_memory_sample():
    r = parse("f24_deepspeed_zero_init.log")
    assert len(r.memory_samples) == 1
    s = r.memory_samples[0]
    assert (s.allocated_gib, s.max_allocated_gib, s.reserved_gib, s.max_reserved_gib) == (30.5, 31.25, 33.0, 33.0)
    assert "ZeRO" in s.label and s.line == 2


def test_demo_log_is_a_first_step_optimizer_oom_on_an_a100():
    r = parse_log(str(DEMO))
    ev = r.primary
    assert (ev.kind, ev.phase, ev.tried_gib, ev.capacity_gib, ev.free_gib) == ("cuda_oom", "optimizer", 2.0, 79.15, 1.2)
    assert (ev.process_gib, ev.allocated_gib, ev.reserved_unallocated_gib) == (77.93, 75.80, 1.62)
    assert r.gpu_name == "NVIDIA A100-SXM4-80GB"
    assert r.versions["llamafactory"] == "0.9.1" and r.versions["transformers"] == "4.46.1"
    assert r.train_args["per_device_train_batch_size"] == "4"
    assert r.params_trainable == r.params_total == 6738415616
    assert r.step == 0 and r.total_steps == 93
    assert r.world_size == 1
    assert r.diagnoses == ()


# ------------------------------------------------------------------ input handling

def test_missing_file_is_an_input_error_naming_it(tmp_path):
    with pytest.raises(InputError) as err:
        parse_log(str(tmp_path / "nope.log"))
    assert "nope.log" in str(err.value) and "\n" not in str(err.value)


def test_empty_file_is_an_input_error(tmp_path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        parse_log(str(p))
    p.write_bytes(b"\n\n  \n")
    with pytest.raises(InputError, match="empty"):
        parse_log(str(p))


def test_binary_file_is_an_input_error(tmp_path):
    p = tmp_path / "model.bin"
    p.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(InputError, match="binary"):
        parse_log(str(p))
    p.write_bytes(b"PK\x03\x04" + b"x" * 100)
    with pytest.raises(InputError, match="binary"):
        parse_log(str(p))


def test_gzip_log_reads_like_the_plain_one(tmp_path):
    p = tmp_path / "run.log.gz"
    p.write_bytes(gzip.compress((LOGS / "f01_torch25_backward.log").read_bytes()))
    plain, gz = parse("f01_torch25_backward.log"), parse_log(str(p))
    assert gz.events == plain.events


def test_stdin_is_read_when_path_is_dash():
    code = ("import sys; from oomdoctor.crashlog import parse_log; r = parse_log('-'); "
            "e = r.events[0]; print(r.file, e.kind, e.tried_gib, e.line)")
    out = subprocess.run([sys.executable, "-c", code], input=(LOGS / "f02_legacy_runtimeerror.log").read_bytes(),
                         capture_output=True, check=True, cwd=Path(__file__).parent.parent).stdout.decode()
    assert out.split() == ["<stdin>", "cuda_oom", str(20 / 1024), "18"]


def test_oom_deep_in_a_big_log_gets_the_right_line(tmp_path):
    p = tmp_path / "big.log"
    noise = b"".join(b"[rank%d]: {'loss': 1.0, 'epoch': 0.%d}\n" % (i % 8, i % 10) for i in range(1000))
    with open(p, "wb") as fh:
        for _ in range(300):
            fh.write(noise)
        fh.write((LOGS / "f02_legacy_runtimeerror.log").read_bytes())
        fh.write(noise)
    r = parse_log(str(p))
    assert [e.line for e in r.events] == [300_000 + 18]
    assert r.lines_total == 301_018


@pytest.mark.parametrize("line,name,card", [
    ("GPU type: NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", "RTX 4090"),
    ("GPU type: NVIDIA GeForce RTX 4090 D", "NVIDIA GeForce RTX 4090 D", "RTX 4090D"),
    ("GPU type: NVIDIA GeForce RTX 3090 Ti", "NVIDIA GeForce RTX 3090 Ti", "RTX 3090"),   # same 24 GB; no Ti row
])
def test_a_geforce_name_keeps_its_number_and_suffix(tmp_path, line, name, card):
    from oomdoctor.gpus import lookup_gpu

    log = tmp_path / "run.log"
    log.write_text(line + "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n")
    r = parse_log(str(log))
    assert r.gpu_name == name
    assert lookup_gpu(r.gpu_name).name == card


def test_a_size_no_machine_has_is_not_taken_as_a_reading(tmp_path):
    log = tmp_path / "run.log"
    huge = "9" * 400
    log.write_text(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {huge} GiB. GPU 0 has a total "
                   f"capacity of {huge} GiB of which 1.50 GiB is free. Of the allocated memory 20.00 GiB is "
                   "allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n")
    ev = parse_log(str(log)).primary
    assert ev.kind == "cuda_oom"
    assert ev.tried_gib is None and ev.capacity_gib is None
    assert (ev.free_gib, ev.allocated_gib) == (1.5, 20.0)


@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62",   # vLLM wake_up
    'the "RuntimeError: CUDA error:out of memory" showed up',                              # typed without the space
    'the "RuntimeError: CUDA error(2): out of memory" showed up',                          # with the runtime's code
    "RuntimeError: HIP error: out of memory",
])
def test_a_cuda_runtime_error_out_of_memory_in_its_spellings_is_a_gpu_oom(tmp_path, line):
    log = tmp_path / "run.log"
    log.write_text(line + "\n")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.kind == ("hip_oom" if "HIP" in line else "cuda_oom")


def test_a_cuda_error_that_is_not_memory_stays_clean(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("RuntimeError: CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:57\n")
    assert parse_log(str(log)).events == ()


@pytest.mark.parametrize("path,kind", [("/opt/bitsandbytes/csrc/pythonInterface.c", "bnb_alloc"),
                                       ("/src/kernels/ops.cu", "cuda_oom")])
def test_a_cuda_check_return_line_is_an_allocation_failure_of_the_library_it_names(tmp_path, path, kind):
    log = tmp_path / "run.log"
    log.write_text(f"Error out of memory at line 380 in file {path}\n")
    assert parse_log(str(log)).primary.kind == kind


@pytest.mark.parametrize("line,kind,device", [
    ("Tried to allocate 20.00 MiB (NPU 3; 60.97 GiB total capacity; 58.10 GiB already allocated; 0 bytes free; "
     "59.20 GiB reserved in total by PyTorch)", "npu_oom", 3),
    ("[rank1]: Tried to allocate 1.00 GiB. GPU 1 has a total capacity of 23.53 GiB of which 512.00 MiB is free.",
     "cuda_oom", 1),
])
def test_a_torch_oom_pasted_without_its_first_words_is_read_from_its_statistics(tmp_path, line, kind, device):
    log = tmp_path / "run.log"
    log.write_text(line + "\n")
    ev = parse_log(str(log)).primary
    assert ev is not None and (ev.kind, ev.device) == (kind, device) and ev.capacity_gib > 20


@pytest.mark.parametrize("line", [
    "we tried to allocate a bigger buffer and it worked",
    "Tried to allocate 4 workers for the data loader",
    "NOTE: total capacity; see the cluster docs",
])
def test_prose_about_allocating_is_not_a_headless_oom(tmp_path, line):
    log = tmp_path / "run.log"
    log.write_text(line + "\n")
    assert parse_log(str(log)).events == ()


_FAR_MESSAGE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
                "23.64 GiB of which 3.06 MiB is free.\n")
_FAR_PROSE = "".join(f"step {n} of my script, nothing printed here\n" for n in range(20))


def test_a_traceback_pasted_far_from_its_message_still_gives_the_phase(tmp_path):
    # the frames stand twenty lines under the message (past the lines read right after it), cut before their own
    # message: the excerpt's only traceback is read, nearest run first, and its evidence is the frame
    log = tmp_path / "far.log"
    log.write_text(_FAR_MESSAGE + _FAR_PROSE + "Traceback (most recent call last):\n"
                   '  File "/usr/lib/python3/dist-packages/accelerate/accelerator.py", line 1432, in prepare_model\n'
                   "    model = model.to(self.device)\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.kind == "cuda_oom"
    assert ev.phase == "load" and ev.phase_evidence is not None and ev.phase_evidence.line == 24    # `.to(` under it


def test_a_far_traceback_of_only_a_forward_pass_after_the_message_names_no_phase(tmp_path):
    # forward's frames printed after a message may be another report's (as for the lines right after it)
    log = tmp_path / "far_forward.log"
    log.write_text(_FAR_MESSAGE + _FAR_PROSE + "Traceback (most recent call last):\n"
                   '  File "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", line 125, in forward\n'
                   "    return F.linear(input, self.weight, self.bias)\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.kind == "cuda_oom" and ev.phase is None


def test_a_title_saying_when_the_failure_came_places_it_when_the_log_names_nothing(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("# CUDA out of memory when saving the merged model\n\nIt trained fine for three epochs.\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.kind == "cuda_oom" and ev.phase == "save"
    assert ev.phase_evidence.source == "prose" and ev.phase_evidence.line == 1


def test_the_reporters_words_never_override_a_frame(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("# Out of memory error during evaluation\n\nTraceback (most recent call last):\n"
                   '  File "/opt/venv/lib/python3.11/site-packages/torch/optim/adamw.py", line 10, in step\n'
                   "    exp_avg_sq.mul_(beta2)\n"
                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.phase == "optimizer" and ev.phase_evidence.source == "frame"


@pytest.mark.parametrize("sentence, phase", [
    ("It fails while loading checkpoint shards with CUDA out of memory", "load"),
    ("I get CUDA out of memory during the evaluation of the first epoch", "eval"),
    ("RuntimeError: CUDA out of memory at the start of validation for my model", "eval"),
    ("The run gets a CUDA out of memory error when generating long answers with beam search", "generate"),
    ("CUDA out of memory after evaluation finished and the next epoch began", None),
    ("CUDA out of memory while training the model with a batch size of eight", None),
    ("CUDA out of memory when testing the tutorial on my laptop with a small GPU", None),
])
def test_the_prose_grammar_reads_when_while_during_and_not_after(sentence, phase):
    from oomdoctor.crashlog.phase import prose_phase
    assert prose_phase(sentence) == phase


@pytest.mark.parametrize("text, kind", [
    ('{"error":"model requires more system memory (44.0 GiB) than is available (7.6 GiB)"}\n', "host_oom"),
    ("# Killed!!\n\nThe process died after the first epoch.\n", "host_oom"),
    ("# Allocation on device error\n\nIt happens in the VAE encode node.\n", "cuda_oom"),
])
def test_a_tools_words_retyped_or_refused_before_allocating_are_read(tmp_path, text, kind):
    log = tmp_path / "x.log"
    log.write_text(text, encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.kind == kind


def test_a_question_quoting_allocation_on_device_stays_a_question(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("# VAEDecode Allocation on device - error - can someone help ?\n", encoding="utf-8")
    assert parse_log(str(log)).primary is None


@pytest.mark.parametrize("node, phase", [("DiffusersGenerator", "generate"), ("CheckpointLoaderSimple", "load"),
                                         ("SaveImage", "save"), ("CLIPTextEncode", None)])
def test_comfyuis_failed_node_is_read_by_the_words_of_its_class(tmp_path, node, phase):
    log = tmp_path / "x.log"
    log.write_text(f"Error occurred when executing {node}:\n\nAllocation on device 0 would exceed allowed memory. "
                   "(out of memory)\nCurrently allocated : 6.86 GiB\nRequested : 512.00 MiB\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.kind == "cuda_oom" and ev.phase == phase


def test_a_batch_fetched_or_the_training_data_built_is_data_loading(tmp_path):
    log = tmp_path / "x.log"
    log.write_text('Traceback (most recent call last):\n  File "train.py", line 79, in train_process\n'
                   "    batch_x, batch_y = get_next_batch(64, False)\n"
                   '  File "train.py", line 115, in get_next_batch\n    batch_x = np.zeros([batch_size, 4096])\n'
                   "MemoryError\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.kind == "host_oom" and ev.phase == "data" and "get_next_batch" in ev.phase_evidence.text


def test_tgis_weight_download_before_the_shards_start_is_loading(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("# OutOfMemoryError for a 70b model\n\n```\n"
                   "2023-11-30T14:51:44.035750Z  INFO download: text_generation_launcher: Starting download process.\n"
                   "2023-11-30T14:51:48.239526Z  INFO download: text_generation_launcher: Successfully downloaded weights.\n"
                   "```\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev.kind == "cuda_oom" and ev.phase == "load"
