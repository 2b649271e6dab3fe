"""Every allocator's and supervisor's words for a failure, read to the byte; a GPU count never read off a
device index; sizes kept as printed in the JSON view."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomdoctor.cli import main
from oomdoctor.crashlog import parse_log

FRESH = Path(__file__).parent / "data" / "logs" / "fresh"
GIB = float(1 << 30)


def one(tmp_path: Path, text: str):
    p = tmp_path / "run.log"
    p.write_text(text, encoding="utf-8")
    return parse_log(str(p))


@pytest.mark.parametrize("text,kind,tried_bytes,device", [
    ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 512.00 MiB on device 2: cudaMalloc failed: out of memory\n",
     "cuda_oom", 512 << 20, 2),
    ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 64.00 MiB on device 0: hipMalloc failed: out of memory\n",
     "hip_oom", 64 << 20, 0),
    ("RuntimeError: Current platform can NOT allocate memory block with size larger than 4GB! Tried to allocate 5.00 GiB "
     "(GPU  0; 15.11 GiB total capacity; 1.00 GiB already allocated; 2.00 GiB reserved in total by PyTorch)\n",
     "xpu_oom", 5 << 30, 0),
    ("RuntimeError: Allocation is out of device memory on current platform.\n", "xpu_oom", None, None),
    ("2023-11-01 16:19:17.812101: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate "
     "890.06M (933298432 bytes) from device: HIP_ERROR_OutOfMemory\n", "hip_oom", 933298432, None),
    ("E external/xla/xla/stream_executor/cuda/cuda_driver.cc:1020] failed to allocate 2.00G (2147483648 bytes) from device: "
     "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n", "cuda_oom", 2147483648, None),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256 bytes. GPU 0 has a total capacity of 79.15 GiB of "
     "which 0 bytes is free.\n", "cuda_oom", 256, 0),
    ("RuntimeError: Resource exhausted: Out of memory while trying to allocate 24 bytes.\n", "xla_oom", 24, None),
    ("  (0) Resource exhausted:  OOM when allocating tensor with shape[8,4096] and type float on "
     "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n", "tf_oom", None, 0),
    ("Last error:\nCuda failure 'out of memory'\n", "nccl_oom", None, None),
    # torch 0.x's THC check, spconv's tensorview check: CUDA runtime error 2 printed with its string
    ("THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n",
     "cuda_oom", None, None),
    ("RuntimeError: TensorStorage /io/include/tensorview/tensor.h 168\ncuda failed with error 2 out of memory.\n",
     "cuda_oom", None, None),
    # old ROCm's hipErrorMemoryAllocation (1002) through TF's rocm_driver.cc
    ("E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G (7889485824 bytes) from device: "
     "hipError_t(1002)\n", "hip_oom", 7889485824, None),
    # the BFC allocator: TensorFlow's plugin (its own tree in the glog path, Bytes) against JAX's build (external/)
    ("E itex/core/devices/bfc_allocator.cc:101] Allocator ran out of memory trying to allocate 10529419660 Bytes "
     "(rounded to 10529419776 Bytes)\n", "tf_oom", 10529419660, None),
    ("W external/tsl/tsl/framework/bfc_allocator.cc:482] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
     "8.00GiB (rounded to 8589934592)requested by op\n", "xla_oom", 8589934592, None),
    ("ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type float on "
     "/job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc\n", "tf_oom", None, 1),
    # torch's per-process memory fraction, its figures on lines of their own as the allocator prints them
    ("RuntimeError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
     "Currently allocated     : 16.08 GiB\nRequested               : 4.83 GiB\nDevice limit            : 22.20 GiB\n"
     "Free (according to CUDA): 11.12 MiB\n", "cuda_oom", round(4.83 * (1 << 30)), 0),
    # torch's XPU allocator, only its first sentence kept
    ("RuntimeError: XPU out of memory\n", "xpu_oom", None, None),
    # XLA's StreamExecutorMemoryAllocator through jaxlib: the request in bytes and the device ordinal
    ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) "
     "on device ordinal 1\n", "xla_oom", 3206250496, 1),
    # TensorFlow 0.x's executor printed the sentence without the dims
    ("W tensorflow/core/common_runtime/executor.cc:1076] 0x18ef02bb0 Compute status: Resource exhausted: OOM when "
     "allocating tensor with shape\n", "tf_oom", None, None),
    # TGI's warmup, which catches torch.cuda.OutOfMemoryError
    ("RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n",
     "cuda_oom", None, None),
    # Level Zero's (and oneAPI Unified Runtime's) error code under an Intel GPU runtime
    ("RuntimeError: level_zero backend failed with error: 20 (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)\n", "xpu_oom", None, None),
    # the TPU runtime refusing a device buffer, raised through jaxlib
    ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate "
     "50.00M. That was not possible. There are 27.86M free.; (0x0x0_HBM0)\n", "xla_oom", None, None),
    # c10's CPU allocator words, the allocator's name cut off in a title
    ('# 4-bit: "Allocator: not enough memory: you tried to allocate 35389440 bytes."\n', "host_oom", 35389440, None),
    # TensorFlow 1.x's BFC giving up (its readable request), after a retry that is not a failure
    ("W tensorflow/core/common_runtime/bfc_allocator.cc:219] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
     "591.41MiB. The caller indicates that this is not a failure, but may mean that there could be performance gains.\n"
     "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
     "118.28MiB.  Current allocation summary follows.\n", "tf_oom", round(118.28 * (1 << 20)), None),
    # a request torch printed from a corrupted size: absurd, but what the log says
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 538976288.13 GiB. GPU 1 has a total capacity of "
     "47.54 GiB of which 43.55 GiB is free.\n", "cuda_oom", round(538976288.13 * (1 << 30)), 1),
])
def test_each_allocator_family_gives_its_kind_and_request_to_the_byte(tmp_path, text, kind, tried_bytes, device):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    assert (None if ev.tried_gib is None else round(ev.tried_gib * GIB)) == tried_bytes
    assert ev.device == device


@pytest.mark.parametrize("text", [
    "/bin/bash: line 1: 45211 Killed                  python train.py --config c.yaml\n",
    "run.sh: line 66: 777016 Killed                  CUDA_VISIBLE_DEVICES=$gpu python train.py\n",
    "[1]    26478 killed     python test.py\n",
    "**Killed**\n",
    "      Exit Code: 137\n",
    '        "ExitCode": 137,\n',
    "  Reason:       OOMKilled\n",
    "Apr 16 21:08:50 box systemd-oomd[932]: Killed /user.slice/app.slice/train.scope due to memory pressure for "
    "/user.slice being 71.40% > 50.00% for > 20s with reclaim activity\n",
    "slurmstepd: error: Detected 1 oom_kill event in StepId=4.0. Some of the step tasks have been OOM Killed.\n",
    "systemd[1]: user@1021.service: A process of this unit has been killed by the OOM killer.\n",
    # the shell's status word is the C library's translated strsignal(SIGKILL)
    "已杀死\n",
    "[1]+  已杀死               nohup java -jar app.jar\n",
    "run.sh: line 3:  4242 Terminado (killed)      python train.py\n",
    # systemd-oomd's swap rule (v250+ wording) and the service manager's note on the unit it killed
    "May  4 09:30:43 box systemd-oomd[735]: Killed /user.slice/user-1000.slice/session-2.scope due to memory used "
    "(7422640128) / total (8199176192) and swap used (524283904) / total (524283904) being more than 90.00%\n",
    "May  4 09:30:43 box systemd[1]: session-2.scope: systemd-oomd killed 304 process(es) in this unit.\n",
    # the kubelet evicting under node memory pressure
    "The node was low on resource: memory. Container trainer was using 61Gi, which exceeds its request of 0.\n",
    # the kernel's kill line before 4.19, without "Out of memory:" in front
    "[ 4018.450000] Killed process 935 (python) total-vm:113656kB, anon-rss:102104kB, file-rss:0kB, shmem-rss:0kB\n",
])
def test_each_shell_and_supervisor_kill_is_a_host_memory_kill(tmp_path, text):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == "host_oom"


@pytest.mark.parametrize("text", [
    "/bin/bash: line 1: 45211 Terminated              python train.py\n",
    "      Exit Code: 1\n",
    "systemd-oomd[932]: Considered 97 cgroups for killing, top candidates were:\n",
    "ggml_cuda_host_malloc: failed to allocate 1900.00 MiB of pinned memory: invalid argument\n",
    "The node was low on resource: ephemeral-storage.\n",
    "slurmstepd: error: xcgroup_instantiate: unable to create cgroup '/sys/fs/cgroup/memory/slurm/uid_8' : Cannot allocate memory\n",
    # TensorFlow's BFC retrying: "not a failure" in its own words
    "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
    "2.10GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be "
    "performance gains if more memory were available.\n",
    # DeepSpeed's launcher cleaning up after a child that died of SIGSEGV (the return code quoted above it)
    "# [BUG]exits with return code = -11\n\nLoading extension module utils...\n"
    "[2023-05-20 12:09:28,633] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 51386\n",
    "kill -9 was not needed: Killed process list is empty\n",
])
def test_look_alikes_of_kills_and_allocator_failures_are_not_events(tmp_path, text):
    assert one(tmp_path, text).events == ()


def test_mps_other_allocations_are_the_same_process_and_max_allowed_is_not_the_card(tmp_path):
    ev = one(tmp_path, "RuntimeError: MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, "
                       "max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool.\n").primary
    assert ev.kind == "mps_oom" and ev.tried_gib == pytest.approx(292.5 / 1024)
    assert ev.process_gib == pytest.approx(9.57 + 17.35) and ev.other_processes_gib is None
    assert ev.capacity_gib is None


def test_a_gpu_count_is_never_read_off_a_device_index():
    # ggml's KV-cache lines name CUDA0..CUDA10 and the failure is on device 4: no world size from either
    for name in ("n03_ggml_kv_cache_many_devices_then_huge_request.log", "n02_ggml_compute_buffer_device4_then_python.log"):
        assert parse_log(str(FRESH / name)).world_size is None


def test_json_keeps_sizes_as_printed_and_the_request_in_bytes(tmp_path, capsys):
    p = tmp_path / "run.log"
    p.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256 bytes. GPU 0 has a total capacity of "
                 "79.15 GiB of which 1024.00 KiB is free. Including non-PyTorch memory, this process has 79.14 GiB memory in "
                 "use. Of the allocated memory 77.00 GiB is allocated by PyTorch, and 1024.00 KiB is reserved by PyTorch "
                 "but unallocated.\n", encoding="utf-8")
    main([str(p), "--json", "--gpu", "A100-80GB"])
    ev = json.loads(capsys.readouterr().out)["crash"]["events"][0]
    assert ev["tried_bytes"] == 256 and ev["tried_gib"] == 256 / GIB
    assert ev["free_gib"] == 1 / 1024 and ev["reserved_unallocated_gib"] == 1 / 1024


def test_the_text_view_shows_a_tiny_request_in_its_own_unit(tmp_path, capsys):
    p = tmp_path / "run.log"
    p.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256 bytes. GPU 0 has a total capacity of "
                 "79.15 GiB of which 0 bytes is free.\n", encoding="utf-8")
    main([str(p), "--plain", "--gpu", "A100-80GB"])
    assert "256 bytes" in capsys.readouterr().out


def test_a_cue_printed_after_the_message_is_read_and_the_nearest_cue_wins(tmp_path):
    # llama.cpp names the failed call after the allocator's line; TF names the node after its message
    r = one(tmp_path, "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 10.00 MiB on device 0: cudaMalloc failed: "
                      "out of memory\nllama_model_load: error loading model: unable to allocate CUDA0 buffer\n")
    assert r.primary.phase == "load" and r.primary.phase_evidence.line == 2
    r = one(tmp_path, "{'loss': 1.2, 'grad_norm': 0.3, 'learning_rate': 1e-05, 'epoch': 0.1}\n"
                      "ResourceExhaustedError: OOM when allocating tensor with shape[8,64] and type float on "
                      "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
                      "\t [[{{node gradient_tape/model/dense/MatMul/MatMul_1}}]]\n")
    assert r.primary.phase == "backward" and r.primary.phase_evidence.line == 3


def test_vllm_engine_loop_is_generation_and_its_start_up_is_loading(tmp_path):
    loop = one(tmp_path, '  File "/v/vllm/v1/engine/core.py", line 1170, in run_busy_loop\n    self._process_engine_step()\n'
                         '  File "/v/vllm/model_executor/models/llama.py", line 161, in forward\n    x = self.mlp(x)\n'
                         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n").primary
    assert loop.phase == "generate"
    fx = one(tmp_path, '  File "/v/vllm/v1/worker/gpu_worker.py", line 183, in determine_available_memory\n'
                       '    self.model_runner.profile_run()\n  File "<eval_with_key>.130", line 662, in forward\n'
                       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n").primary
    assert fx.phase == "load"


@pytest.mark.parametrize("text,phase,evidence_line", [
    # torch 0.x warns with THCudaCheck, prints the traceback, then raises the same failure: its frames are the cue
    ("THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
     "Traceback (most recent call last):\n  File \"main.py\", line 357, in train\n    loss.backward()\n"
     "  File \"/t/torch/autograd/__init__.py\", line 99, in backward\n    variables, grad_variables, retain_graph)\n"
     "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58\n",
     "backward", 5),
    # Python 3.11's carets under a source line whose indent the paste lost, no File line
    (" return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
     "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "RuntimeError: MPS backend out of memory (MPS allocated: 5.50 GB, other allocations: 14.76 GB, max allowed: "
     "20.40 GB). Tried to allocate 147.24 MB on private pool.\n", "backward", 1),
    # TGI names its start-up warmup in the message itself
    ("ERROR warmup{max_input_length=Some(30000) max_prefill_tokens=31000}:warmup: text_generation_router_v3::client: "
     "Server error: Not enough memory to handle 31000 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n",
     "load", 1),
    # a kill after a finished shard bar, the launcher's lines in rich's level column between them
    ("Loading checkpoint shards: 100%|██████████| 61/61 [05:45<00:00,  5.66s/it]\n"
     " WARNING  Sending process 14 closing signal SIGTERM         api.py:699\n"
     " ERROR    failed (exitcode: -9) local_rank: 5 (pid: 22) of  api.py:673\n", "load", 1),
    # a loss logged under a metric path, then the shell's kill in a Chinese locale
    ("episode/score 0.1 / train/loss/con 0.04 / train/loss/dyn 5.41 / fps/train 1253.7\n"
     "Writing metrics: /logdir/metrics.jsonl\n已杀死\n", "train", 1),
])
def test_phase_cues_of_the_third_audit(tmp_path, text, phase, evidence_line):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase
    assert ev.phase_evidence is not None and ev.phase_evidence.line == evidence_line


@pytest.mark.parametrize("text,phase,evidence_line", [
    # Catalyst names its bars by loader: the `valid` loader's bar is evaluation
    ("0/10 * Epoch (train): 100% 32/32 [00:41<00:00,  2.39s/it, loss=0.898]\n"
     "0/10 * Epoch (valid):   3% 1/32 [00:01<00:46,  1.50s/it, loss=1.656]\n"
     "Traceback (most recent call last):\n....\nRuntimeError: CUDA error: out of memory\n", "eval", 2),
    # what the run printed after a bar lands on the bar's line: it is the later event
    ("Progress:|██     | 25% 1999/8000 [1:02:25<3:07:25,  1.87s/it, loss=0.296] SAVING CHECKPOINT...\n"
     "Killed\n", "save", 1),
    # a script named generate.py is not generation: the frames under it load the model
    ("Traceback (most recent call last):\n  File \"/a/generate.py\", line 46, in main\n"
     "    model = AutoModelForCausalLM.from_pretrained(path)\n"
     "  File \"/s/accelerate/utils/modeling.py\", line 399, in set_module_tensor_to_device\n"
     "    new_value = value.to(device)\n"
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n", "load", 5),
    # TGI's warmup frame right above the message outranks generate_token in the launcher's copy after it
    ("  File \"/o/text_generation_server/models/flash_causal_lm.py\", line 755, in warmup\n    raise RuntimeError(\n"
     "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n"
     "ERROR text_generation_launcher: Method Warmup encountered an error.\nTraceback (most recent call last):\n"
     "  File \"/o/text_generation_server/models/flash_causal_lm.py\", line 753, in warmup\n"
     "    _, batch = self.generate_token(batch)\n"
     "  File \"/o/text_generation_server/models/flash_causal_lm.py\", line 839, in generate_token\n"
     "    out = self.forward(\n", "load", 1),
    # vLLM v1: the API server's output handler reports the EngineCore's failure after it
    ("(EngineCore pid=112) ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. "
     "Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 21.75 MiB is free.\n"
     "(APIServer pid=1) ERROR 05-01 14:39:06 [async_llm.py:699] AsyncLLM output_handler failed.\n", "generate", 2),
    # verl's fused Ray worker names the rollout it was running after the message
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 5.22 GiB.\n"
     "(main_task pid=2396241) Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): "
     "ray::WorkerDict.actor_rollout_generate_sequences() (pid=2396579, ip=10.242.3.193)\n", "generate", 2),
    # a DataLoader worker's death is data loading, wherever the main process's SIGCHLD handler interrupted it
    ("Traceback (most recent call last):\n  File \"train.py\", line 214, in <module>\n"
     "    x = x.float().cuda()\n"
     "  File \"/t/torch/utils/data/_utils/signal_handling.py\", line 66, in handler\n    _error_if_any_worker_fails()\n"
     "RuntimeError: DataLoader worker (pid 28811) is killed by signal: Bus error.\n", "data", 6),
])
def test_phase_cues_of_the_fifth_audit(tmp_path, text, phase, evidence_line):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase
    assert ev.phase_evidence is not None and ev.phase_evidence.line == evidence_line


def test_one_long_line_cut_by_a_terminal_is_joined_in_a_paste_of_short_lines(tmp_path):
    message = ("UserWarning: Failed to clone() tensor with name lm_head.weight. Error: CUDA out of memory. Tried to "
               "allocate 982.00 MiB (GPU 2; 79.35 GiB total capacity; 77.16 GiB already allocated; 272.19 MiB free; "
               "77.16 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
               "max_split_size_mb to avoid fragmentation.")
    cut = [message[i:i + 97] for i in range(0, len(message), 97)]
    short = [f"    --flag_{i} {i} \\" for i in range(20)]
    ev = one(tmp_path, "\n".join(["python3 train.py \\", *short, *cut]) + "\n").primary
    assert ev is not None and ev.kind == "cuda_oom" and ev.device == 2
    assert ev.capacity_gib == 79.35 and ev.phase == "save"


@pytest.mark.parametrize("text,phase,evidence_line", [
    # ComfyUI's sampling nodes run the diffusion sampler: generation
    ("Error occurred when executing KSampler:\n\nHIP out of memory. Tried to allocate 72.00 MiB. GPU 0 has a total "
     "capacity of 512.00 MiB of which 16.00 MiB is free.\n\n  File \"/c/ComfyUI/execution.py\", line 317, in execute\n"
     "    output_data = get_output_data(obj, input_data_all)\n", "generate", 1),
    ("  File \"/c/ComfyUI/comfy/samplers.py\", line 716, in sample\n    output = self.inner_sample(noise, latent_image)\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 90.00 MiB.\n", "generate", 1),
    # TGI's router names the serving step in its tracing spans on the error's own line
    ("2023-12-22T00:21:35.318928Z ERROR batch{batch_size=1}:prefill:prefill{id=1 size=1}: text_generation_client: "
     "router/client/src/lib.rs:33: Server error: CUDA out of memory. Tried to allocate 222.00 MiB.\n", "generate", 1),
    # IPython 8's notebook-cell frame after the message: its arrowed line called generate
    ("OutOfMemoryError: CUDA out of memory. Tried to allocate 86.00 MiB (GPU 0; 3.94 GiB total capacity; 2.99 GiB "
     "already allocated; 29.06 MiB free; 3.15 GiB reserved in total by PyTorch)\n"
     "OutOfMemoryError                          Traceback (most recent call last)\nCell In[9], line 15\n"
     "     14 t1 = time.perf_counter()\n---> 15 generated = model.generate(ids, max_length=40)\n"
     "     16 t2 = time.perf_counter()\n", "generate", 5),
    # vLLM captures its CUDA graphs while the engine starts; torch/cuda/graphs.py's capture_end is the innermost frame
    ("  File \"/v/vllm/compilation/backends.py\", line 681, in __call__\n"
     "    with torch.cuda.graph(cudagraph, pool=self.graph_pool):\n"
     "  File \"/t/torch/cuda/graphs.py\", line 84, in capture_end\n    super().capture_end()\n"
     "RuntimeError: CUDA error: out of memory\n", "load", 3),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 6 has a total capacity of 44.53 GiB "
     "of which 448.00 KiB is free.\n(RayWorkerWrapper pid=1861983) INFO 03-27 10:29:03 [model_runner.py:1442] "
     "Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static.\n", "load", 2),
    # torch_geometric's dataset processing, its finished bar, then the kill
    ("Processing...\n100%|██████████| 205944/205944 [18:54<00:00, 181.58it/s]\nKilled\n", "data", 1),
    # a bare `training...` progress line before a kill
    ("creating model and diffusion...\ncreating data loader...\ntraining...\nKilled\n", "train", 3),
    # an issue title quoting the message: the traceback pasted under it is the same failure's, forward included
    ("# torch.cuda.OutOfMemoryError: CUDA out of memory.\n\nTrying to train on windows.\n\n```\n"
     "steps:   0%|          | 0/2000 [00:00<?, ?it/s]epoch 1/1\nTraceback (most recent call last):\n"
     "  File \"D:\\\\ai\\\\train_network.py\", line 604, in train\n"
     "    noise_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample\n"
     "  File \"D:\\\\ai\\\\venv\\\\lib\\\\site-packages\\\\torch\\\\nn\\\\modules\\\\module.py\", line 1501, in _call_impl\n"
     "    return forward_call(*args, **kwargs)\n", "forward", 11),
    # a DeepSpeed -9 quoted in a title: the kill lines glued to the shard bar below show where it happened
    ("# train.py exits with return code = -9\n\n`Loading checkpoint shards:   0%|          | 0/7 [00:00<?, ?it/s]"
     "[2023-09-10 11:45:59,207] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 6293\n"
     "[2023-09-10 11:45:59,501] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 6294\n", "load", 3),
])
def test_phase_cues_of_the_sixth_audit(tmp_path, text, phase, evidence_line):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase
    assert ev.phase_evidence is not None and ev.phase_evidence.line == evidence_line


def test_forward_frames_after_a_plain_message_still_do_not_count(tmp_path):
    # only a quoted title hands its phase to the log below it; a message line does not
    ev = one(tmp_path, "torch.cuda.OutOfMemoryError: CUDA out of memory.\nTraceback (most recent call last):\n"
             "  File \"/t/torch/nn/modules/module.py\", line 1501, in _call_impl\n"
             "    return forward_call(*args, **kwargs)\n").primary
    assert ev is not None and ev.phase is None


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # TurboMind's check() with cudaGetErrorString's words (lmdeploy src/turbomind/utils/cuda_utils.h)
    ("RuntimeError: [TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/memory_utils.cu:32 \n",
     "cuda_oom", None),
    # MXNet's GPU storage manager names the runtime call
    ("[09:48:40] src/storage/./pooled_storage_manager.h:107: cudaMalloc failed: out of memory\n", "cuda_oom", None),
    # the CUDA driver API's CUresult name alone
    ("E0423 14:09:15.000 CUDA_ERROR_OUT_OF_MEMORY\n", "cuda_oom", None),
    # hipTensorFlow: the size in HumanReadableNumBytes' binary units only, with ROCm 1.x's error code
    ("E tensorflow/stream_executor/rocm/rocm_driver.cc:600] failed to allocate 8.00G from device: hipError_t(1002)\n",
     "hip_oom", 8 << 30),
    # the driver's pinned host allocation (cuda_driver.cc GpuDriver::HostAllocate), named by its backend
    ("2024-10-22 09:22:17.233972: E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 34359738368 "
     "bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n", "cuda_oom", 34359738368),
    # Lua Torch's THRealloc counts in whole GB: a host failure, the truncated figure no request size
    ("THNN.lua:109: $ Torch: not enough memory: you tried to reallocate 11GB. Buy new RAM! at /tmp/TH/THGeneral.c:251\n",
     "host_oom", None),
    # c10's words with no figure, as a title keeps them
    ("# DefaultCPUAllocator: can't allocate memory\n\nmerging the LoRA weights\n", "host_oom", None),
    # an issue title retypes the failure: any letter case, the class with prose after it
    ("# [Bug]: the issue of \"cuda out of memory\" arises\n", "cuda_oom", None),
    ("# cuda error out of memory\n\nserver log below\n", "cuda_oom", None),
    ("# CUDA Out of Memory\n", "cuda_oom", None),
    ("# torch.cuda.OutOfMemoryError on older GPU\n", "cuda_oom", None),
    ("## HIP Out Of Memory on gfx1100\n", "hip_oom", None),
])
def test_failure_words_of_the_seventh_audit(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    if tried_bytes is None:
        assert ev.tried_gib is None
    else:
        assert ev.tried_gib is not None and abs(ev.tried_gib * GIB - tried_bytes) <= 1


@pytest.mark.parametrize("text", [
    "I retyped it: cuda out of memory\n",                       # a log line keeps the tool's exact words
    "# How to avoid CUDA OOM in training?\n",                   # a title's abbreviation is no allocator's words
    "DefaultCPUAllocator: can't allocate memory: you\n",       # a cut message, not the words alone
])
def test_words_the_seventh_audit_does_not_read_as_a_failure(tmp_path, text):
    assert one(tmp_path, text).primary is None


def test_a_title_without_the_request_and_the_message_with_it_are_one_failure(tmp_path):
    rep = one(tmp_path, "# DefaultCPUAllocator: not enough memory\n\nRuntimeError: [enforce fail at alloc_cpu.cpp:117] data. "
                        "DefaultCPUAllocator: not enough memory: you tried to allocate 31850496000 bytes.\n")
    assert [e.kind for e in rep.events] == ["host_oom"]
    assert rep.primary.tried_gib is not None and abs(rep.primary.tried_gib * GIB - 31850496000) <= 1


@pytest.mark.parametrize("text,phase,evidence_line", [
    # TurboMind allocating each GPU's share of the weights
    ("Traceback (most recent call last):\n"
     "  File \"/e/lmdeploy/turbomind/turbomind.py\", line 199, in _create_weight_func\n"
     "    model_comm.create_shared_weights(device_id, rank)\n"
     "RuntimeError: [TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/memory_utils.cu:32\n",
     "load", 3),
    # vLLM v0's engine construction: LLM(model=...) names `model`, the workers it starts load it
    ("Traceback (most recent call last):\n  File \"/h/test.py\", line 11, in <module>\n"
     "    llm = LLM(model=\"llama-2-13b-chat-hf\")\n"
     "  File \"/v/vllm/engine/llm_engine.py\", line 110, in __init__\n    self._init_workers(distributed_init_method)\n"
     "  File \"/v/vllm/engine/llm_engine.py\", line 142, in _init_workers\n    self._run_workers(\"init_model\")\n"
     "RuntimeError: CUDA error: out of memory\n", "load", 6),
    # mmengine building the model from its config (xtuner's train.py)
    ("Traceback (most recent call last):\n"
     "  File \"/m/mmengine/_strategy/base.py\", line 306, in build_model\n    model = MODELS.build(model)\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n", "load", 2),
    # llama.cpp's KV cache allocation reported after ggml's failed buffer, in an indented fence
    ("   ```\n   ggml_backend_cuda_buffer_type_alloc_buffer: allocating 204800.00 MiB on device 0: cudaMalloc failed: out of memory\n"
     "   llama_kv_cache_init: failed to allocate buffer for kv cache\n   ```\n", "load", 3),
    # TF2 eager names the failed op: a gradient kernel
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[128,768] and "
     "type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:StridedSliceGrad]\n",
     "backward", 1),
    # Lua Torch's stack traceback under its allocator's words
    ("THNN.lua:109: $ Torch: not enough memory: you tried to reallocate 11GB. Buy new RAM! at THGeneral.c:251\n"
     "stack traceback:\n        [C]: in function 'v'\n"
     "        /t/nn/THNN.lua:109: in function 'Tanh_updateOutput'\n"
     "        /t/nn/Sequential.lua:44: in function 'forward'\n", "forward", 4),
    # the web UI's txt2img traceback printed after the message
    ("RuntimeError: CUDA out of memory. Tried to allocate 648.00 MiB (GPU 0; 6.00 GiB total capacity; 4.66 GiB already "
     "allocated; 0 bytes free; 4.70 GiB reserved in total by PyTorch)\n\nError completing request\nTraceback (most recent call last):\n"
     "  File \"D:\\\\sd\\\\modules\\\\txt2img.py\", line 49, in txt2img\n    processed = process_images(p)\n", "generate", 6),
    # a served request aborted after the failure
    ("(APIServer pid=1) ERROR 08-20 05:33:36 [client.py:155] RuntimeError: NPU out of memory. Tried to allocate 502.00 MiB "
     "(NPU 0; 60.96 GiB total capacity; 57.88 GiB already allocated; 57.88 GiB current active; 156.28 MiB free; 58.88 GiB "
     "reserved in total by PyTorch).\n(APIServer pid=1) INFO 08-20 05:33:36 [async_omni.py:1074] [AsyncOmni] Aborted request(s) "
     "video-aa2c\n", "generate", 2),
])
def test_phase_cues_of_the_seventh_audit(tmp_path, text, phase, evidence_line):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase
    assert ev.phase_evidence is not None and ev.phase_evidence.line == evidence_line


# Invented but realistic tracebacks of tools no fixture names and no call-site row lists: the phase comes from the
# words of the frames (function names, statements' calls, an installed module's path), nearest to the failure.
@pytest.mark.parametrize("text,phase,evidence_line", [
    # a serving toolkit's request loop: `run_inference`
    ("Traceback (most recent call last):\n  File \"/srv/app/server.py\", line 88, in handle\n    out = self.runner.run_inference(req)\n"
     "  File \"/srv/app/runner.py\", line 41, in run_inference\n    return self.engine(batch)\n"
     "RuntimeError: CUDA error: out of memory\n", "generate", 4),
    # a diffusion pipeline's denoising loop, CamelCase and snake_case words
    ("Traceback (most recent call last):\n  File \"/w/studio/app.py\", line 10, in on_click\n    img = pipe.render(prompt)\n"
     "  File \"/w/studio/pipe.py\", line 77, in render\n    latents = self.DenoiseLoop(latents)\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB.\n", "generate", 5),
    # a trainer's validation hook inside a training loop: the outer phase wins over the forward pass under it
    ("Traceback (most recent call last):\n  File \"/p/loop.py\", line 5, in fit_epoch\n    self.validation_round(m)\n"
     "  File \"/p/loop.py\", line 30, in validation_round\n    logits = self.net(x)\n"
     "  File \"/p/net.py\", line 12, in block\n    return self.mlp(h)\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 15.90 GiB total capacity; 14.00 GiB already "
     "allocated; 10.00 MiB free; 14.50 GiB reserved in total by PyTorch)\n", "eval", 4),
    # weights restored by a tool's own checkpoint reader
    ("Traceback (most recent call last):\n  File \"/r/cli.py\", line 9, in main\n    m = restore_weights(path)\n"
     "  File \"/r/io.py\", line 20, in restore_weights\n    t = buf.pin()\n"
     "RuntimeError: CUDA error: out of memory\n", "load", 4),
    # an exporter writing a merged model, frames printed after the message under an issue's title
    ("# RuntimeError: CUDA error: out of memory\n\n```\nTraceback (most recent call last):\n"
     "  File \"/x/tool.py\", line 3, in <module>\n    cli()\n  File \"/x/tool.py\", line 40, in export_merged\n"
     "    blob = fuse(a, b)\n```\n", "save", 7),
    # a package's own module path: the installed library's layout says what it does
    ("Traceback (most recent call last):\n  File \"/u/run.py\", line 2, in <module>\n    go()\n"
     "  File \"/u/.venv/lib/python3.11/site-packages/fancylib/inference/engine.py\", line 9, in go\n    return k(x)\n"
     "RuntimeError: CUDA error: out of memory\n", "generate", 4),
])
def test_lexical_phase_from_the_words_of_unnamed_frames(tmp_path, text, phase, evidence_line):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase
    assert ev.phase_evidence is not None and ev.phase_evidence.line == evidence_line


@pytest.mark.parametrize("text", [
    # wrappers and entry points name nothing; a script's file name is its user's
    "Traceback (most recent call last):\n  File \"/u/train_and_generate.py\", line 2, in main\n    wrapper()\n"
    "  File \"/u/train_and_generate.py\", line 9, in wrapper\n    return fn(*a)\nRuntimeError: CUDA error: out of memory\n",
    # a trainer's `initialize` sets everything up: not one phase
    "Traceback (most recent call last):\n  File \"/u/t.py\", line 3, in initialize\n    dist.barrier()\n"
    "RuntimeError: CUDA error: out of memory\n",
    # the user's training loop quoted after the message is code, not frames
    "RuntimeError: CUDA error: out of memory\n\nmy loop:\n    loss = crit(net(x), y)\n    loss.backward()\n",
])
def test_lexical_phase_stays_unknown_without_a_named_frame(tmp_path, text):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase is None


# The grammar of a failed allocation in words no family reads: a likely failure, its request to the byte.
@pytest.mark.parametrize("text,kind,tried_bytes", [
    ("fastllm.RuntimeError: Failed to allocate 512 MiB on device\n", "cuda_oom", 512 << 20),
    ("[ERROR] kvpool: allocation failed: requested 3.5GB\n", "cuda_oom", round(3.5 * (1 << 30))),
    ("E0512 12:00:00.123 runtime.cc:12] OUT OF MEMORY on TPU while allocating 256 bytes\n", "xla_oom", 256),
    ("thread 'main' panicked at src/alloc.rs:31:9: OOM: could not alloc 2 KiB\n", "cuda_oom", 2048),
    ("FATAL: ROCm device memory exhausted: allocation failed, requested 1024.00 KiB\n", "hip_oom", 1 << 20),
    ("RuntimeError: VK_ERROR_OUT_OF_DEVICE_MEMORY\n", "cuda_oom", None),
    ("myengine.EngineError: insufficient host memory to allocate 7 G\n", "host_oom", 7 << 30),
])
def test_grammar_reads_an_unknown_tools_allocation_failure(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind and ev.confidence == "likely"
    assert (None if ev.tried_gib is None else round(ev.tried_gib * GIB)) == tried_bytes


@pytest.mark.parametrize("text", [
    "Why do I get out of memory with batch size 8?\n",
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True  # error: avoids OOM\n",
    "INFO: no OOM errors so far, step 300\n",
    "error: summary: without any out of memory errors\n",
    "WARNING: could not allocate pinned memory, falling back to pageable\n",
    "Error handling: retry on out of memory\n",
    "    if is_oom(e): raise RuntimeError('out of memory')\n",
    "The model raises OOM errors on two nodes\n",
    "slurmstepd: error: unable to create cgroup '/sys/fs/cgroup/memory/x' : Cannot allocate memory\n",
    "error: Tips: to fix OOM reduce --batch-size\n",
])
def test_grammar_look_alikes_stay_non_failures(tmp_path, text):
    assert one(tmp_path, text).primary is None


# The last thing a run printed before a kill, when it opens with a gerund of a class: what it had started doing.
@pytest.mark.parametrize("text,phase", [
    ("Initializing vision tower from /ckpt/vit-h\n/bin/bash: line 4: 912 Killed                  python serve.py\n", "load"),
    ("Exporting merged weights to ./out ...\nKilled\n", "save"),
    ("Tokenizing corpus (num_proc=8)\nKilled\n", "data"),
])
def test_banner_before_a_kill_names_its_phase(tmp_path, text, phase):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == "host_oom" and ev.phase == phase


@pytest.mark.parametrize("text", [
    "Training process finished. Exit code: 137\n",
    "Loading done in 3.2s\nKilled\n",
    "Step 10 loss 2.3\nKilled\n",
])
def test_a_finished_or_plain_line_before_a_kill_names_no_phase(tmp_path, text):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase in (None, "train")


@pytest.mark.parametrize("text,kind", [
    # macOS prints a killed job with strsignal's number; SGLang's KV-cache pool refusal is a serving engine's cache check
    ("$ python train.py --model llama\nKilled: 9\n", "host_oom"),
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n", "vllm_cache"),
    # torch-max-mem's batch-size search giving up, as accelerate's does
    ("MemoryError: Execution did not even succeed with ('batch_size', 'slice_size') all equal to 1.\n",
     "batch_size_exhausted"),
    # a Chinese report's error word before a full-width colon, the failure's words lowercased
    ("按照默认配置报错：cuda out of memory，改成 cpu 之后又报别的错\n", "cuda_oom"),
])
def test_audit8_forms_are_read_by_their_tools_words(tmp_path, text, kind):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind


@pytest.mark.parametrize("text", [
    "With no change, I run out of memory (A100 w/ 24GB). Setting it lower causes the following error:\n"
    "AttributeError: 'NoneType' object has no attribute 'cpu'\n",
    "Since the update I get out of memory error: the trainer stops at step 3\n",
    "Killed: 90 tasks were rescheduled\n",
])
def test_a_persons_report_and_other_numbers_stay_non_failures(tmp_path, text):
    assert one(tmp_path, text).primary is None


@pytest.mark.parametrize("text,phase", [
    # ComfyUI's VAE decode node turns sampled latents into the image: the end of the generation
    ("Error occurred when executing VAEDecodeTiled:\n\nAllocation on device 0 would exceed allowed memory. (out of memory)\n"
     "Currently allocated : 3.10 GiB\nRequested : 512.00 MiB\nDevice limit : 4.00 GiB\n", "generate"),
    # torch's autograd entry statement kept alone above the message
    ("    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n", "backward"),
    # an HTTP request served by an ASGI model server (uvicorn runs the app once per request)
    ("Traceback (most recent call last):\n"
     '  File "/srv/venv/lib/python3.11/site-packages/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi\n'
     "    result = await app(self.scope, self.receive, self.send)\n"
     '  File "/srv/venv/lib/python3.11/site-packages/starlette/middleware/errors.py", line 186, in __call__\n'
     "    raise exc\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n", "generate"),
    # SD.Next's diffusers pipeline run for a request, as rich prints the frame
    ("│ /opt/sdnext/modules/processing_diffusers.py:187 in process_base │\n"
     "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.00 GiB.\n", "generate"),
])
def test_audit8_call_sites_name_their_phase(tmp_path, text, phase):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None


def test_a_title_hyphenating_the_failure_words_is_read(tmp_path):
    ev = one(tmp_path, "# CUDA Out-of-Memory crash when inferencing more than 10 frames\n\nlogs below\n").primary
    assert ev is not None and ev.kind == "cuda_oom"


def test_ggml_metal_buffer_is_read_to_the_byte_before_a_title_the_grammar_guessed(tmp_path):
    # ggml-alloc.c names the buffer type; the grammar's reading of the title above names no backend
    ev = one(tmp_path, "# llama runner process has terminated: error:failed to allocate buffer -\n\n"
                       "ggml_gallocr_reserve_n: failed to allocate Metal buffer of size 34681522080\n").primary
    assert ev is not None and ev.kind == "mlx_oom" and ev.tried_gib is not None
    assert abs(ev.tried_gib * GIB - 34681522080) <= 1


def test_a_stated_failure_is_primary_over_a_kill_read_before_it(tmp_path):
    ev = one(tmp_path, "[1]    4242 killed     python warmup.py\n$ python train.py\nRuntimeError: CUDA error: out of memory\n").primary
    assert ev is not None and ev.kind == "cuda_oom" and ev.confidence == "certain"


@pytest.mark.parametrize("text,capacity_gib", [
    ("# RuntimeError: CUDA out of memory. Tried to allocate 1.36 GiB (GPU 0; 10.92 GiB total capacity;\n", 10.92),
    ("RuntimeError: CUDA out of memory. Tried to allocate 100.00 MiB (GPU 0; 12.00 GiB total\n", 12.0),
])
def test_a_cut_legacy_message_keeps_the_card_size_it_printed(tmp_path, text, capacity_gib):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.capacity_gib == pytest.approx(capacity_gib)


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # TensorFlow's own status words, without the exception's prefix (a title, backticks)
    ("# OOM when allocating tensor with shape[3,3,512,1024] and type float on /job:localhost/replica:0/task:0/"
     "device:GPU:0 by allocator GPU_0_bfc [Op:Mul]\n", "tf_oom", None),
    ("`OOM when allocating tensor with shape[320000,512] and type float on /job:localhost/replica:0/task:0/device:GPU:0 "
     "by allocator GPU_0_bfc`\nI got this message while training CNN\n", "tf_oom", None),
    # a RESOURCE_EXHAUSTED status whose message says an allocation failed, under glog's W prefix
    ("2021-11-16 11:34:36.221746: W tensorflow/core/framework/op_kernel.cc:1680] Resource exhausted: failed to allocate "
     "memory\n", "tf_oom", None),
    # the exception class or the status name alone in a title
    ("# ResourceExhaustedError problem in fit_generator.\n", "tf_oom", None),
    ("# Resource exhausted error during training on GPU with tensorflow 2.1.0\n", "tf_oom", None),
    ("# ResourceExhaustedError (out of memory) when training a Saved Model\n", "tf_oom", None),
    # vLLM v1's newer cache check, the second half of a line a terminal cut
    ("e is needed, which is larger than the available KV cache memory (4.25 GiB). Based on the avai\n", "vllm_cache", None),
    # SGLang's request-slot pool
    ("RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`.\n",
     "vllm_cache", None),
    # llama.cpp's loader words retyped with a capital in a title
    ("# Unable to allocate CUDA0 buffer when num_gpu > 1\n", "cuda_oom", None),
    # ggml's Metal backend names itself in its function; MLX's Metal allocator in brackets
    ("# Bug: ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer\n", "mlx_oom", None),
    ("ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size =  1024.00 MiB\n", "mlx_oom", 1 << 30),
    ("libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] Unable to allocate "
     "12 bytes.\n", "mlx_oom", 12),
    # MPS refuses a buffer past the device's maximum length
    ("RuntimeError: Invalid buffer size: 7.50 GB\n", "mps_oom", int(7.5 * GIB)),
    # the JVM's native allocation
    ("# Native memory allocation (mmap) failed to map 2863333376 bytes for committing reserved memory.\n", "host_oom",
     2863333376),
])
def test_failure_words_of_the_ninth_audit(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    if tried_bytes is None:
        assert ev.tried_gib is None
    else:
        assert ev.tried_gib is not None and abs(ev.tried_gib * GIB - tried_bytes) <= 1


@pytest.mark.parametrize("text", [
    "[distributed] Expected zero exit code but got -9\n",            # torch's test harness: a SIGKILL
    "# 执行finetune.sh遇到exits with return code = -9是怎么错误呢？\n",   # DeepSpeed's words before a CJK character
])
def test_kills_of_the_ninth_audit(tmp_path, text):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == "host_oom"


@pytest.mark.parametrize("text", [
    "AssertionError: Expected zero exit code but got 1 for pid: 4242\n",   # a child's own failure, not a kill
    "# Why do I get ResourceExhaustedError?\n",                            # a question title
    "# How to handle OOM when allocating tensor?\n",
])
def test_words_the_ninth_audit_does_not_read_as_a_failure(tmp_path, text):
    assert one(tmp_path, text).primary is None


@pytest.mark.parametrize("text,phase", [
    # a kill quoted as an issue's title: the run's output pasted under it, its last lines nearest
    ("# traceback : Signal 9 (SIGKILL) received by PID 2198\n\n> initializing model parallel with size 1\n"
     "Loading a checkpoint (shards=8, current-mp-size=1)\nModel args:\n {\n  \"dim\": 5120,\n", "load"),
    # SGLang's request pool is filled while it serves; the engine's own cache check runs at start-up
    ("RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`.\n",
     "generate"),
    ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`.\n", "load"),
    # llama.cpp's loader reports the model's metadata while it reads it
    ("# Unable to allocate CUDA0 buffer when num_gpu > 1\n\n```shell\nprint_info: n_ff             = 18944\n"
     "print_info: model type       = 7B\n", "load"),
])
def test_phase_cues_of_the_ninth_audit(tmp_path, text, phase):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None


def test_an_ipython_frames_signature_is_not_read_as_calls(tmp_path):
    # IPython 8 prints the parameters after the frame's name; `generate_progress_plots` is one, not a call
    ev = one(tmp_path, "----> 2     model = kpms.fit_model(model, data)\n\n"
                       "File ~/env/lib/python3.10/site-packages/keypoint_moseq/fitting.py:253, in fit_model(model, data, "
                       "verbose, generate_progress_plots, save_every_n_iters)\n"
                       "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 45924508816 bytes.\n").primary
    assert ev is not None and ev.kind == "xla_oom" and ev.phase != "generate"


@pytest.mark.parametrize("text,kind", [
    # torch's class with its module, inside a user's sentence
    ("Btw, while training on 8 A800 gpus, I always got torch.cuda.OutOfMemoryError. So I halved the batch size.\n",
     "cuda_oom"),
    # torch's message retyped with its own closing advice, in full-width brackets
    ("会报显存错误吗【cuda out of memory，allocated memory try setting max_split_size_mb to avoid fragmentation. "
     "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF 】\n", "cuda_oom"),
])
def test_the_allocators_own_words_in_a_users_sentence(tmp_path, text, kind):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind


@pytest.mark.parametrize("text", [
    '    GGML_LOG_ERROR("%s: failed to allocate graph\\n", __func__);\n',      # the code that prints, not its output
    "except torch.cuda.OutOfMemoryError:\n",
    "How do I catch torch.cuda.OutOfMemoryError in a loop\n",
    "if you hit cuda out of memory, try setting max_split_size_mb to avoid fragmentation.\n",
])
def test_code_and_advice_naming_the_failure_are_not_failures(tmp_path, text):
    assert one(tmp_path, text).primary is None


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # Rust's default allocation-error hook (library/std/src/alloc.rs), as a tokenizer's worker aborts
    ("memory allocation of 2097152 bytes failed\n", "host_oom", 2097152),
    # the HIP runtime's own report (hipamd/src/hip_memory.cpp), request and free in bytes
    (":1:hip_memory.cpp           :303 : 9616777863 us: 4277 : [tid:0x7f2accbfe6c0] Allocation failed : Device memory : "
     "required :4 | free :2314338304 | total :17163091968 \n", "hip_oom", 4),
    (":1:memory.cpp               :347 : 9616777840 us: 4277 : [tid:0x7f2accbfe6c0] Video memory allocation failed!\n",
     "hip_oom", None),
    # Ascend CANN's EL0004 and its runtime's memory-application error
    ("[PID: 210907] 2026-04-09-21:56:40.384.694 Memory_Allocation_Failure(EL0004): Failed to allocate memory requested by "
     "GE module.\n", "npu_oom", None),
    ("# [Bug]: deploying bge-m3 fails : Failed to apply for memory. Check the remaining storage space in the hardware "
     "environment.\n", "npu_oom", None),
    # vLLM 0.2-0.5's worker cache check (vllm/worker/worker.py raise_if_cache_size_invalid)
    ("The model's max seq len (8192) is larger than the maximum number of tokens that can be stored in KV cache (4512). "
     "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n",
     "vllm_cache", None),
    # libtpu's compiler: the memory-space overflow without its status prefix, the early abort, the report's first line
    ('# JAX / Flax pipeline: "Ran out of memory in memory space hbm." on TPU v2-8\n', "xla_oom", None),
    ("E0000 00:00:1721980017.350017     952 tpu_compilation_cache_external.cc:112] Compilation failure: Aborting "
     "compilation early because it's unlikely to have enough memory. Requires 1.31T, has 14.71G available.\n", "xla_oom", None),
    ("Total hbm usage >= 11.47G:\n    reserved        530.00M \n    program          10.96G \n", "xla_oom", None),
    # ComfyUI's execution.py tip under a node's out-of-memory error
    ("DiffusersMVSampler\nAllocation on device\nThis error means you ran out of memory on your GPU.\n", "cuda_oom", None),
])
def test_allocator_and_runtime_words_of_the_tenth_audit(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    if tried_bytes is None:
        assert ev.tried_gib is None
    else:
        assert ev.tried_gib is not None and round(ev.tried_gib * GIB) == tried_bytes


@pytest.mark.parametrize("text", [
    # Go's os/exec names a SIGKILLed child "signal: killed"; ollama wraps it
    "Error: llama runner process has terminated: signal: killed\n",
    # Colab's runtime notice for a kernel killed for host memory
    'After several minutes, I receive the message: "Your session crashed after using all available RAM."\n',
    # torch elastic's exit report with its tail cut off by the paste
    "E0307 09:44:47.121000 11566 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) l\n",
])
def test_supervisor_kills_of_the_tenth_audit(tmp_path, text):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == "host_oom"


@pytest.mark.parametrize("text", [
    # Go's exit status for other signals is not a kill for memory
    "Error: llama runner process has terminated: signal: bus error (core dumped)\n",
    "Error: llama runner process has terminated: signal: aborted (core dumped)\n",
    # torch elastic's report of an ordinary failure
    "E0307 09:44:47.121000 11566 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) l\n",
    # DeepSpeed's launcher cleaning up after a C assert() aborted a child (glibc assert/assert.c's words)
    "python: deepspeed/ops/csrc/aio/common/deepspeed_aio_common.cpp:125: int _do_io_complete(): Assertion "
    "`n_completes >= min_completes' failed.\n[2023-12-31 02:55:09,375] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 302\n",
])
def test_exits_that_are_not_memory_kills(tmp_path, text):
    assert one(tmp_path, text).primary is None


@pytest.mark.parametrize("text,phase", [
    # k-diffusion's sampler statement (k_diffusion/sampling.py) under a title naming the class
    ("# [Bug]: OutOfMemoryError after updating to newer versions\n\n"
     "        denoised = model(x, sigmas[i] * s_in, **extra_args)\n"
     '      File "/sd/modules/sd_samplers_cfg_denoiser.py", line 237, in forward\n'
     "        x_out = self.inner_model(x_in, sigma_in, cond=make_condition_dict(cond_in, image_cond_in))\n", "generate"),
    # transformers' load warning, the last thing printed under a title's message
    ("# OutOfMemoryError: CUDA out of memory (WHY?)\n\nLatentDiffusion: Running in eps-prediction mode\n"
     "Some weights of the model checkpoint at openai/clip-vit-large-patch14 were not used when initializing "
     "CLIPTextModel: ['vision_model.embeddings.class_embedding']\n", "load"),
])
def test_phase_cues_of_the_tenth_audit(tmp_path, text, phase):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None


@pytest.mark.parametrize("text,phase", [
    # a title's message over the run's log without a traceback: the log's last lines are nearest to the failure
    ("# [Bug]: profile_run leads to gpu OutOfMemoryError\n\n```\n"
     "INFO 08-07 07:11:25 model_runner.py:722] Starting to load model ./models/Qwen-7B-Chat...\n"
     "INFO 08-07 07:11:28 model_runner.py:736] Loading model weights took 14737.2578 MB\n"
     "INFO 08-07 07:11:31 gpu_executor.py:103] # GPU blocks: 7877, # CPU blocks: 512\n\nProcessed prompts:   0%|\n", "generate"),
    ("# Llama-3.2-11B-Vision-Instruct CUDA error: out of memory\n\n```\n"
     "Loading checkpoint shards: 100%|██████████| 2/2 [01:50<00:00, 55.48s/it]\n"
     "{'loss': 4.548, 'grad_norm': 6.786200523376465, 'learning_rate': 4e-05, 'epoch': 0.06}\n", "train"),
    # Forge's LoRA-patching bar (backend/patcher/lora.py) before its caught OOM
    ("Patching LoRAs for KModel:  59%|█████▉    | 179/304 [00:02<00:02, 48.13it/s]\n"
     "ERROR lora diffusion_model.w CUDA out of memory. Tried to allocate 144.00 MiB. GPU \n", "load"),
    # TF1 Keras' optimizer updates under training/<Optimizer>/
    ("Error: OOM when allocating tensor with shape [3,3,512,2048] and type float on /job:localhost\n"
     "[[{{node training/adam/mul_73}} Mul[T=DT_float]\n", "optimizer"),
])
def test_phase_from_the_last_lines_bars_and_nodes_of_the_tenth_audit(tmp_path, text, phase):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None


def test_a_jupyterlab_linked_ipython_frame_is_a_frame(tmp_path):
    # JupyterLab copies IPython 8's `File <path>:<line>, in <func>` with the path as a link
    ev = one(tmp_path, "File [~/.local/lib/python3.10/site-packages/diffusers/models/attention_processor.py:599]"
                       "(http://192.168.50.251:8888/lab/tree/attention_processor.py#line=598), in "
                       "Attention.get_attention_scores(self, query, key, attention_mask)\n"
                       "--> 599 attention_scores = torch.baddbmm(\n\n"
                       "OutOfMemoryError: CUDA out of memory. Tried to allocate 3.96 GiB. GPU 0 has a total capacity of "
                       "44.32 GiB of which 25.75 MiB is free.\n").primary
    assert ev is not None and ev.phase == "forward" and ev.phase_evidence is not None


@pytest.mark.parametrize("text,phase", [
    # the statement that raised, pasted without its indent (or opening an inline code span) right above the message
    ("`denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)\ntorch.cuda.OutOfMemoryError: CUDA out of memory. "
     "Tried to allocate 3.14 GiB (GPU 5; 31.75 GiB total capacity; 28.28 GiB already allocated; 1.95 GiB free; 28.28 GiB "
     "reserved in total by PyTorch)\n", "optimizer"),
    # ComfyUI's dialog: the sampling node's type, then its out-of-memory tip
    ("DiffusersMVSampler\nAllocation on device\nThis error means you ran out of memory on your GPU.\n", "generate"),
    # a diffusers pipeline's __call__ under a title quoting XLA's words
    ('# "Ran out of memory in memory space hbm." on TPU v2-8\n\nTraceback (most recent call last):\n'
     '  File "bulk_infer_jax.py", line 102, in main\n    images = pipe(prompt_ids, p_params, rng, jit=True).images\n'
     '  File "/usr/local/lib/python3.7/dist-packages/diffusers/pipelines/stable_diffusion/pipeline_flax_stable_diffusion.py", '
     'line 275, in __call__\n', "generate"),
])
def test_statements_nodes_and_pipelines_of_the_tenth_audit(tmp_path, text, phase):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None


def test_a_sentence_above_a_message_is_not_its_statement(tmp_path):
    ev = one(tmp_path, "When I run it I get this\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                       "2.00 MiB (GPU 0; 4.00 GiB total capacity; 3.41 GiB already allocated; 0 bytes free)\n").primary
    assert ev is not None and ev.phase is None


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # tt-metal's allocator (tt_metal/impl/allocator/bank_manager.cpp) under its check macro, and the same words quoted
    # in a sentence next to a link whose file name says OOM
    ("TT_FATAL: Out of Memory: Not enough space to allocate 1879048192 B DRAM buffer across 8 banks,\n"
     "where each bank needs to store 234881024 B, but bank size is 4272341376 B\n", "cuda_oom", 1879048192),
    ("- the transformer fails with `Out of Memory: Not enough space to allocate 12180258816 B DRAM buffer across 8 banks, "
     "where each bank needs to store 1522532352 B` - [run.log](https://example.org/files/1/run_OOM.log)\n",
     "cuda_oom", 12180258816),
    # GNU MP's default allocator, both of its reports (gmp memory.c)
    ("`2356it [00:56, 48.63it/s]GNU MP: Cannot allocate memory (size=800296713216048)`\n", "host_oom", 800296713216048),
    ("GNU MP: Cannot reallocate memory (old_size=8 new_size=17179869184)\n", "host_oom", 17179869184),
    # a TPU's other memory spaces than HBM, with and without the status
    ("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack for %kernel = bf16[2048,4096]\n",
     "xla_oom", None),
    ("# Ran out of memory in memory space vmem on TPU v5e\n", "xla_oom", None),
    # THC's report retyped without its spaces, as torch's FAQ heading quotes it
    ("My model reports “cuda runtime error(2): out of memory”\n", "cuda_oom", None),
])
def test_allocator_words_of_the_eleventh_audit(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    if tried_bytes is None:
        assert ev.tried_gib is None
    else:
        assert ev.tried_gib is not None and abs(ev.tried_gib * (1 << 30) - tried_bytes) <= 1


@pytest.mark.parametrize("text", [
    # a person telling what happened, in a contraction or with a possessive, above a log cut before any message
    "I'm trying to train a 7B PPO model on 4*40G A100s, but I'm encountering an OOM error:\n",
    "My OOM error: \n",
    "We've got an OOM error: since the update\n",
])
def test_a_persons_report_in_a_contraction_or_a_possessive_is_not_a_failure(tmp_path, text):
    assert one(tmp_path, text).primary is None


@pytest.mark.parametrize("text,phase", [
    # a loss module's frames are called forward; torch/nn/modules/loss.py says what they compute
    ('  File "/repo/utils.py", line 403, in compute_loss\n    lobj += BCEobj(pi[..., 4], tobj)  # obj loss\n'
     '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 722, in _call_impl\n'
     '    result = self.forward(*input, **kwargs)\n'
     '  File "/usr/lib/python3/site-packages/torch/nn/modules/loss.py", line 631, in forward\n'
     '    reduction=self.reduction)\n'
     'RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 15.90 GiB total capacity; 14.37 GiB already '
     'allocated; 1.88 MiB free; 15.03 GiB reserved in total by PyTorch)\n', "loss"),
    # Caffe2's parameter-initialisation net, run once before training
    ('  File "/data/u/Detectron/detectron/utils/train.py", line 143, in create_model\n'
     '    workspace.RunNetOnce(model.param_init_net)\n'
     'RuntimeError: [enforce fail at event_gpu.cc:17] error == cudaSuccess. 2 vs 0. Error at: event_gpu.cc:17: '
     'out of memory\n', "load"),
])
def test_phase_cues_of_the_eleventh_audit(tmp_path, text, phase):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None


def test_a_proposed_message_under_an_expected_behavior_section_is_not_a_failure(tmp_path):
    proposal = ("## Current Error\n\n```\nLoading model weights took 27.5376 GB\nAvailable KV cache memory: -0.87 GiB\n```\n\n"
                "## Expected Behavior\n\n```\nERROR: Insufficient GPU memory for KV cache.\n  Model weights:  27.54 GB\n```\n")
    assert one(tmp_path, proposal).primary is None
    # the same words under the section for what happened are the run's own
    actual = proposal.replace("## Expected Behavior", "### Actual Behavior")
    assert one(tmp_path, actual).primary is not None
    # and an allocator's own message is a failure in any section
    torch_words = proposal.replace("ERROR: Insufficient GPU memory for KV cache.",
                                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    assert one(tmp_path, torch_words).primary.kind == "cuda_oom"


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # cudaMallocAsync's refusal cut after its first words, as ComfyUI's report and a title keep it
    ("- **Exception Message:** Allocation on device \n", "cuda_oom", None),
    ("# KSampler Allocation on device\n", "cuda_oom", None),
    # DirectML's refusal, as printed and as a user retyped it with the digits masked
    ("RuntimeError: Could not allocate tensor with 268435456 bytes. There is not enough GPU video memory available!\n",
     "cuda_oom", 268435456),
    ("could not allocate tensor with 489484499xxxx bytes. there is not enogh gpu video memory avaible\n", "cuda_oom", None),
    # a child killed by SIGKILL, reported by its parent as a negative exit code
    ("❌ Training failed with exit code -9\n", "host_oom", None),
    # CPython's MemoryError without text, closing a traceback
    ('  File "/env/lib/python3.7/site-packages/numpy/core/shape_base.py", line 283, in vstack\n'
     '    return _nx.concatenate([atleast_2d(_m) for _m in tup], 0)\nMemoryError\n', "host_oom", None),
    # vLLM's start-up check quoted without its figures
    ("# vLLMAsyncRollout _loop_forever error: Free memory on device on startup is less than desired GPU memory "
     "utilization (0.8)\n", "vllm_cache", None),
])
def test_allocator_words_of_the_twelfth_audit(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    if tried_bytes is None:
        assert ev.tried_gib is None
    else:
        assert ev.tried_gib is not None and abs(ev.tried_gib * (1 << 30) - tried_bytes) <= 1


def test_vllm_start_up_check_keeps_its_figures_when_printed(tmp_path):
    ev = one(tmp_path, "ValueError: Free memory on device (14.2/79.19 GiB) on startup is less than desired GPU memory "
                       "utilization (0.9, 71.27 GiB). Decrease GPU memory utilization\n").primary
    assert ev.kind == "vllm_cache" and abs(ev.capacity_gib - 79.19) < 1e-9 and abs(ev.tried_gib - 71.27) < 1e-9


@pytest.mark.parametrize("text", [
    # a step of a list with its subject left out, and a title that relates a cause to the failure
    "5) Ran: `accelerate launch -m axolotl.cli.train examples/mistral/config.yml` again and got the same out of memory "
    "error:\n",
    "# NT-Xent loss causing CUDA OOM: trying to allocate 120GB memory\n",
    # MemoryError with a message is the library's, read by the words of that message, not as CPython's bare class
    "MemoryError: Execution finished\n",
    # DeepSpeed's launcher killing its children, its error line (the one with the return code) cut before the code
    "[INFO] [launch.py:315:sigkill_handler] Killing subprocess 179742\n"
    "[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=0', '--outpu\n",
])
def test_look_alikes_of_the_twelfth_audit_are_not_failures(tmp_path, text):
    assert one(tmp_path, text).primary is None


def test_a_launcher_kill_without_its_error_line_still_stands(tmp_path):
    ev = one(tmp_path, "Parameter Offload: Total persistent parameters: 643072 in 194 params\n"
                       "[2023-10-20 12:49:31,065] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 179742\n").primary
    assert ev is not None and ev.kind == "host_oom"


@pytest.mark.parametrize("text,phase", [
    # vLLM's multiprocessing executor names the worker method that failed (multiproc_worker_utils.py): start-up loads,
    # the execution loop serves; the line follows the message
    ("(VllmWorkerProcess pid=195295) ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] torch.OutOfMemoryError: CUDA "
     "out of memory. Tried to allocate 20.00 MiB. GPU 2 has a total capacity of 14.62 GiB of which 3.31 MiB is free.\n"
     "(VllmWorkerProcess pid=195297) ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] Exception in worker "
     "VllmWorkerProcess while processing method load_model.\n", "load"),
    ("(VllmWorkerProcess pid=486731) ERROR 03-19 10:55:18 [multiproc_worker_utils.py:242] torch.OutOfMemoryError: CUDA "
     "out of memory. Tried to allocate 128.00 MiB. GPU 2 has a total capacity of 79.33 GiB of which 16.00 MiB is free.\n"
     "(VllmWorkerProcess pid=486730) ERROR 03-19 10:55:18 [multiproc_worker_utils.py:242] Exception in worker "
     "VllmWorkerProcess while processing method start_worker_execution_loop.\n", "generate"),
    # ollama's runner start before the weights load, under a title quoting the failure
    ("# CUDA out of memory\n\n```\noct 11 15:40:08 desktop-pc ollama[32302]: 2023/10/11 15:40:08 llama.go:313: starting "
     "llama runner\noct 11 15:40:08 desktop-pc ollama[32302]: 2023/10/11 15:40:08 ll\n", "load"),
    # a TF1 session error's node outside gradients/ and training/ is one of the model's own (forward) ops
    ("  (0) RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[32,4,4096,4096] and type float on "
     "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n\t [[{{node attention_augmentation2d_7/MatMul}}]]\n",
     "forward"),
    # the statement that raised, pasted with one space of its indent, or a `return` of a call
    (" attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)\n"
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.23 GiB (GPU 0; 23.70 GiB total capacity; "
     "14.43 GiB already allocated; 7.99 GiB free; 14.71 GiB reserved in total by PyTorch)\n", "forward"),
    ("return torch._C._nn.upsample_nearest2d(input, output_size, scale_factors)\nRuntimeError: CUDA out of memory. Tried "
     "to allocate 180.00 MiB (GPU 0; 10.92 GiB total capacity; 9.74 GiB already allocated; 57.56 MiB free; 9.90 GiB "
     "reserved in total by PyTorch)\n", "forward"),
    # torch.einsum's frame, a contraction like matmul and bmm
    ('File "/usr/local/lib/python3.10/dist-packages/torch/functional.py", line 378, in einsum\n'
     "    return _VF.einsum(equation, operands)  # type: ignore[attr-defined]\ntorch.cuda.OutOfMemoryError: CUDA out of "
     "memory. Tried to allocate 64.00 GiB (GPU 0; 14.75 GiB total capacity; 3.82 GiB already allocated; 10.50 GiB free; "
     "3.94 GiB reserved in total by PyTorch)\n", "forward"),
    # an issue's title, then the same failure (no figures either) under the statement that raised it
    ("# CUDA error: out of memory\n\nWhen I run following code\n```python\ny = na2d(x)\n```\n\nBut OOM:\n```shell\n"
     "attn = attn.softmax(dim=-1)\nRuntimeError: CUDA error: out of memory\n```\n", "forward"),
])
def test_worker_methods_runner_starts_nodes_and_statements_of_the_thirteenth_audit(tmp_path, text, phase):
    report = one(tmp_path, text)
    ev = report.primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None
    assert len(report.events) == 1


def test_a_worker_exception_in_another_method_names_no_phase_of_its_own(tmp_path):
    # a method the worker runs for neither start-up nor serving says nothing (vllm/worker/worker.py add_lora)
    ev = one(tmp_path, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
                       "capacity of 14.62 GiB of which 3.31 MiB is free.\nException in worker VllmWorkerProcess while "
                       "processing method add_lora.\n").primary
    assert ev is not None and ev.phase is None


def test_tensorflows_status_words_in_a_titles_capitals_are_its_failure(tmp_path):
    ev = one(tmp_path, "# Resource Exhausted Error while converting Darknet model in keras model.\n\n"
                       "Traceback (most recent call last):\n  File \"yad2k.py\", line 270, in <module>\n").primary
    assert ev is not None and ev.kind == "tf_oom"


def test_a_keras_layers_weights_set_at_its_first_call_are_loading(tmp_path):
    # tf.keras' Layer.__call__ builds the layer and sets its initial weights (engine/base_layer.py set_weights)
    ev = one(tmp_path, "# Resource Exhausted Error while converting Darknet model in keras model.\n\n"
                       "Traceback (most recent call last):\n  File \"yad2k.py\", line 186, in _main\n"
                       "    padding=padding))(prev_layer)\n"
                       '  File "/usr/local/lib/python3.6/dist-packages/tensorflow/python/keras/engine/base_layer.py", '
                       "line 688, in __call__\n    self.set_weights(self._initial_weights)\n"
                       '  File "/usr/local/lib/python3.6/dist-packages/tensorflow/python/keras/engine/base_layer.py", '
                       "line 1114, in set_weights\n    param_values = backend.batch_get_value(params)\n").primary
    assert ev is not None and ev.kind == "tf_oom" and ev.phase == "load" and ev.phase_evidence is not None


@pytest.mark.parametrize("text,phase", [
    # SGLang's overlap scheduler runs the served batches' forward in a thread of its own
    ('Traceback (most recent call last):\n  File "/env/lib/python3.12/site-packages/sglang/srt/managers/'
     'tp_worker_overlap_thread.py", line 111, in forward_thread_func\n'
     "    with torch.get_device_module(self.device).stream(self.forward_stream):\n"
     '  File "/env/lib/python3.12/site-packages/torch/cuda/__init__.py", line 618, in _set_stream_by_id\n'
     "    torch._C._cuda_setStream(\nRuntimeError: CUDA error: out of memory\n", "generate"),
    # a layer's functional op, the statement alone above the message with one space of its indent
    (" return torch.layer_norm(input, normalized_shape, weight, bias, eps, torch.backends.cudnn.enabled)\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 42.00 MiB (GPU 0; 11.99 GiB total capacity; 10.99 GiB already "
     "allocated; 0 bytes free; 11.17 GiB reserved in total by PyTorch)\n", "forward"),
    # TF1's device creation logged last: without allow_growth the allocator's first region is the whole limit
    ("2018-04-09 16:56:09.242389: I T:\\src\\github\\tensorflow\\tensorflow\\core\\common_runtime\\gpu\\gpu_device.cc:1041] "
     "Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 8192 MB memory) -> physical GPU "
     "(device: 0, name: GeForce GTX 1070, pci bus id: 0000:01:00.0, compute capability: 6.1)\n"
     "2018-04-09 16:56:09.249227: E T:\\src\\github\\tensorflow\\tensorflow\\stream_executor\\cuda\\cuda_driver.cc:936] "
     "failed to allocate 8.00G (8589934592 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY\n", "load"),
    # a traceback whose newlines were lost in an inline code span, no `Traceback` header: its frames before the message
    ('`  File "/root/miniconda3/lib/python3.9/site-packages/torch/nn/modules/module.py", line 1051, in _call_impl    '
     'return forward_call(*input, **kwargs)  File "/root/miniconda3/lib/python3.9/site-packages/torch/nn/functional.py", '
     "line 1679, in softmax    ret = input.softmax(dim)RuntimeError: CUDA out of memory. Tried to allocate 3\n", "forward"),
    # nothing before the message; the loop's bar, closed after the error report, names the loop (Lightning's predict)
    ("RuntimeError: CUDA out of memory. Tried to allocate 9.59 GiB (GPU 0; 15.72 GiB total capacity; 11.27 GiB already "
     "allocated; 2.76 GiB free; 11.31 GiB reserved in total by PyTorch)\n\n"
     "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\nPredicting:   0%|\n", "eval"),
    # a kill quoted in a title over a run whose last output is SimpleTuner's latent-cache bar
    ("# Sometimes training process dies with Signals.SIGKILL 9\n\n```\n"
     "2024-08-05 21:25:46,727 [INFO] (DataBackendFactory) (id=pseudo-camera-10k-flux) Creating VAE latent cache.\n"
     "Processing bucket 1.0:   5%|██▉       | 710/14080 [17:22<5:41:32,  1.53s/it]\n", "data"),
])
def test_serving_threads_layer_ops_device_creation_glued_frames_and_bars_of_the_fourteenth_audit(tmp_path, text, phase):
    report = one(tmp_path, text)
    ev = report.primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None
    assert len(report.events) == 1


@pytest.mark.parametrize("after", [
    "  5%|███▌      | 500/10000 [02:24<45:46,  3.46it/s]\n",            # unnamed: any loop's
    "Predicting: 100%|██████████| 428/428 [04:33<00:00,  1.24it/s]\n",   # finished: not the loop the failure left
])
def test_a_bar_after_the_message_names_its_loop_only_unfinished_and_by_its_description(tmp_path, after):
    ev = one(tmp_path, "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.78 GiB total capacity; "
                       "1.83 GiB already allocated; 8.38 MiB free; 1.91 GiB reserved in total by PyTorch)\n" + after).primary
    assert ev is not None and ev.phase is None


def test_a_subprocess_death_by_sigkill_retyped_in_a_title_is_a_kill(tmp_path):
    ev = one(tmp_path, "# Sometimes training process dies with Signals.SIGKILL 9\n").primary
    assert ev is not None and ev.kind == "host_oom"


@pytest.mark.parametrize("text", [
    # torch elastic's own shutdown of a process that ignored SIGTERM
    "torch.distributed.elastic.multiprocessing.api: [WARNING] Unable to shutdown process 4242 via Signals.SIGTERM, "
    "forcefully exiting via Signals.SIGKILL\n",
    # the enum named in code
    "    os.kill(pid, signal.Signals.SIGKILL)\n",
])
def test_sigkill_by_name_without_a_death_is_no_kill(tmp_path, text):
    assert one(tmp_path, text).primary is None


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # MLX refuses a buffer over the device's maximum before allocating (mlx/backend/metal/allocator.cpp)
    ("RuntimeError: [metal::malloc] Attempting to allocate 17179869184 bytes which is greater than the maximum allowed "
     "buffer size of 14302248960 bytes.\n", "mlx_oom", 17179869184),
    # c10's MapAllocator could not map a file for lack of memory (errno 12), quoted in an issue's title
    ("# RuntimeError: unable to mmap 23802932552 bytes from file <./flux1-dev.safetensors>: Cannot allocate memory (12)\n",
     "host_oom", 23802932552),
])
def test_failure_words_of_the_fifteenth_audit(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    assert ev.tried_gib is not None and abs(ev.tried_gib * GIB - tried_bytes) <= 1


@pytest.mark.parametrize("text", [
    # the same call failing for another reason is no memory failure (c10/core/MapAllocator.cpp's strerror)
    "RuntimeError: unable to mmap 1048576 bytes from file </dev/shm/torch_1>: Permission denied (13)\n",
    # a buffer MLX was asked for and gave is no refusal
    "[metal::malloc] Resource limit (499000) exceeded.\n",
])
def test_look_alikes_of_the_fifteenth_audit(tmp_path, text):
    assert one(tmp_path, text).primary is None


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # the JVM's own heap (java.lang.OutOfMemoryError), Android's runtime stating the request (art/runtime/gc/heap.cc)
    ('I get this error "java.lang.OutOfMemoryError: Failed to allocate a 260498336 byte allocation with 16765168 free '
     'bytes and 241MB until OOM". Any advice?\n', "host_oom", 260498336),
    ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n', "host_oom", None),
    # numpy keeps the point of a three-digit size (`f'{n:#.3g}'`): 967. MiB
    ('MemoryError: "Unable to allocate 967. MiB for an array with shape (2, 1025, 61804) and data type complex64"\n',
     "host_oom", 967 << 20),
    # a Python bytes object and a serialised message are built in the host's heap
    ("RuntimeError: Could not allocate bytes object!\n", "host_oom", None),
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: Failed to allocate memory to serialize message of "
     "type 'tensorflow.GraphDef' and size 6104292306\n", "host_oom", None),
    # IOGPU's command-buffer error code quoted in a sentence names MLX's Metal failure by itself
    ("LoRA training fails with a hard Metal-level OOM (`kIOGPUCommandBufferCallbackErrorOutOfMemory`) at 1024 tokens.\n",
     "mlx_oom", None),
    # strerror(ENOMEM) quoted in an issue's title
    ("# 训练时内存会随着训练步数增多而增大，直到占满内存报错 Cannot allocate memory\n\nsome prose\n", "host_oom", None),
])
def test_host_and_metal_words_of_the_sixteenth_audit(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    assert (None if ev.tried_gib is None else round(ev.tried_gib * GIB)) == tried_bytes


def test_a_title_that_names_no_device_takes_the_kind_of_the_report_under_it(tmp_path):
    # the grammar's CUDA is a guess when the title's words name no memory; the app's report under it names RAM
    report = one(tmp_path, "# [Bug]: Out of Memory\n\n**Interpreted Error:**\n"
                           "Out of Memory: Your device ran out of RAM. This usually happens with very large files.\n")
    assert [e.kind for e in report.events] == ["host_oom"]


def test_strerror_in_a_title_that_asks_is_not_a_failure(tmp_path):
    assert one(tmp_path, "# Why do I get Cannot allocate memory?\n\nsome prose\n").primary is None


@pytest.mark.parametrize("text,phase,evidence_line", [
    # a server's ready line: what fails after it fails while serving (uvicorn's `Uvicorn running on`, mistral.rs)
    ("Loading model on Cuda(CudaDevice(DeviceId(1)))...\nModel loaded.\nServing on http://0.0.0.0:1234.\n"
     "thread '<unnamed>' panicked at src/pipeline/mistral.rs:409:17:\n"
     "Model failed with error `DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")`. Please raise an issue.\n",
     "generate", 3),
    # a native stack under a title: the autograd kernel of an op (VariableType) runs in the forward pass ...
    ("# what(): CUDA out of memory.\n\n#21   Object \"libtorch_cpu.so\", at 0x7f6b, in torch::autograd::VariableType::"
     "(anonymous namespace)::addmm(c10::DispatchKeySet, at::Tensor const&)\n", "forward", 3),
    # ... the engine's evaluate_function in the backward pass
    ("# what(): CUDA out of memory.\n\n#9    Object \"libtorch_cpu.so\", at 0x7f6b, in torch::autograd::Engine::"
     "evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&)\n", "backward", 3),
    # ComfyUI's VAEDecode node decodes the sampled latents: the end of the generation
    ("# VAEDecode Allocation on device\n\n"
     '  File "F:\\ComfyUI\\execution.py", line 163, in process_inputs\n    results.append(getattr(obj, func)(**inputs))\n'
     '  File "F:\\ComfyUI\\nodes.py", line 287, in decode\n    images = vae.decode(samples["samples"])\n', "generate", 5),
    # a loss printed as a pair or under a longer key is a training log line; a command's argument is no save
    ("# 报错 Cannot allocate memory\n\n++train_conf.save_checkpoint_interval=2000 \\\n"
     "- train, rank: 0, epoch: 0/50, (loss_avg_rank: 0.332), [('loss', 0.332)]\n", "train", 4),
])
def test_phase_cues_of_the_sixteenth_audit(tmp_path, text, phase, evidence_line):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.phase == phase
    assert ev.phase_evidence is not None and ev.phase_evidence.line == evidence_line


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # the TPU runtime refusing one buffer against a memory space's size, in bytes (openxla error_1001)
    ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Allocation (size=8589934592) would exceed memory "
     "(size=4294967296) :: #allocation3 [shape = 'f32[1024,2097152]{1,0}', space=hbm]\n", "xla_oom", 8 << 30),
    # CANN's driver record of the failed request (devmm's bytesize)
    ("[ERROR] DRV(901,python3):2024-01-02-03:04:05.000.001 [ascend][drv][devmm][devmm_alloc_managed 126]<errno:12, 6> "
     "heap_alloc_managed out of memory, pp=0x1, bytesize=2147483648.\n", "npu_oom", 2 << 30),
    # torch's class and its request on one line with the middle elided by a writer
    ("  - Error: `torch.cuda.OutOfMemoryError ... Tried to allocate 12.50 GiB`\n", "cuda_oom", int(12.5 * (1 << 30))),
])
def test_requests_of_the_twentieth_audit_are_read_to_the_byte(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    assert ev.tried_gib is not None and round(ev.tried_gib * GIB) == tried_bytes


def test_torch_bracketed_statistics_on_rocm_give_the_cards_figures(tmp_path):
    # torch 2.0's ROCm build prints the CUDA allocator's bracketed statistics with HIP as the backend
    ev = one(tmp_path, "torch.cuda.OutOfMemoryError: HIP out of memory. Tried to allocate 20.00 MiB (GPU 1; 15.98 GiB "
                       "total capacity; 6.51 GiB already allocated; 4.53 GiB free; 11.39 GiB reserved in total by "
                       "PyTorch)\n").primary
    assert ev is not None and ev.kind == "hip_oom" and ev.device == 1
    assert (ev.capacity_gib, ev.allocated_gib, ev.free_gib) == (15.98, 6.51, 4.53)
    assert round(ev.tried_gib * GIB) == 20 << 20


@pytest.mark.parametrize("text,tried_bytes,free_bytes,device", [
    # Paddle's allocator (cuda_allocator.cc), its sizes by HumanReadableSize: "%f" and a 1024-based unit
    ("Out of memory error on GPU 1. Cannot allocate 56.000000MB memory on GPU 1, 7.782776GB memory has been allocated "
     "and available memory is only 12.750000MB.\n", 56 << 20, int(12.75 * (1 << 20)), 1),
    # system_allocator.cc's form without the "has been allocated" clause, after its op's glog line
    ("W0223 18:59:36.058634 11348 operator.cc:179] lookup_table raises an exception paddle::memory::allocation::BadAlloc, \n\n"
     "Out of memory error on GPU 0. Cannot allocate 1.500000kB memory on GPU 0, available memory is only 0.000000B.\n",
     1536, 0, 0),
    # a title keeping the head only
    ("# Out of memory error on GPU 0. Cannot allocate 7.781267GB memory on GPU 0\n", round(7.781267 * (1 << 30)), None, 0),
])
def test_paddles_allocator_message_is_read_with_its_request(tmp_path, text, tried_bytes, free_bytes, device):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == "cuda_oom" and ev.device == device
    assert round(ev.tried_gib * GIB) == tried_bytes
    assert (None if ev.free_gib is None else round(ev.free_gib * GIB)) == free_bytes
    # the "has been allocated" figure is every process's use of the card: never this process's allocation
    assert ev.allocated_gib is None


@pytest.mark.parametrize("op,phase", [("lookup_table", "forward"), ("matmul_v2_grad", "backward"), ("adam", "optimizer")])
def test_the_paddle_op_that_raised_names_the_phase(tmp_path, op, phase):
    ev = one(tmp_path, f"W0223 18:59:36.058634 11348 operator.cc:179] {op} raises an exception "
                       "paddle::memory::allocation::BadAlloc, \n\nOut of memory error on GPU 0. Cannot allocate "
                       "6.933594GB memory on GPU 0, available memory is only 726.750000MB.\n").primary
    assert ev is not None and ev.phase == phase and ev.phase_evidence is not None


@pytest.mark.parametrize("text,kind", [
    ("# java OutOfMemoryError: heap space\n", "host_oom"),
    ("Exception in thread \"main\" OutOfMemoryError: GC overhead limit exceeded\n", "host_oom"),
    ("# torch.cuda.OutOfMemoryError: CUDA out of memory\n", "cuda_oom"),
])
def test_the_jvms_class_is_told_by_its_language_or_its_detail_message(tmp_path, text, kind):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind


def test_an_iso_date_and_time_on_every_line_is_a_collectors_stamp(tmp_path):
    lines = ['  File "/w/zipvoice/models/modules/scaling.py", line 334, in softmax',
             "    return SoftmaxFunction.apply(x, dim)",
             '  File "/w/zipvoice/models/modules/scaling.py", line 308, in forward',
             "    ans = x.softmax(dim=dim)",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.72 GiB. GPU 0 has a total capacity of "
             "79.18 GiB of which 12.89 GiB is free."]
    ev = one(tmp_path, "".join(f"2025-10-27 18:45:39 {x}\n" for x in lines)).primary
    assert ev is not None and ev.phase == "forward" and ev.phase_evidence is not None
    assert ev.line == 5


@pytest.mark.parametrize("intro,phase", [("and now I get `CUDA out of memory` error:", "forward"),
                                         ("and now I get `CUDA out of memory` error.", None)])
def test_a_sentence_ending_in_a_colon_announces_the_traceback_under_it(tmp_path, intro, phase):
    text = (f"{intro}\n```\nTraceback (most recent call last):\n"
            '  File "/w/train.py", line 9, in <module>\n    train_step(batch)\n'
            '  File "/w/layers.py", line 943, in forward\n    out = self._forward_impl(x)\n```\n')
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == "cuda_oom" and ev.phase == phase
