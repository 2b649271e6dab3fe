"""Call sites that say which part of a run was going on, by framework: the taxonomy phase.py reads.

Each row is (phase, framework, kind, pattern, where it comes from):

- func: a function name in a traceback frame header (`File "...", line N, in NAME`, rich's `path:N in
  NAME`, IPython's `in NAME(...)`); matched as a whole word anywhere in the frame lines;
- path: a module path in a frame header (`site-packages/torch/distributed/fsdp/...`);
- stmt: a source statement printed under a frame, or alone in a pasted fragment;
- line: a log line the run prints around the failure: a C/C++ library's function-prefixed report
  (`llama_model_load: error loading model`), a progress or banner line (`Starting to load model`), a
  TensorFlow node name (`[[node gradient_tape/.../Conv2DBackpropInput]]`).

phase.py adds these rows to its own cue lists (its _FRAME_CUES and _EVENTS keep the cues the earlier
fixtures were built on); the phase rules (outer phases over step phases inside one traceback; the cue
nearest to the failure among the lines before and after it) are phase.py's.
"""
from __future__ import annotations

CALLSITES: tuple[tuple[str, str, str, str, str], ...] = (
    # ---- vLLM / SGLang serving loops: the model runs for generation (vllm/v1/engine/core.py,
    # vllm/engine/async_llm_engine.py, vllm/entrypoints/llm.py, sglang/srt/managers/tp_worker.py)
    ("generate", "vLLM", "func", "run_busy_loop", "vllm/v1/engine/core.py EngineCoreProc.run_busy_loop"),
    ("generate", "vLLM", "func", "_process_engine_step", "vllm/v1/engine/core.py"),
    ("generate", "vLLM", "func", "engine_step", "vllm/engine/async_llm_engine.py AsyncLLMEngine.engine_step"),
    ("generate", "vLLM", "func", "step_async", "vllm/engine/async_llm_engine.py _AsyncLLMEngine.step_async"),
    ("generate", "vLLM", "func", "run_engine_loop", "vllm/engine/async_llm_engine.py"),
    ("generate", "vLLM", "func", "_run_engine", "vllm/entrypoints/llm.py LLM._run_engine (LLM.generate's loop)"),
    ("generate", "vLLM", "func", "execute_model_with_error_logging", "vllm/v1/engine/core.py EngineCore.step"),
    ("generate", "SGLang", "func", "forward_batch_generation", "sglang/srt/managers/tp_worker.py"),
    ("generate", "SGLang", "func", "event_loop_normal", "sglang/srt/managers/scheduler.py"),
    ("generate", "SGLang", "func", "event_loop_overlap", "sglang/srt/managers/scheduler.py"),
    # the overlap scheduler runs each batch's forward in a thread of its own (TpModelWorkerClient.forward_thread_func ->
    # forward_thread_func_, a loop over the scheduler's input queue calling forward_batch_generation)
    ("generate", "SGLang", "func", "forward_thread_func", "sglang/srt/managers/tp_worker_overlap_thread.py TpModelWorkerClient"),
    ("generate", "SGLang", "func", "forward_thread_func_", "sglang/srt/managers/tp_worker_overlap_thread.py TpModelWorkerClient"),
    ("generate", "vLLM", "line", r"Engine loop is not running|EngineCore encountered an issue", "vllm engine-dead errors"),
    ("generate", "vLLM", "func", "output_handler", "vllm/v1/engine/async_llm.py AsyncLLM.output_handler (the server's loop over EngineCore outputs)"),
    ("forward", "PyTorch", "line", r"\btorch::autograd::VariableType::",
     "torch/csrc/autograd/generated/VariableType_*.cpp: the autograd kernel of each op records the graph as the op "
     "runs, so a native stack frame in it (backward-cpp's `#N Object ..., in ...`, gdb's `#N ... in ...`) is a forward op"),
    ("backward", "PyTorch", "line", r"\btorch::autograd::(?:Engine::(?:evaluate_function|thread_main|execute)|"
                                    r"generated::\w+Backward\d*::apply)\b",
     "torch/csrc/autograd/engine.cpp Engine::thread_main / evaluate_function and the generated backward nodes "
     "(generated/Functions.cpp `XBackward0::apply`): a native frame in them is the backward pass"),
    ("generate", "vLLM", "line", r"AsyncLLM output_handler failed", "vllm/v1/engine/async_llm.py AsyncLLM.output_handler's error log"),
    ("generate", "TGI", "line", r"\bbatch\{batch_size=\d+\}:(?:prefill|decode)\b",
     "text-generation-inference router/src/infer: the batching task's `batch` tracing span and its `prefill` and "
     "`decode` child spans, which name the serving step a shard's error came back from"),
    ("generate", "ComfyUI", "func", "common_ksampler", "ComfyUI nodes.py: KSampler and KSamplerAdvanced sample through it"),
    ("generate", "ComfyUI", "path", r"comfy/samplers\.py\"?, line \d+, in \w*sample\b|comfy_extras/nodes_custom_sampler\.py",
     "ComfyUI comfy/samplers.py (KSampler.sample, CFGGuider.sample) and the custom sampler nodes: the diffusion sampling loop"),
    ("generate", "ComfyUI", "line", r"Error occurred when executing (?:KSampler\w*|SamplerCustom\w*|VAEDecode\w*):|"
                                    r"Node Type:\W*(?:KSampler\w*|SamplerCustom\w*|VAEDecode\w*)\b|^\s*(?:KSampler(?:Advanced)?|SamplerCustom(?:Advanced)?)\s*$",
     "ComfyUI execution.py's error line and its error report's node type (app/logger, the frontend's dialog title): "
     "KSampler, KSamplerAdvanced, SamplerCustom and SamplerCustomAdvanced are its sampling nodes; VAEDecode and "
     "VAEDecodeTiled (nodes.py) turn the sampled latents into the image, the last step of the same generation"),
    ("generate", "ComfyUI", "path", r"ComfyUI[/\\]nodes\.py\"?, line \d+, in decode\b",
     "ComfyUI nodes.py: VAEDecode and VAEDecodeTiled run through `decode` (their FUNCTION), the VAE decode that turns "
     "the sampled latents into the image, the last step of the same generation (as their error line above reads)"),
    ("generate", "SD.Next", "path", r"modules[/\\]processing_diffusers\.py",
     "vladmandic/sdnext modules/processing_diffusers.py (process_diffusers, process_base): its diffusers pipeline run "
     "for a txt2img or img2img request, as processing.py's process_images is for the A1111 web UI"),
    ("generate", "uvicorn", "func", "run_asgi",
     "uvicorn/protocols/http/h11_impl.py and httptools_impl.py RequestResponseCycle.run_asgi: the ASGI app called for "
     "one HTTP request, so a model server's failure under it happened while a request was being served"),
    ("generate", "verl", "line", r"ray::WorkerDict\.\w*generate_sequences\b",
     "verl/single_controller/ray/base.py: a fused worker's method is named role_method (actor_rollout_generate_sequences), "
     "ActorRolloutRefWorker.generate_sequences being the rollout. Ray names a worker's process `ray::<Actor>.<method>` "
     "while the task runs (python/ray/_raylet.pyx execute_task, setproctitle), and its memory monitor's kill report "
     "lists the top memory users by that command line (`PID  MEM(GB)  COMMAND`), so the name counts without the call's "
     "parenthesis too"),
    # verl's vLLM engine wrapper prints `before init cache memory allocated: ...GB, reserved: ...GB` in its
    # _initialize_kv_caches, after the `# GPU blocks` count and right before worker.initialize_cache (verl
    # third_party/vllm llm_engine_sp.py): the rollout engine is allocating its KV cache, a start-up step (load)
    ("load", "verl", "line", r"\bbefore init cache memory allocated:",
     "verl/third_party/vllm/*/llm_engine_sp.py LLMEngine._initialize_kv_caches (before worker.initialize_cache)"),
    # ONNX Runtime's executor reports the node whose kernel failed: `Non-zero status code returned while running
    # <OpType> node. Name:'...'` (onnxruntime/core/framework/sequential_executor.cc ExecuteKernel); the arena's
    # `Failed to allocate memory for requested buffer of size N` (core/framework/bfc_arena.cc) is its status message.
    # An op of the model's graph runs in its forward pass; ORT training's gradient graph names its ops `<Op>Grad`
    # (orttraining/core/graph/gradient_builder.cc), which run in the backward pass
    ("backward", "ONNX Runtime", "line", r"\bwhile running \w+Grad node\b",
     "onnxruntime/core/framework/sequential_executor.cc ExecuteKernel; orttraining gradient_builder.cc `<Op>Grad` ops"),
    ("forward", "ONNX Runtime", "line", r"\bNon-zero status code returned while running \w+ node\b",
     "onnxruntime/core/framework/sequential_executor.cc ExecuteKernel: a graph node's kernel in an inference session"),
    ("generate", "vLLM", "line", r"\bAborted request(?:\(s\))? \S",
     "vllm/engine/async_llm_engine.py and vllm/v1/engine/async_llm.py log `Aborted request <id>` when a served "
     "request fails or is cancelled (vllm-omni's async_omni.py `Aborted request(s) [...]`): a request was being generated"),
    ("generate", "text-generation-webui", "line", r"\bOutput generated in \d+(?:\.\d+)? seconds \(",
     "text-generation-webui modules/text_generation.py generate_reply_HF / generate_reply_custom log `Output generated "
     "in N seconds (...)` in their finally block, after a failed generation's exception too: a reply was being generated"),
    ("generate", "stable-diffusion-webui", "line", r"^\*{3} Error completing request\b|^\*{3} Arguments: \('task\(",
     "AUTOMATIC1111 stable-diffusion-webui modules/call_queue.py wrap_gradio_call: a failed UI job is reported as "
     "`*** Error completing request` and `*** Arguments: (...)` (modules/errors.py report), the arguments led by the "
     "job's id `task(...)` (modules/progress.py create_task_id) that txt2img and img2img take first: an image generation"),
    ("generate", "InvokeAI", "line", r"^>> Could not generate image\.",
     "InvokeAI 2.x ldm/generate.py Generate.prompt2image: its exception handler prints `>> Could not generate image.` "
     "after the error of a failed generation"),
    ("generate", "gradio", "line", r"\bRunning on (?:local|public) URL:\s+https?://",
     "gradio/blocks.py Blocks.launch prints `Running on local URL:  http://...` (gradio/strings.py RUNNING_LOCALLY) "
     "once the app serves: a failure after it comes from a request (as a server's ready line, phase.py _EVENTS)"),
    ("generate", "ollama", "line", r"\bStarting llama main loop\b|\[GIN\][^\n]*\bPOST\s+\"?/api/(?:chat|generate)\b",
     "ollama llm/dyn_ext_server.go (0.1.x) logs `Starting llama main loop` once the runner serves, and its gin router "
     "logs each request (`[GIN] ... POST \"/api/chat\"`, server/routes.go ChatHandler, GenerateHandler): what fails "
     "after them fails answering a request"),
    ("eval", "mmcv / mmdet", "line", r"\[[>\s]*\] \d+/\d+, [\d.]+ task/s, elapsed: \d+s, ETA:",
     "mmcv/utils/progressbar.py ProgressBar.update: `[>>>   ] n/N, x task/s, elapsed: Ns, ETA: Ms`, the bar of "
     "mmdet/apis/test.py single_gpu_test and multi_gpu_test that mmdet's EvalHook runs after an epoch (mmdet/core/"
     "evaluation/eval_hooks.py): the model is being evaluated"),
    ("generate", "stable-diffusion-webui", "func", "process_images",
     "AUTOMATIC1111 stable-diffusion-webui modules/processing.py: txt2img and img2img generate through it"),
    ("generate", "ComfyUI", "line", r"^\s*[A-Z][A-Za-z0-9]*Sampler(?:Advanced)?\s*$",
     "ComfyUI's error dialog (copied as text) opens with the failed node's type on its own line; nodes of its sampling "
     "category name themselves <Name>Sampler (KSampler, DiffusersMVSampler) and run the diffusion sampling loop"),
    ("generate", "diffusers", "path", r"diffusers/pipelines/\S+/pipeline_\w+\.py\"?, line \d+, in __call__\b",
     "diffusers' pipelines run their denoising loop in __call__ (src/diffusers/pipelines/*/pipeline_*.py, the Flax "
     "ones included): a failure under it is image generation"),
    ("generate", "stable-diffusion-webui", "func", "launch_sampling", "stable-diffusion-webui modules/sd_samplers*.py: the sampling loop"),
    ("generate", "k-diffusion", "stmt", r"denoised = model\(x, sigmas\[i\] \* s_in\b",
     "crowsonkb/k-diffusion k_diffusion/sampling.py: every sample_* sampler calls the denoiser once per sigma step with "
     "this statement (the web UI's samplers run through it)"),
    ("generate", "stable-diffusion-webui", "path", r"modules[/\\]sd_samplers_cfg_denoiser\.py",
     "stable-diffusion-webui modules/sd_samplers_cfg_denoiser.py CFGDenoiser.forward: called by the sampler at each step"),
    ("generate", "vLLM", "line", r"^\s*Processed prompts:\s",
     "vllm/entrypoints/llm.py LLM._run_engine: the tqdm bar of LLM.generate (desc=\"Processed prompts\")"),
    ("load", "transformers", "line", r"Some weights of the model checkpoint at \S+ were not used when initializing",
     "transformers modeling_utils.py _load_pretrained_model: its warning after loading a checkpoint into the model"),
    # ---- start-up of an inference engine: weights, KV cache, profiling, CUDA graphs (load)
    ("load", "vLLM", "func", "capture_model", "vllm/v1/worker/gpu_model_runner.py GPUModelRunner.capture_model"),
    ("load", "vLLM", "func", "_capture_cudagraphs", "vllm/v1/worker/gpu_model_runner.py"),
    ("load", "vLLM", "func", "determine_available_memory", "vllm/v1/worker/gpu_worker.py"),
    ("load", "vLLM", "func", "initialize_from_config", "vllm/v1/worker/gpu_worker.py"),
    ("load", "vLLM", "func", "_dummy_run", "vllm/v1/worker/gpu_model_runner.py (profiling and capture)"),
    ("load", "vLLM", "func", "_allocate_kv_cache", "vllm/worker/cache_engine.py"),
    ("load", "vLLM", "stmt", r"with torch\.cuda\.graph\(cudagraph\b",
     "vllm/compilation/backends.py and cuda_graph.py: the capture branch of its CUDA-graph wrapper (replay calls "
     "cudagraph.replay()), which runs while the engine starts"),
    ("load", "vLLM", "line", r"Starting to load model|Loading safetensors checkpoint shards|Capturing CUDA graphs?\b|"
                             r"Capturing cudagraphs\b|"
                             r"Loading weights took|is assigned as DP rank", "vllm start-up log lines"),
    ("load", "ComfyUI", "line", r"Node Type:\W*[A-Z]\w*Loader\w*\b",
     "ComfyUI's error report names the failed node's type (`- **Node Type:** CheckpointLoaderSimple`); its loader nodes "
     "(nodes.py CheckpointLoaderSimple, VAELoader, LoraLoader, UNETLoader, CLIPLoader) are named <Name>Loader and read "
     "a model onto the device"),
    ("load", "llama.cpp", "line", r"^\s*(?:llama_model_load|llama_model_loader|load_tensors|llm_load_tensors|llama_new_context_with_model|"
                                  r"llama_init_from_model|llama_context|llama_kv_cache_init|llama_kv_cache|graph_reserve|sched_reserve|"
                                  r"ggml_gallocr_reserve_n\w*|alloc_tensor_range|common_init_from_params|load_model|"
                                  # the loader's metadata report while it reads the model file (llama-model.cpp
                                  # print_info; llm_load_print_meta before it was renamed)
                                  r"print_info|llm_load_print_meta):",
     "llama.cpp src/llama-model.cpp, src/llama-context.cpp, ggml/src/ggml-alloc.c: function-prefixed reports"),
    ("load", "TGI", "line", r"\bdownload: text_generation_launcher\b|Successfully downloaded weights\b|Starting (?:check and )?download process\b",
     "text-generation-inference launcher/src/main.rs download_convert_model: the launcher fetches and converts the "
     "weights in its `download` span before spawn_shards starts the shards that load them (`Shard ready` ends it): "
     "the server's start-up"),
    ("load", "TGI", "line", r"Unable to warmup model|\bwarmup\{|\bWarmup\(|Not enough memory to handle \d+ prefill tokens",
     "text-generation-inference: server/.../flash_causal_lm.py FlashCausalLM.warmup, router's warmup span and "
     "'Unable to warmup model' (router/src/main.rs): the start-up's largest prefill"),
    ("load", "TGI", "path", r"(?:text_generation|lorax)_server/models/\w+\.py\"?, line \d+, in warmup\b",
     "text-generation-inference server/text_generation_server/models/flash_causal_lm.py FlashCausalLM.warmup "
     "(and LoRAX's fork of it): the frame that runs the start-up prefill, above whatever it calls"),
    # vLLM's multiprocessing executor runs one worker method at a time on every worker and logs a worker's failure
    # with the method's name (vllm/executor/multiproc_worker_utils.py _run_worker_process: "Exception in worker %s
    # while processing method %s."): vllm/worker/worker.py's start-up methods load, its loop serves requests
    ("load", "vLLM", "line", r"Exception in worker \S+ while processing method (?:init_device|load_model|"
                             r"determine_num_available_blocks|initialize_cache|_warm_up_model|profile_run|init_worker)\b",
     "vllm/executor/multiproc_worker_utils.py _run_worker_process; vllm/worker/worker.py Worker.init_device, "
     "load_model, determine_num_available_blocks, initialize_cache, _warm_up_model"),
    ("generate", "vLLM", "line", r"Exception in worker \S+ while processing method (?:start_worker_execution_loop|execute_model)\b",
     "vllm/executor/multiproc_worker_utils.py; vllm/worker/worker_base.py LocalOrDistributedWorkerBase."
     "start_worker_execution_loop and execute_model: a served step"),
    # ollama starts a runner process per model and logs it before the runner loads the weights: llm/llama.go
    # `log.Print("starting llama runner")` (0.1.x), llm/server.go `slog.Info("starting llama server", ...)` (0.2+)
    ("load", "ollama", "line", r"\bstarting llama (?:runner|server)\b",
     "ollama llm/llama.go newLlama and llm/server.go NewLlamaServer: the runner that loads the model is started"),
    ("load", "vLLM", "func", "_init_workers", "vllm/engine/llm_engine.py LLMEngine._init_workers (v0): starts the workers, which load the model"),
    ("load", "vLLM", "func", "from_engine_args", "vllm/engine/llm_engine.py LLMEngine.from_engine_args: builds the engine, model and cache"),
    ("load", "lmdeploy", "func", "_create_weight_func", "lmdeploy/turbomind/turbomind.py: allocates each GPU's share of the weights"),
    ("load", "lmdeploy", "func", "create_shared_weights", "lmdeploy/turbomind/turbomind.py _create_weight_func's call into TurboMind"),
    ("load", "mmengine / xtuner", "func", "build_model", "mmengine/_strategy/base.py BaseStrategy.build_model: builds the model from its config"),
    ("load", "Megatron-LM / DeepSpeed", "line", r"initializing (?:tensor |pipeline )?model parallel|> initializing model parallel",
     "megatron/core/parallel_state.py banner"),
    # ---- moving and wrapping a model (load): .to()/.cuda() go through Module._apply -> convert
    ("load", "torch", "func", "convert", "torch/nn/modules/module.py Module.to's inner convert"),
    ("load", "torch", "func", "_cuda_deserialize", "torch/serialization.py (torch.load to a GPU)"),
    ("load", "torch", "func", "default_restore_location", "torch/serialization.py"),
    ("load", "accelerate", "func", "dispatch_model", "accelerate/big_modeling.py"),
    ("load", "transformers", "func", "replace_with_bnb_linear", "transformers/integrations/bitsandbytes.py"),
    ("load", "bitsandbytes", "func", "quantize_4bit", "bitsandbytes/functional.py (Params4bit.cuda)"),
    ("load", "FSDP", "func", "fully_shard", "torch/distributed/fsdp (FSDP2 wrapping)"),
    ("load", "accelerate", "func", "fsdp2_prepare_model", "accelerate/utils/fsdp_utils.py"),
    ("load", "FSDP", "path", "fsdp/fully_sharded_data_parallel.py\", line \\d+, in __init__", "FSDP1 wrapping"),
    ("load", "FSDP", "path", r"ly_sharded_data_parallel\.py:\d+ in __init__", "FSDP1 wrapping, as rich prints the frame"),
    ("load", "FSDP", "func", "_auto_wrap", "torch/distributed/fsdp/_wrap_utils.py (wrapping at construction)"),
    ("load", "transformers", "func", "_load_best_model", "transformers/trainer.py"),
    ("load", "transformers", "func", "load_sharded_checkpoint", "transformers/modeling_utils.py"),
    ("load", "PEFT", "func", "inject_adapter", "peft/tuners/tuners_utils.py"),
    ("load", "CompVis latent diffusion", "func", "load_model_from_config",
     "scripts/txt2img.py and main.py of CompVis stable-diffusion and its textual-inversion forks: builds the model from a checkpoint"),
    # ---- data loading (data): a DataLoader worker's death surfaces in the main process's SIGCHLD handler
    ("data", "torch", "func", "_try_get_data", "torch/utils/data/dataloader.py _MultiProcessingDataLoaderIter"),
    ("data", "torch", "func", "_try_get_batch", "torch/utils/data/dataloader.py (torch <= 1.1)"),
    ("data", "torch", "line", r"DataLoader worker \(pid(?:\(s\))? [\d, ]+\) (?:is killed by signal|exited unexpectedly)",
     "torch/utils/data/_utils/signal_handling.py and dataloader.py: the process that died is a DataLoader worker"),
    # ---- saving (save)
    ("save", "torch DCP / FSDP", "func", "get_model_state_dict", "torch/distributed/checkpoint/state_dict.py"),
    ("save", "torch DCP / FSDP", "func", "get_optimizer_state_dict", "torch/distributed/checkpoint/state_dict.py"),
    ("save", "accelerate", "func", "save_fsdp_model", "accelerate/utils/fsdp_utils.py"),
    ("save", "DeepSpeed", "func", "save_16bit_model", "deepspeed/runtime/engine.py"),
    # ---- TensorFlow op names: TF1 puts backward ops under gradients/, TF2's GradientTape under gradient_tape/
    ("backward", "TensorFlow", "line", r"\[\[\{?\{?[Nn]ode:? (?:\S*/)?(?:gradients|gradient_tape)/", "tensorflow python/ops/gradients_util.py, backprop.py"),
    ("backward", "TensorFlow", "stmt", r"\b\w+Backprop(?:Input|Filter)\b|_grad/", "tensorflow op names of gradient kernels"),
    ("optimizer", "Keras", "line", r"\[\[\{?\{?[Nn]ode:? training/[A-Za-z]\w*/(?!\S*gradients/)",
     "TF1 Keras builds its update ops under name_scope('training') then the optimizer's class name "
     "(keras/engine/training.py _make_train_function: `training/Adam/mul_73`); its gradients sit under .../gradients/"),
    ("backward", "TensorFlow", "line", r"\[Op:\w+(?:Grad|Backprop\w*)\]",
     "TF2 eager names the failed op at the error's end, ` [Op:NAME]` (tensorflow/python/framework/ops.py "
     "raise_from_not_ok_status); gradient kernels are registered as <Op>Grad or <Op>Backprop* (StridedSliceGrad, ReluGrad)"),
    # ... and every other node the error names is one of the model's own ops, which the forward graph holds (TF1's
    # session error `[[{{node attention/MatMul}}]]`, tensorflow/python/client/session.py _do_call's message)
    ("forward", "TensorFlow", "line", r"\[\[\{?\{?[Nn]ode:? (?!\S*(?:gradients|gradient_tape)/)(?!training/)[A-Za-z_][\w.-]*(?:/[\w.-]+)*\}?\}?\]\]",
     "tensorflow/python/client/session.py: the failed node by its name scope; gradients/ and training/ are above"),
    # TF logs the session's GPU device as it creates it and its BFC allocator (core/common_runtime/gpu/gpu_device.cc
    # BaseGPUDeviceFactory::CreateGPUDevice: "Created TensorFlow device (... with N MB memory) -> physical GPU");
    # without allow_growth the allocator's first region is the whole limit (bfc_allocator.cc: curr_region_allocation_
    # bytes_ starts at memory_limit, Extend retries at 90%), so a failure nearest to that line is the start-up's
    ("load", "TensorFlow", "line", r"Created TensorFlow device \(",
     "tensorflow core/common_runtime/gpu/gpu_device.cc BaseGPUDeviceFactory::CreateGPUDevice"),
    ("forward", "Lua Torch", "line", r"\.lua:\d+: in function '(?:\w+_updateOutput|updateOutput|forward)'",
     "Lua's `stack traceback:` frames (`file.lua:N: in function 'NAME'`); torch/nn Module:forward calls updateOutput, "
     "THNN's kernels are <Module>_updateOutput"),
    ("backward", "torch", "line", r"Variable\._execution_engine\.run_backward\(|C\+\+ engine to run the backward pass",
     "torch/autograd/__init__.py and graph.py: the statement (and its comment) that enters the C++ autograd engine, "
     "printed under the frame, or alone when a paste kept only the line above the message"),
    ("backward", "Lua Torch", "line", r"\.lua:\d+: in function '(?:\w+_updateGradInput|\w+_accGradParameters|updateGradInput|accGradParameters|backward)'",
     "torch/nn Module:backward calls updateGradInput and accGradParameters"),
    ("load", "Caffe2", "stmt", r"\bparam_init_net\b",
     "caffe2/python/model_helper.py ModelHelper.param_init_net: the net of parameter initializers (fills, loaded "
     "weights) that Detectron and other Caffe2 trainers run once, `workspace.RunNetOnce(model.param_init_net)`, "
     "before the training net"),
    ("loss", "torch", "path", r"torch[/\\]nn[/\\]modules[/\\]loss\.py",
     "torch/nn/modules/loss.py defines every loss module (CrossEntropyLoss, BCEWithLogitsLoss, MSELoss, ...): its "
     "frames, whatever their function is called (`forward`), compute a loss"),
    # PaddlePaddle's executors log the op an exception came out of before rethrowing it: LOG(WARNING) << Type() << " raises
    # an exception " << demangle(typeid(ex).name()) << ", " << ex.what() (paddle/fluid/framework/operator.cc
    # OperatorBase::Run; new_executor/interpretercore.cc the same, `raises an EnforceNotMet exception` for its own
    # checks). A gradient op's type is its forward op's with `_grad` appended (GradOpMaker, `lookup_table_grad`,
    # `matmul_v2_grad_grad`), the optimizers' update ops carry the optimizer's name (`adam`, `sgd`, `momentum`: ops/
    # optimizers/), and every other op is the model's forward computation (`lookup_table`, `matmul_v2`, `softmax`).
    ("backward", "PaddlePaddle", "line", r"(?:\.cc:\d+\]\s+|^\s*)\w+_grad\w* raises an (?:EnforceNotMet |unknown )?exception\b",
     "paddle/fluid/framework/operator.cc OperatorBase::Run: a `_grad` op is the backward pass"),
    ("optimizer", "PaddlePaddle", "line",
     r"(?:\.cc:\d+\]\s+|^\s*)(?:merged_|fused_)?(?:adam|adamw|adamax|sgd|momentum|lars_momentum|lamb|rmsprop|adagrad|adadelta|ftrl|"
     r"dgc_momentum|dpsgd|decayed_adagrad|proximal_gd|proximal_adagrad) raises an (?:EnforceNotMet |unknown )?exception\b",
     "paddle/fluid/operators/optimizers/ (and phi's kernels of the same names): the parameter update ops"),
    ("forward", "PaddlePaddle", "line",
     r"(?:\.cc:\d+\]\s+|^\s*)(?!\w*_grad\b)(?!(?:merged_|fused_)?(?:adam|adamw|adamax|sgd|momentum|lars_momentum|lamb|rmsprop|adagrad|"
     r"adadelta|ftrl|dgc_momentum|dpsgd|decayed_adagrad|proximal_gd|proximal_adagrad) )\w+ raises an (?:EnforceNotMet |unknown )?exception\b",
     "paddle/fluid/framework/operator.cc OperatorBase::Run: any other op is the model's forward computation"),
)


def words(phase: str, kind: str) -> tuple[str, ...]:
    return tuple(p for ph, _fw, k, p, _src in CALLSITES if ph == phase and k == kind)
