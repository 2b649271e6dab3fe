"""Which phase a traceback frame means, from its module's place in a framework and its function's name.

A frame header names a module path and a function (`File ".../site-packages/torch/optim/adamw.py", line 12, in
_multi_tensor_adamw`). The frameworks lay their code out by what it does: everything under `torch/optim/` runs in
an optimizer step, under `torch/autograd/` in a backward pass, under `transformers/generation/` in generate. So a
frame is placed by a row of MODULES: a module path (a regex matched from the framework's top package, as installed)
and a class of function names in it (a regex matched whole), the first row that matches wins, and a row whose phase
is None says the function names nothing (a decorator's wrapper, a collective used by every phase). A function no
row lists but that lives in a placed module is still placed: the rows are by module and name class, not by line.

The rows were written against the frameworks' source (installed torch, transformers, accelerate, peft,
safetensors; git checkouts of DeepSpeed, trl, LLaMA-Factory, ms-swift, torchtune, axolotl, unsloth, OpenRLHF,
Liger-Kernel, litgpt). benchmarks/callsite_inventory.py lists every function the source defines in the modules the
rows name (tests/data/callsites/inventory.tsv), and tests/test_crashlog_taxonomy.py checks the rows against it:
how much of each module a row places, and that a module's functions land only in that module's phases.

The phases are phase.py's; its rules combine the frames of a stack (an outer phase anywhere wins over a step
phase; within each, the frame nearest to the failure).
"""
from __future__ import annotations

import re
from functools import cache, lru_cache

from oomdoctor.lazyre import LazyPattern, lazy_re, required_literals, top_level_split

_ANY = r".*"
# a function of a loading, saving or data module that is not itself a forward or backward pass (a hook attached
# at load time runs in every later forward: accelerate/big_modeling.py's _self_attn_pre_forward_hook)
_NOT_A_PASS = r"(?!\w*(?:forward|backward))\w+"

# Top packages whose layout the rows know. The rightmost path component that is one of them starts the module path
# (a source checkout `.../transformers/src/transformers/trainer.py` is the package's `transformers/trainer.py`).
PACKAGES = ("torch", "transformers", "accelerate", "peft", "trl", "deepspeed", "bitsandbytes", "safetensors",
            "vllm", "llamafactory", "swift", "torchtune", "axolotl", "unsloth", "unsloth_zoo", "openrlhf",
            "liger_kernel", "litgpt", "lightning", "pytorch_lightning", "flash_attn", "diffusers", "megatron",
            "colossalai", "mmengine", "keras", "tf_keras", "tensorflow",
            # the image and chat UIs: ComfyUI's library package, and the `modules/` folder the A1111 web UI, its Forge
            # fork and text-generation-webui each keep their code in (rows name its files one by one)
            "comfy", "modules")

# (module path regex from the top package, function name regex matched whole, phase or None, where it comes from)
MODULES: tuple[tuple[str, str, str | None, str], ...] = (
    # a finalizer runs whenever its object is collected, whatever the run is doing (torch/utils/data/dataloader.py
    # _MultiProcessingDataLoaderIter.__del__ -> _shutdown_workers, after the failure has already been raised)
    (r"\S+\.py", r"__del__|_shutdown_workers", None,
     "torch/utils/data/dataloader.py _MultiProcessingDataLoaderIter.__del__"),
    # a schedule that runs both passes names neither: its inner frames say which one failed (Megatron's
    # megatron/core/pipeline_parallel/schedules.py forward_backward_no_pipelining, DeepSpeed's pipe _exec_schedule)
    (r"\S+\.py", r"\w*forward_backward\w*|\w*fwd_bwd\w*|_exec_schedule", None,
     "megatron/core/pipeline_parallel/schedules.py forward_backward_*; deepspeed/runtime/pipe/engine.py _exec_schedule"),
    # a backward pass by its name, wherever it is defined (torch/autograd/function.py Function.backward, DeepSpeed's
    # _post_backward_module_hook, FSDP's _pre_backward_hook, a fused kernel's backward); registering a hook is not one
    (r"\S+\.py", r"(?!register_)\w*backward\w*", "backward",
     "torch/autograd/function.py, deepspeed/runtime/zero/parameter_offload.py, torch/distributed/fsdp/_runtime_utils.py"),
    # the Hugging Face convention every framework here follows: from_pretrained loads, save_pretrained saves
    # (transformers/modeling_utils.py, configuration_utils.py, peft/peft_model.py, diffusers/models/modeling_utils.py)
    (r"\S+\.py", r"(?:\w+_)?from_pretrained|_load_pretrained_model", "load", "transformers/modeling_utils.py from_pretrained"),
    (r"\S+\.py", r"save_pretrained\w*|_save_pretrained\w*", "save", "transformers/modeling_utils.py save_pretrained"),
    # ---------------------------------------------------------------- torch
    (r"torch/optim/\w+\.py", r"load_state_dict|_process_value_according_to_param_policy|_load_state_dict_\w+", "load",
     "torch/optim/optimizer.py Optimizer.load_state_dict: a checkpoint's optimizer state moved to the parameters' devices"),
    (r"torch/optim/\w+\.py", r"state_dict", "save", "torch/optim/optimizer.py Optimizer.state_dict"),
    (r"torch/optim/lr_scheduler\.py", r"wrapper", "optimizer",
     "torch/optim/lr_scheduler.py LRScheduler.__init__ patches opt.step with wrap_step's wrapper, which calls the step"),
    (r"torch/optim/swa_utils\.py", r"forward", "forward", "torch/optim/swa_utils.py AveragedModel.forward: the averaged model's"),
    (r"torch/optim/(?:lr_scheduler|swa_utils)\.py", _ANY, None,
     "torch/optim/lr_scheduler.py, swa_utils.py: a schedule's step and SWA's update_bn run outside the update"),
    (r"torch/optim/", _ANY, "optimizer", "torch/optim/*.py: Optimizer.step, _init_group, the foreach/fused/single-tensor kernels"),
    (r"torch/autograd/(?:grad_mode|profiler\w*|forward_ad|anomaly_mode)\.py", _ANY, None,
     "torch/autograd/grad_mode.py: no_grad/enable_grad decorators wrap any call (generation runs under no_grad)"),
    (r"torch/autograd/function\.py", r"forward", "forward", "torch/autograd/function.py: a custom Function's forward"),
    (r"torch/autograd/function\.py", r"\w*backward\w*|_functorch_\w*", "backward",
     "torch/autograd/function.py BackwardCFunction.apply calls the Function's backward"),
    (r"torch/autograd/function\.py", _ANY, None, "torch/autograd/function.py Function.apply runs in forward and backward"),
    (r"torch/autograd/_functions/", r"forward", "forward", "torch/autograd/_functions/tensor.py: Functions' forward"),
    (r"torch/autograd/", _ANY, "backward", "torch/autograd/__init__.py backward/grad, graph.py _engine_run_backward"),
    (r"torch/_tensor\.py", r"backward", "backward", "torch/_tensor.py Tensor.backward"),
    (r"torch/nn/(?:modules|parallel|utils)/\w+\.py",
     r"_apply|to|to_empty|cuda|xpu|npu|mps|half|bfloat16|float|double|convert|load_state_dict|_load_from_state_dict|"
     r"_load_state_dict_\w*|load|_sync_module_states|_sync_params_and_buffers|_verify_\w+|_broadcast_coalesced", "load",
     "torch/nn/modules/module.py Module._apply/to/cuda (its inner convert), load_state_dict; "
     "parallel/distributed.py DistributedDataParallel.__init__'s _sync_module_states and _verify_param_shape_*"),
    (r"torch/nn/modules/\w+\.py", r"state_dict|_save_to_state_dict", "save", "torch/nn/modules/module.py Module.state_dict"),
    (r"torch/nn/modules/module\.py", r"_call_impl|_wrapped_call_impl|__call__|forward|_forward_unimplemented", "forward",
     "torch/nn/modules/module.py Module.__call__ -> _wrapped_call_impl -> _call_impl -> forward"),
    (r"torch/nn/modules/module\.py", _ANY, None, "torch/nn/modules/module.py: registration and traversal helpers"),
    (r"torch/nn/modules/(?:loss|linear_cross_entropy)\.py", _ANY, "loss",
     "torch/nn/modules/loss.py: every *Loss module's forward; linear_cross_entropy.py: the fused linear + loss"),
    (r"torch/nn/functional\.py",
     r"\w*_loss|cross_entropy|binary_cross_entropy\w*|nll_loss|kl_div|log_softmax|ctc_loss|poisson_nll_loss", "loss",
     "torch/nn/functional.py: the loss functions (cross_entropy -> log_softmax, nll_loss)"),
    (r"torch/nn/functional\.py", _ANY, "forward", "torch/nn/functional.py: layers' functional forms"),
    (r"torch/nn/modules/", _ANY, "forward", "torch/nn/modules/*.py: each layer's forward and its helpers"),
    (r"torch/nn/parallel/distributed\.py", r"__init__", "load",
     "torch/nn/parallel/distributed.py DistributedDataParallel.__init__ broadcasts the model's states"),
    (r"torch/nn/parallel/distributed\.py", r"\w*forward\w*|_rebuild_buckets|_sync_buffers", "forward",
     "torch/nn/parallel/distributed.py DistributedDataParallel.forward -> _run_ddp_forward"),
    (r"torch/nn/parallel/(?:data_parallel|parallel_apply|replicate|scatter_gather|comm)\.py", _ANY, "forward",
     "torch/nn/parallel/data_parallel.py DataParallel.forward: scatter, replicate, parallel_apply, gather"),
    (r"torch/nn/utils/clip_grad\.py", _ANY, "optimizer", "torch/nn/utils/clip_grad.py clip_grad_norm_: before the step"),
    (r"torch/utils/checkpoint\.py", r"\w*backward\w*|recompute\w*|\w*unpack\w*|_run_fn_with_dynamo_disabled", "backward",
     "torch/utils/checkpoint.py: CheckpointFunction.backward and the non-reentrant unpack hook recompute the forward"),
    (r"torch/utils/checkpoint\.py", r"forward|checkpoint|_checkpoint_without_reentrant\w*|\w*pack_hook", "forward",
     "torch/utils/checkpoint.py checkpoint -> CheckpointFunction.forward"),
    (r"torch/utils/data/", _NOT_A_PASS, "data", "torch/utils/data/: DataLoader iterators, fetchers, collate"),
    (r"torch/serialization\.py", r"save|_save|_legacy_save|_open_zipfile_writer|\w*_writer\w*", "save",
     "torch/serialization.py torch.save"),
    (r"torch/serialization\.py", _NOT_A_PASS, "load", "torch/serialization.py torch.load: _load, persistent_load, restore_location"),
    (r"torch/_utils\.py", r"_rebuild_\w+|_cuda|_to", "load", "torch/_utils.py: unpickling rebuilds tensors, Storage.cuda"),
    (r"torch/hub\.py", r"load\w*", "load", "torch/hub.py load, load_state_dict_from_url"),
    (r"torch/(?:cuda/)?amp/grad_scaler\.py", r"step|_maybe_opt_step|unscale_|_unscale_grads_|update", "optimizer",
     "torch/amp/grad_scaler.py GradScaler.step unscales, checks for inf, then calls the optimizer's step"),
    (r"torch/distributed/(?:_composable/)?fsdp/(?:_fully_shard/)?\w*(?:init|wrap)\w*\.py", _NOT_A_PASS, "load",
     "torch/distributed/fsdp/_init_utils.py, _wrap_utils.py, wrap.py: wrapping and sharding at construction"),
    (r"torch/distributed/(?:_composable/)?fsdp/(?:_fully_shard/)?\w*\.py",
     r"\w*post_backward\w*|\w*pre_backward\w*|_reduce_grad\w*|foreach_reduce\w*|_finalize_params|\w*backward_prefetch\w*|"
     r"_post_reduce_grad_callback|_accumulate_sharded_grad|_div_if_needed|_cast_grad_to_param_dtype\w*", "backward",
     "torch/distributed/fsdp/_runtime_utils.py and _fully_shard/_fsdp_param_group.py: backward hooks reduce-scatter the gradients"),
    (r"torch/distributed/(?:_composable/)?fsdp/(?:_fully_shard/)?\w*\.py", r"clip_grad_norm_", "optimizer",
     "torch/distributed/fsdp/fully_sharded_data_parallel.py FSDP.clip_grad_norm_"),
    (r"torch/distributed/(?:_composable/)?fsdp/(?:_fully_shard/)?\w*\.py",
     r"\w*state_dict\w*|\w*optim_state\w*|_gather_\w*state\w*|_full_\w*|_sharded_\w*|_local_\w*", "save",
     "torch/distributed/fsdp/_state_dict_utils.py and _optim_utils.py: state-dict hooks gather the full state to save it"),
    (r"torch/distributed/(?:_composable/)?fsdp/(?:_fully_shard/)?\w*\.py", r"__init__|fully_shard|_init_\w*|init_\w*|_lazy_init|lazy_init|"
     r"_auto_wrap|_wrap\w*|_move_\w*to_device\w*|reset_sharded_param|_init_sharded_\w*", "load",
     "torch/distributed/fsdp/fully_sharded_data_parallel.py FSDP.__init__, _fully_shard/_fully_shard.py fully_shard"),
    (r"torch/distributed/(?:_composable/)?fsdp/(?:_fully_shard/)?\w*\.py",
     r"forward|\w*pre_forward\w*|\w*post_forward\w*|_unshard\w*|unshard\w*|wait_for_unshard|_prefetch_\w*|"
     r"foreach_all_gather\w*|_all_gather\w*", "forward",
     "torch/distributed/fsdp: pre-forward hooks unshard (all-gather) a unit's parameters; in backward the backward "
     "hooks above them win"),
    (r"torch/cuda/graphs\.py", r"capture_begin|capture_end|__enter__|__exit__|make_graphed_callables|"
     r"make_graphed_autograd_function|instantiate", "load",
     "torch/cuda/graphs.py: a CUDA graph is captured once, while a run or a serving engine warms up (its replay is not)"),
    (r"torch/(?:_ops|_refs/\w+|_prims/\w+|_meta_registrations|_decomp/\w+|overrides|utils/_device|utils/_contextlib)\.py",
     _ANY, None, "torch/_ops.py OpOverloadPacket.__call__, torch/overrides.py: op dispatch, in every phase"),
    (r"torch/distributed/checkpoint/", r"\w*load\w*|set_\w*state_dict\w*|_load_\w*|_state_dict_fn", "load",
     "torch/distributed/checkpoint/state_dict_loader.py load, state_dict.py set_*state_dict"),
    (r"torch/distributed/checkpoint/", r"\w*save\w*|get_\w*state_dict\w*|_get_\w*state_dict\w*|_gather_\w*", "save",
     "torch/distributed/checkpoint/state_dict_saver.py save, state_dict.py get_*state_dict"),
    (r"torch/distributed/distributed_c10d\.py", r"init_process_group|new_group|_new_process_group_helper", "load",
     "torch/distributed/distributed_c10d.py: process groups are set up before training"),
    (r"torch/_functorch/_aot_autograd/\w+\.py", r"\w*backward\w*|call_compiled_backward", "backward",
     "torch/_functorch/_aot_autograd/runtime_wrappers.py CompiledFunction.backward"),
    # ---------------------------------------------------------------- transformers
    (r"transformers/(?:modeling_utils|core_model_loading|initialization|modeling_gguf_pytorch_utils)\.py",
     r"\w*save\w*|push_to_hub|state_dict|_\w*state_dict_for_save\w*", "save", "transformers/modeling_utils.py save_pretrained"),
    (r"transformers/(?:core_model_loading|initialization|modeling_gguf_pytorch_utils)\.py", _NOT_A_PASS, "load",
     "transformers/core_model_loading.py convert_and_load_state_dict_in_model: the v5 loader"),
    (r"transformers/modeling_utils\.py",
     r"from_pretrained|_from_config|from_config|\w*load\w*|_\w*init\w*|init_weights|initialize_weights|post_init|"
     r"tie_\w*|_tie_\w*|\w*resize_\w*|_get_resized_\w*|caching_allocator_warmup|to|cuda|half|float|_apply|"
     r"set_module_tensor_to_device|dequantize|_move_\w*|_infer_\w*dtype|\w*gradient_checkpointing_enable|"
     r"enable_input_require_grads|__init__|_check_and_adjust_\w*|_autoset_attn_implementation|set_attn_implementation|"
     r"get_\w*memory_footprint|_set_default_dtype|_\w*device_map\w*|\w*quantiz\w*", "load",
     "transformers/modeling_utils.py PreTrainedModel.from_pretrained -> _load_pretrained_model, post_init, tie_weights"),
    (r"transformers/modeling_utils\.py", r"forward|_\w*forward\w*|__call__|get_extended_attention_mask|\w*attention_mask\w*",
     "forward", "transformers/modeling_utils.py: the forward helpers every model calls"),
    (r"transformers/modeling_utils\.py", _ANY, None, "transformers/modeling_utils.py: other helpers"),
    (r"transformers/trainer_pt_utils\.py", r"\w*save\w*", "save", "transformers/trainer_pt_utils.py save_state, save_metrics"),
    (r"transformers/trainer_pt_utils\.py", r"nested_\w*|distributed_concat|\w*concat\w*", "eval",
     "transformers/trainer_pt_utils.py nested_concat: evaluation_loop gathers the predictions"),
    (r"transformers/trainer(?:_seq2seq)?\.py", r"evaluate|_evaluate|evaluation_loop|prediction_loop|prediction_step|predict|"
     r"_\w*eval\w*|\w*evaluat\w*|_gather_and_numpify", "eval",
     "transformers/trainer.py Trainer.evaluate -> evaluation_loop -> prediction_step; trainer_seq2seq.py"),
    (r"transformers/trainer(?:_seq2seq)?\.py", r"\w*save\w*|_rotate_checkpoints|_sorted_checkpoints|_push_from_checkpoint|"
     r"push_to_hub|_tune_save_checkpoint|store_flos", "save",
     "transformers/trainer.py _save_checkpoint -> save_model, _save_optimizer_and_scheduler"),
    (r"transformers/trainer(?:_seq2seq)?\.py", r"\w*load\w*|_move_model_to_device|_wrap_model|__init__|"
     r"create_accelerator_and_postprocess|_activate_neftune|call_model_init|_issue_warnings_after_load|"
     r"_fsdp_qlora_plugin_updates", "load",
     "transformers/trainer.py Trainer.__init__ moves the model to its device; _load_from_checkpoint, _load_best_model"),
    (r"transformers/trainer(?:_seq2seq)?\.py", r"get_batch_samples|\w*dataloader\w*|_get_collator_with_removed_columns|"
     r"_remove_unused_columns|_get_\w*sampler", "data",
     "transformers/trainer.py get_train_dataloader, get_batch_samples"),
    (r"transformers/trainer(?:_seq2seq)?\.py", r"training_step|compute_loss|train|_inner_training_loop|"
     r"_fast_inner_training_loop", "forward",
     "transformers/trainer.py Trainer.train -> _inner_training_loop -> training_step -> compute_loss -> model(**inputs)"),
    (r"transformers/trainer(?:_seq2seq)?\.py", _ANY, None, "transformers/trainer.py: other helpers"),
    (r"transformers/generation/configuration_utils\.py", _ANY, None, "transformers/generation/configuration_utils.py: the config"),
    (r"transformers/generation/", _ANY, "generate",
     "transformers/generation/utils.py GenerationMixin.generate -> _sample/_beam_search; logits processors, candidates"),
    (r"transformers/loss/", _ANY, "loss", "transformers/loss/loss_utils.py ForCausalLMLoss -> fixed_cross_entropy"),
    (r"transformers/integrations/deepspeed\.py", r"deepspeed_init|deepspeed_optim_sched|\w*configure\w*", "zero_init",
     "transformers/integrations/deepspeed.py deepspeed_init: builds the DeepSpeed engine and optimizer"),
    (r"transformers/integrations/deepspeed\.py", r"\w*load\w*", "load", "transformers/integrations/deepspeed.py deepspeed_load_checkpoint"),
    (r"transformers/integrations/(?:bitsandbytes|accelerate|peft|tensor_parallel|finegrained_fp8|mxfp4|hqq|awq|gptq|"
     r"quanto|torchao|fbgemm_fp8|eetq|aqlm|vptq|bitnet|fp_quant|higgs|spqr|compressed_tensors|ggml)\.py",
     r"\w*forward\w*|\w*matmul\w*|\w*gemm\w*", "forward", "transformers/integrations: quantized layers' forward"),
    (r"transformers/integrations/(?:bitsandbytes|accelerate|peft|tensor_parallel|finegrained_fp8|mxfp4|hqq|awq|gptq|"
     r"quanto|torchao|fbgemm_fp8|eetq|aqlm|vptq|bitnet|fp_quant|higgs|spqr|compressed_tensors|ggml)\.py",
     r"\w*(?:replace|load|quantiz|dispatch|convert|init|shard|distribute|device_map|adapter|prepare|_process|"
     r"create|set_|check_and|expand|tie)\w*", "load",
     "transformers/integrations/bitsandbytes.py replace_with_bnb_linear, accelerate.py, peft.py load_adapter, "
     "tensor_parallel.py shard_and_distribute_module: run while the model is loaded"),
    (r"transformers/integrations/(?:sdpa|flash|flex|eager_paged|sdpa_paged|flash_paged|npu_flash|msa)_?\w*\.py", _ANY,
     "forward", "transformers/integrations/sdpa_attention.py, flash_attention.py: attention kernels called by forward"),
    (r"transformers/quantizers/", r"\w*forward\w*", "forward", "transformers/quantizers: quantized layers' forward"),
    (r"transformers/quantizers/", _NOT_A_PASS, "load",
     "transformers/quantizers/*.py: HfQuantizer preprocess/postprocess_model and create_quantized_param run in from_pretrained"),
    (r"transformers/models/[^/]+/modeling_\w+\.py", r"\w*generate\w*|_sample|prepare_inputs_for_generation", "generate",
     "transformers/models/*/modeling_*.py: a model's own generate"),
    (r"transformers/models/[^/]+/modeling_\w+\.py", r"_init_weights|__init__|tie_weights|_tie_\w*|post_init|from_pretrained",
     "load", "transformers/models/*/modeling_*.py: the model built by from_pretrained"),
    (r"transformers/models/[^/]+/modeling_\w+\.py", r"\w*loss\w*", "loss", "transformers/models/*/modeling_*.py: a model's loss"),
    (r"transformers/models/[^/]+/modeling_\w+\.py", _ANY, "forward",
     "transformers/models/*/modeling_*.py: forward, attention, rotary embedding, masks"),
    (r"transformers/(?:modeling_layers|modeling_flash_attention_utils|masking_utils|activations|modeling_rope_utils|"
     r"pytorch_utils)\.py", _ANY, "forward",
     "transformers/modeling_layers.py, masking_utils.py, activations.py: layers and masks the models' forward calls"),
    (r"transformers/pipelines/", r"save\w*|save_pretrained", "save", "transformers/pipelines/base.py Pipeline.save_pretrained"),
    (r"transformers/pipelines/__init__\.py", r"pipeline", "load", "transformers/pipelines/__init__.py pipeline(): loads the model"),
    (r"transformers/pipelines/base\.py", r"__init__|\w*load\w*|infer_framework_load_model", "load",
     "transformers/pipelines/base.py Pipeline.__init__ moves the model to its device"),
    (r"transformers/pipelines/", _ANY, "generate", "transformers/pipelines: __call__ -> run_single -> forward: inference"),
    (r"transformers/data/", _NOT_A_PASS, "data", "transformers/data/data_collator.py: collators"),
    # ---------------------------------------------------------------- accelerate
    (r"accelerate/big_modeling\.py", _NOT_A_PASS, "load", "accelerate/big_modeling.py dispatch_model, load_checkpoint_and_dispatch"),
    (r"accelerate/utils/modeling\.py", r"\w*load\w*|set_module_tensor_to_device|\w*device_map\w*|get_balanced_memory|"
     r"get_max_memory|check_tied_parameters\w*|retie_parameters|\w*offload\w*", "load",
     "accelerate/utils/modeling.py load_checkpoint_in_model -> set_module_tensor_to_device"),
    (r"accelerate/hooks\.py", r"\w*forward\w*", "forward", "accelerate/hooks.py AlignDevicesHook.pre_forward: offloaded weights in"),
    (r"accelerate/hooks\.py", r"init_hook|\w*attach\w*|add_hook_to_module|remove_hook_from_module", "load",
     "accelerate/hooks.py: hooks attached (and weights placed) while the model is dispatched"),
    (r"accelerate/accelerator\.py", r"\w*prepare\w*", "load", "accelerate/accelerator.py prepare -> prepare_model: to(device), DDP/FSDP wrap"),
    (r"accelerate/accelerator\.py", r"backward", "backward", "accelerate/accelerator.py Accelerator.backward"),
    (r"accelerate/accelerator\.py", r"clip_grad_\w+|unscale_gradients", "optimizer", "accelerate/accelerator.py clip_grad_norm_"),
    (r"accelerate/accelerator\.py", r"save\w*|get_state_dict|\w*_save\w*", "save", "accelerate/accelerator.py save_state, get_state_dict"),
    (r"accelerate/accelerator\.py", r"load_state|\w*_load\w*", "load", "accelerate/accelerator.py load_state"),
    (r"accelerate/optimizer\.py", r"__init__|load_state_dict", "load",
     "accelerate/optimizer.py AcceleratedOptimizer.__init__ moves the optimizer's state to the device"),
    (r"accelerate/optimizer\.py", _ANY, "optimizer", "accelerate/optimizer.py AcceleratedOptimizer.step"),
    (r"accelerate/checkpointing\.py", r"\w*load\w*", "load", "accelerate/checkpointing.py load_accelerator_state"),
    (r"accelerate/checkpointing\.py", r"\w*save\w*", "save", "accelerate/checkpointing.py save_accelerator_state"),
    (r"accelerate/utils/fsdp_utils\.py", r"\w*load\w*|fsdp2_\w*|\w*prepare\w*", "load",
     "accelerate/utils/fsdp_utils.py load_fsdp_model, fsdp2_prepare_model"),
    (r"accelerate/utils/fsdp_utils\.py", r"\w*save\w*|get_\w*state_dict\w*|merge_fsdp_weights|_distributed_checkpoint_to_merged_weights",
     "save", "accelerate/utils/fsdp_utils.py save_fsdp_model, save_fsdp_optimizer"),
    (r"accelerate/utils/deepspeed\.py", r"backward", "backward", "accelerate/utils/deepspeed.py DeepSpeedEngineWrapper.backward"),
    (r"accelerate/utils/deepspeed\.py", r"step|zero_grad", "optimizer", "accelerate/utils/deepspeed.py DeepSpeedOptimizerWrapper.step"),
    (r"accelerate/utils/operations\.py", r"_?convert_to_fp32|convert_outputs_to_fp32", "loss",
     "accelerate/utils/operations.py convert_to_fp32: the model's logits cast to float32 for the loss"),
    (r"accelerate/data_loader\.py", _NOT_A_PASS, "data", "accelerate/data_loader.py DataLoaderShard.__iter__"),
    # ---------------------------------------------------------------- PEFT, bitsandbytes, safetensors
    (r"peft/(?:peft_model|mixed_model|mapping\w*|auto)\.py", r"\w*save\w*|push_to_hub|merge_and_unload|\w*merge\w*", "save", "peft/peft_model.py save_pretrained"),
    (r"peft/(?:peft_model|mixed_model|mapping\w*|auto)\.py", r"from_pretrained|\w*load\w*|__init__|get_peft_model|"
     r"inject_adapter_in_model|add_adapter|_setup_prompt_encoder|set_additional_trainable_modules|"
     r"_prepare_model_for_gradient_checkpointing|_update_offload|_check_new_adapter_config", "load",
     "peft/mapping_func.py get_peft_model, peft/peft_model.py PeftModel.from_pretrained, load_adapter"),
    (r"peft/tuners/", r"unmerge\w*|_unmerge\w*|unload|merge_masks", None,
     "peft/tuners/lora/layer.py unmerge (adapters switched), MultiheadAttention.merge_masks (attention masks in forward)"),
    (r"peft/tuners/", r"merge_and_unload|_unload_and_optionally_merge|merge|safe_merge|_merge_\w*|merge_\w*|"
     r"get_delta_weight", "save",
     "peft/tuners/tuners_utils.py merge_and_unload, lora/layer.py merge -> get_delta_weight: merged for export"),
    (r"peft/tuners/", r"__init__|inject_adapter|_create_and_replace|_create_new_module|create_new_module|update_layer|"
     r"_replace_module|dispatch_\w*|_move_adapter_to_device_of_base_layer|reset_\w*|\w*_init\w*|\w*init_\w*|"
     r"_prepare_adapter_config|_mark_only_adapters_as_trainable|add_weighted_adapter|load_\w*|\w*loftq\w*|"
     r"\w*pissa\w*|\w*olora\w*|\w*corda\w*|\w*eva\w*", "load",
     "peft/tuners/tuners_utils.py BaseTuner.__init__ -> inject_adapter -> _create_and_replace -> update_layer"),
    (r"peft/tuners/", r"\w*forward\w*|_apply_dora|_mixed_batch_forward|_cast_input_dtype|_\w*embed\w*", "forward",
     "peft/tuners/lora/layer.py Linear.forward, _mixed_batch_forward; dora.py"),
    (r"peft/utils/save_and_load\.py", r"get_peft_model_state_dict|\w*save\w*", "save", "peft/utils/save_and_load.py"),
    (r"peft/utils/save_and_load\.py", _NOT_A_PASS, "load", "peft/utils/save_and_load.py set_peft_model_state_dict, load_peft_weights"),
    (r"peft/utils/other\.py", r"prepare_model_for_kbit_training|_prepare_prompt_learning_config", "load",
     "peft/utils/other.py prepare_model_for_kbit_training casts layers to fp32"),
    (r"bitsandbytes/optim/", r"load_state_dict", "load", "bitsandbytes/optim/optimizer.py Optimizer8bit.load_state_dict"),
    (r"bitsandbytes/optim/", _ANY, "optimizer", "bitsandbytes/optim/*.py: 8-bit and paged optimizers' step"),
    (r"bitsandbytes/nn/modules\.py", r"_save_to_state_dict|state_dict", "save",
     "bitsandbytes/nn/modules.py Linear8bitLt._save_to_state_dict: the weights' layout undone to save them"),
    (r"bitsandbytes/nn/modules\.py", r"cuda|to|xpu|npu|_quantize|from_prequantized|__new__|_load_from_state_dict|"
     r"__deepcopy__", "load",
     "bitsandbytes/nn/modules.py Params4bit.cuda/to -> _quantize: weights are quantized as they move to the GPU"),
    (r"bitsandbytes/nn/modules\.py", r"forward", "forward", "bitsandbytes/nn/modules.py Linear4bit.forward"),
    (r"bitsandbytes/autograd/", r"backward", "backward", "bitsandbytes/autograd/_functions.py MatMul4Bit.backward"),
    (r"bitsandbytes/autograd/", _ANY, "forward", "bitsandbytes/autograd/_functions.py matmul_4bit -> MatMul4Bit.forward"),
    (r"bitsandbytes/functional\.py", r"quantize_4bit|quantize_nf4|quantize_fp4", "load", "bitsandbytes/functional.py (Params4bit._quantize)"),
    (r"bitsandbytes/functional\.py", r"optimizer_update_\w+|percentile_clipping", "optimizer", "bitsandbytes/functional.py optimizer kernels"),
    (r"safetensors/torch\.py", r"\w*save\w*|_flatten|_tobytes", "save", "safetensors/torch.py save_file"),
    (r"safetensors/torch\.py", r"\w*load\w*", "load", "safetensors/torch.py load_file, load_model"),
    # ---------------------------------------------------------------- DeepSpeed
    (r"deepspeed/__init__\.py", r"initialize|_parse_version", "zero_init", "deepspeed/__init__.py initialize builds the DeepSpeedEngine"),
    (r"deepspeed/__init__\.py", r"init_inference", "load", "deepspeed/__init__.py init_inference builds the InferenceEngine"),
    (r"deepspeed/runtime/(?:engine|hybrid_engine|bf16_optimizer|fp16/\w+|zero/\w+|pipe/engine|swap_tensor/\w+|base_optimizer)\.py",
     r"\w*(?:load|restore)\w*|refresh_fp32_params|reload_states|_set_state|_set_param_groups", "load",
     "deepspeed/runtime/engine.py load_checkpoint -> _load_checkpoint, _load_zero_checkpoint; ZeRO's load_state_dict"),
    (r"deepspeed/runtime/(?:engine|hybrid_engine|bf16_optimizer|fp16/\w+|zero/\w+|pipe/engine|base_optimizer)\.py",
     r"\w*save\w*|\w*state_dict\w*|\w*consolidated\w*|_get_zero_param_shapes|_copy_recovery_script|"
     r"_change_recovery_script_permissions|_checkpoint_tag_validation|_create_\w*checkpoint\w*|_get_\w*ckpt\w*|"
     r"checkpoint_event_\w+|_get_state\w*|_get_base_optimizer_state|get_lean_optimizer_state|dump_state", "save",
     "deepspeed/runtime/engine.py save_checkpoint -> _save_checkpoint, _zero3_consolidated_16bit_state_dict"),
    (r"deepspeed/runtime/(?:engine|hybrid_engine|bf16_optimizer|fp16/\w+|zero/\w+|pipe/engine|base_optimizer)\.py",
     r"step|_\w*step\w*|\w*step_\w*|unscale_and_clip_grads|clip_fp32_gradients|_clip_\w*|\w*_scale|\w*overflow\w*|"
     r"_has_inf_or_nan|complete_grad_norm_calculation_for_cpu_offload|get_grad_norm\w*|scaled_global_norm|"
     r"get_global_grad_norm|_get_norm\w*|get_grads_for_norm|_constant_buffered_norm2|update_lp_params|"
     r"_update_\w*(?:fp16|bit16|lp)\w*|_prepare_\w*sub_group|_release_sub_group|\w*swap_(?:in|out)\w*|"
     r"_reassign_or_swap_out_partitioned_parameters|_unflatten_partitioned_parameters|zero_grad|clear_\w*grads|"
     r"_partitioned_params_swap_out|_swap_in_sub_group_to_flat_buffer|_loco_err_buf_update|_optimizer_states\w*|"
     r"set_none_gradients_to_zero|_overflow_\w*|_handle_overflow|_check_overflow|_take_model_step", "optimizer",
     "deepspeed/runtime/zero/stage_1_and_2.py and stage3.py step -> _optimizer_step, unscale_and_clip_grads; "
     "engine.py step -> _take_model_step; bf16_optimizer.py step"),
    (r"deepspeed/runtime/(?:engine|hybrid_engine|bf16_optimizer|fp16/\w+|zero/\w+|pipe/engine|base_optimizer)\.py",
     r"\w*backward\w*|\w*bwd\w*|\w*reduce\w*|\w*grad_hook\w*|\w*grad_acc\w*|\w*accumulate\w*|average_tensor|"
     r"\w*_grads?_in_\w*|\w*copy_grad\w*|\w*partition_grad\w*|\w*gradient_partition\w*|partition_gradients?|"
     r"_partition_gradients?|__add_grad_to_ipg_bucket|__avg_scatter\w*|\w*ipg\w*|_get_gradients_for_reduction|"
     r"postscale_gradients|update_hp_grads|_update_hp_grad\w*|set_norm_for_param_grad\w*|\w*fp32_grad\w*|"
     r"free_grad_in_param_list|get_gradient_for_reduction|get_reducible_portion|gradient_reduction\w*|"
     r"copy_gradients_to_cpu|async_inplace_copy_grad\w*|are_all_related_partitions_reduced|_release_ipg_buffers|"
     r"allreduce_\w*|\w*_allreduce\w*|sparse_allreduce\w*|_model_parallel_all_reduce|\w*reduce_scatter\w*", "backward",
     "deepspeed/runtime/zero/stage_1_and_2.py reduce_ready_partitions_and_remove_grads, average_tensor; stage3.py "
     "__reduce_and_partition_ipg_grads; engine.py backward -> allreduce_gradients: gradients reduced as backward runs"),
    (r"deepspeed/runtime/(?:engine|hybrid_engine|bf16_optimizer|fp16/\w+|zero/\w+|base_optimizer)\.py",
     r"__init__|_configure_\w*|_create_\w*|create_\w*|initialize\w*|_initialize\w*|_setup_for_real_optimizer|"
     r"_link_all_hp_params|_create_param_mapping|_round_robin_reorder|_move_to_flat_buffer|_set_fp16_partitioned_groups_flat|"
     r"_post_init_method|_convert_to_zero_parameters|convert_to_zero_parameters|_convert_to_deepspeed_param|"
     r"_zero_init_param|_broadcast_model|_set_distributed_vars|_do_\w*sanity_check|_set_client_model|"
     r"_configure_with_arguments|_lazy_init_hp_params_optimizer_state|_get_trainable_parameter_groups|"
     r"_set_zero_group_parallelism|_get_param_groups|_setup_\w*|setup_zero_stage3_hooks|_register_deepspeed_module|"
     r"mark_persistent_parameters|_partition_all_parameters|_enable_universal_checkpoint|_create_fp\w+|"
     r"_get_parameter_partitions|_get_sub_group_partitions|_create_next_swappable_fp32_groups|defragment|"
     r"_optimized_linear_offload_setup|_inject_parameters|_set_leaf_by_threshold_preorder|_set_z3_leaf_modules\w*",
     "zero_init",
     "deepspeed/runtime/engine.py DeepSpeedEngine.__init__ -> _configure_optimizer -> _configure_zero_optimizer; "
     "zero/stage_1_and_2.py and stage3.py DeepSpeedZero*Optimizer.__init__; partition_parameters.py Init._post_init_method"),
    (r"deepspeed/runtime/(?:engine|hybrid_engine|zero/\w+|pipe/engine)\.py",
     r"\w*generate\w*|_zero3_forward|unfuse_lora_weight\w*|fuse_lora_weight\w*|retake_inference_cache", "generate",
     "deepspeed/runtime/hybrid_engine.py DeepSpeedHybridEngine.generate (RLHF rollouts)"),
    (r"deepspeed/runtime/(?:engine|hybrid_engine|zero/\w+|pipe/engine|activation_checkpointing/\w+)\.py",
     r"\w*forward\w*|fetch_sub_module|release_sub_module|\w*all_gather\w*|\w*allgather\w*|__all_gather\w*|"
     r"_ensure_availability_of_partitioned_params|\w*prefetch\w*|wait|_apply_\w*tensors_only|get_all_parameters|"
     r"record_module|record_parameters|trace_prologue|reset_step|__release_param|__params_to_release|"
     r"_cast_inputs_half|_partition_param|_partition|partition|_partition_param_sec|checkpoint|_exec_forward_pass|"
     r"_exec_load_micro_batch|dequantize|\w*hook", "forward",
     "deepspeed/runtime/zero/parameter_offload.py _pre_forward_module_hook -> partitioned_param_coordinator.py "
     "fetch_sub_module -> partition_parameters.py all_gather (in backward the backward hooks above them win)"),
    (r"deepspeed/runtime/pipe/engine\.py", r"eval_batch", "eval", "deepspeed/runtime/pipe/engine.py PipelineEngine.eval_batch"),
    (r"deepspeed/runtime/activation_checkpointing/checkpointing\.py", r"backward|\w*recompute\w*|\w*unpack\w*", "backward",
     "deepspeed/runtime/activation_checkpointing/checkpointing.py CheckpointFunction.backward recomputes the forward"),
    (r"deepspeed/runtime/checkpoint_engine/", r"\w*load\w*", "load", "deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py load"),
    (r"deepspeed/runtime/checkpoint_engine/", r"\w*save\w*|commit|makedirs", "save",
     "deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py save"),
    (r"deepspeed/ops/(?:adam|lamb|adagrad|lion|muon)/", r"step|_\w*step\w*|\w*update\w*|multi_tensor_\w*", "optimizer",
     "deepspeed/ops/adam/fused_adam.py and cpu_adam.py step"),
    (r"deepspeed/inference/engine\.py", r"forward|_generate|generate", "generate", "deepspeed/inference/engine.py InferenceEngine.forward"),
    (r"deepspeed/inference/engine\.py", _NOT_A_PASS, "load", "deepspeed/inference/engine.py InferenceEngine.__init__: loads and injects the model"),
    (r"deepspeed/module_inject/", r"\w*forward\w*", "forward", "deepspeed/module_inject: injected layers' forward"),
    (r"deepspeed/module_inject/", _NOT_A_PASS, "load", "deepspeed/module_inject/replace_module.py replace_transformer_layer"),
    # ---------------------------------------------------------------- trainers built on transformers
    (r"trl/trainer/(?:grpo|rloo)_trainer\.py", r"_prepare_inputs", "generate",
     "trl/trainer/grpo_trainer.py _prepare_inputs -> _generate_and_score_completions every steps_per_generation steps"),
    (r"trl/trainer/\w+\.py", r"\w*generate\w*|_generate_\w*|_sample\w*|\w*rollout\w*|_fast_infer\w*|_move_model_to_vllm|"
     r"_sync_fsdp\w*_params_to_vllm|_calculate_rewards|_generate_and_score_completions", "generate",
     "trl/trainer/grpo_trainer.py _generate_and_score_completions -> _generate; online_dpo_trainer.py _generate"),
    (r"trl/trainer/\w+\.py", r"evaluate|evaluation_loop|prediction_step|predict|_\w*eval\w*|\w*evaluat\w*", "eval",
     "trl/trainer/dpo_trainer.py prediction_step, evaluation_loop"),
    (r"trl/trainer/\w+\.py", r"\w*save\w*|_save_checkpoint|push_to_hub", "save", "trl/trainer/*_trainer.py _save_checkpoint, save_model"),
    (r"trl/trainer/\w+\.py", r"\w*_loss|\w*_loss_\w*|\w*logps\w*|\w*log_softmax\w*|entropy_from_logits|\w*kl\w*", "loss",
     "trl/trainer/dpo_trainer.py dpo_loss, get_batch_logps; utils.py selective_log_softmax"),
    (r"trl/trainer/\w+\.py", r"__init__|_prepare_\w*model\w*|\w*prepare_deepspeed\w*|_create_model_from_path|"
     r"_prepare_peft_model|_prepare_fsdp|create_reference_model|_set_signature_columns_if_needed", "load",
     "trl/trainer/*_trainer.py __init__ builds the policy and reference models"),
    (r"trl/trainer/\w+\.py", r"\w*dataset\w*|\w*tokenize\w*|\w*collat\w*|_prepare_dataset|get_\w*dataloader", "data",
     "trl/trainer/sft_trainer.py _prepare_dataset"),
    (r"trl/trainer/\w+\.py", r"compute_loss|training_step|\w*forward\w*|_compute_loss|get_batch_loss_metrics", "forward",
     "trl/trainer/dpo_trainer.py compute_loss -> get_batch_loss_metrics -> concatenated_forward"),
    (r"trl/models/utils\.py", r"unwrap_model_for_generation|\w*generat\w*", "generate", "trl/models/utils.py unwrap_model_for_generation"),
    (r"trl/models/utils\.py", r"prepare_deepspeed|\w*prepare\w*|setup_chat_format|\w*fsdp\w*", "load",
     "trl/models/utils.py prepare_deepspeed for the reference model"),
    (r"trl/(?:extras/vllm_client|generation/\w+)\.py", _ANY, "generate", "trl/extras/vllm_client.py: generation by a vLLM server"),
    (r"llamafactory/model/(?:loader|adapter|patcher)\.py", _NOT_A_PASS, "load",
     "LLaMA-Factory src/llamafactory/model/loader.py load_model -> patcher.py, adapter.py init_adapter"),
    (r"llamafactory/data/", _NOT_A_PASS, "data", "LLaMA-Factory src/llamafactory/data/: loading, templates, processors, collators"),
    (r"llamafactory/(?:chat|api)/", _ANY, "generate", "LLaMA-Factory src/llamafactory/chat/: hf/vllm/sglang engines"),
    (r"llamafactory/eval/", _ANY, "eval", "LLaMA-Factory src/llamafactory/eval/evaluator.py"),
    (r"llamafactory/train/tuner\.py", r"export_model", "save", "LLaMA-Factory src/llamafactory/train/tuner.py export_model"),
    (r"llamafactory/train/\w+/trainer\.py", r"prediction_step|evaluate|\w*eval\w*", "eval",
     "LLaMA-Factory src/llamafactory/train/*/trainer.py prediction_step"),
    (r"llamafactory/train/\w+/trainer\.py", r"save_predictions|_save\w*|save_model", "save",
     "LLaMA-Factory src/llamafactory/train/*/trainer.py save_predictions, _save"),
    (r"llamafactory/train/\w+/trainer\.py", r"\w*generat\w*|get_inputs", "generate",
     "LLaMA-Factory src/llamafactory/train/ppo/trainer.py get_inputs: rollouts"),
    (r"llamafactory/train/\w+/trainer\.py", r"\w*_loss|\w*logps\w*", "loss", "LLaMA-Factory train/dpo/trainer.py compute_preference_loss"),
    (r"swift/(?:llm/)?(?:infer|infer_engine|pipelines/infer|rollout)/", r"\w*load\w*|__init__|_prepare_\w*engine\w*|_init_\w*",
     "load", "ms-swift swift/infer_engine/vllm_engine.py VllmEngine.__init__ -> _prepare_engine: the engine loads its model"),
    (r"swift/(?:llm/)?(?:infer|infer_engine|pipelines/infer|rollout)/", _ANY, "generate",
     "ms-swift swift/infer_engine/*.py infer, swift/pipelines/infer, swift/rollout: inference and rollouts"),
    (r"swift/(?:llm/)?model/", r"\w*save\w*", "save", "ms-swift swift/model/utils.py save_checkpoint"),
    (r"swift/(?:llm/)?model/", r"\w*forward\w*", "forward", "ms-swift swift/model/models/*.py: patched forward functions"),
    (r"swift/(?:llm/)?model/", _NOT_A_PASS, "load", "ms-swift swift/model/register.py get_model_tokenizer, patcher.py"),
    (r"swift/(?:llm/)?(?:dataset|dataloader)/", _NOT_A_PASS, "data", "ms-swift swift/dataset, swift/dataloader: loading and preprocessing"),
    (r"swift/(?:llm/|pipelines/)?export/", _NOT_A_PASS, "save", "ms-swift swift/pipelines/export: merge, quantize and push a trained model"),
    (r"swift/pipelines/eval/", _ANY, "eval", "ms-swift swift/pipelines/eval"),
    (r"swift/loss/", _ANY, "loss", "ms-swift swift/loss: the losses trainers call"),
    (r"swift/(?:trainers|rlhf_trainers)/", r"\w*generat\w*|_fast_infer\w*|_infer\w*|\w*rollout\w*|_move_model_to_vllm",
     "generate", "ms-swift swift/rlhf_trainers/grpo_trainer.py _fast_infer, _generate_completions"),
    (r"swift/(?:trainers|rlhf_trainers)/", r"evaluate|evaluation_loop|prediction_step|\w*evaluat\w*", "eval",
     "ms-swift swift/trainers/mixin.py evaluation_loop, prediction_step"),
    (r"swift/(?:trainers|rlhf_trainers)/", r"\w*save\w*", "save", "ms-swift swift/trainers/mixin.py _save_checkpoint"),
    (r"torchtune/training/checkpointing/", r"\w*load\w*|__init__", "load", "torchtune/training/checkpointing/_checkpointer.py load_checkpoint"),
    (r"torchtune/training/checkpointing/", _NOT_A_PASS, "save", "torchtune/training/checkpointing/_checkpointer.py save_checkpoint"),
    (r"torchtune/training/_distributed\.py", r"shard_model|\w*load\w*|prepare_mha_for_tp|_\w*init\w*", "load",
     "torchtune/training/_distributed.py shard_model, load_from_full_model_state_dict"),
    (r"torchtune/training/_distributed\.py", r"\w*state_dict\w*|gather_cpu_state_dict", "save",
     "torchtune/training/_distributed.py gather_cpu_state_dict, get_full_optimizer_state_dict"),
    (r"torchtune/modules/loss/", _ANY, "loss", "torchtune/modules/loss: chunked cross-entropy, KD losses"),
    (r"torchtune/generation/", _ANY, "generate", "torchtune/generation/_generation.py generate"),
    (r"torchtune/(?:datasets|data)/", _NOT_A_PASS, "data", "torchtune/datasets, torchtune/data: datasets and collators"),
    (r"axolotl/(?:loaders|utils/models|utils/model_shard_quant)\b", _NOT_A_PASS, "load",
     "axolotl src/axolotl/loaders/model.py ModelLoader.load, utils/model_shard_quant.py"),
    (r"axolotl/(?:utils/data|datasets|prompt_strategies)\b", _NOT_A_PASS, "data", "axolotl src/axolotl/utils/data: dataset preparation"),
    (r"axolotl/train\.py", r"setup_\w*model\w*|setup_reference_model|\w*load\w*", "load", "axolotl src/axolotl/train.py setup_model_and_tokenizer"),
    (r"axolotl/train\.py", r"\w*save\w*", "save", "axolotl src/axolotl/train.py save_trained_model"),
    (r"axolotl/cli/(?:merge_lora|merge_sharded_fsdp_weights|quantize)\.py", _NOT_A_PASS, "save", "axolotl src/axolotl/cli/merge_lora.py"),
    (r"axolotl/cli/(?:inference|vllm_serve)\.py", _ANY, "generate", "axolotl src/axolotl/cli/inference.py"),
    (r"unsloth/save\.py", _NOT_A_PASS, "save", "unsloth/save.py unsloth_save_model, merged and GGUF exports"),
    (r"unsloth_zoo/saving_utils\.py", _NOT_A_PASS, "save", "unsloth_zoo/saving_utils.py merge_and_overwrite_lora"),
    (r"(?:unsloth|unsloth_zoo)/(?:kernels/)?\w*(?:cross_entropy|loss)\w*\.py", r"\w*backward\w*", "backward",
     "unsloth/kernels/cross_entropy_loss.py Fast_CrossEntropyLoss.backward"),
    (r"(?:unsloth|unsloth_zoo)/(?:kernels/)?\w*(?:cross_entropy|loss)\w*\.py", _ANY, "loss",
     "unsloth/kernels/cross_entropy_loss.py fast_cross_entropy_loss; unsloth_zoo/loss_utils.py"),
    (r"unsloth/kernels/", r"\w*backward\w*|_\w*bwd\w*", "backward", "unsloth/kernels/fast_lora.py LoRA_MLP.backward"),
    (r"unsloth/kernels/", _ANY, "forward", "unsloth/kernels: fused forward kernels"),
    (r"unsloth/models/\w+\.py", r"\w*generate\w*|\w*for_inference\w*|\w*inference\w*", "generate",
     "unsloth/models/llama.py unsloth_fast_generate, LlamaModel_fast_forward_inference"),
    (r"unsloth/models/\w+\.py", r"from_pretrained|get_peft_model|patch_peft_model|pre_patch|post_patch|\w*load\w*|"
     r"prepare_model_for_\w*|\w*for_training\w*|__init__", "load", "unsloth/models/loader.py FastLanguageModel.from_pretrained"),
    (r"unsloth/models/\w+\.py", r"\w*forward\w*|\w*attention\w*|\w*_rope\w*|\w*mlp\w*", "forward",
     "unsloth/models/llama.py LlamaDecoderLayer_fast_forward"),
    (r"unsloth_zoo/gradient_checkpointing\.py", r"\w*backward\w*", "backward",
     "unsloth_zoo/gradient_checkpointing.py Unsloth_Offloaded_Gradient_Checkpointer.backward"),
    (r"unsloth_zoo/vllm_utils\.py", r"\w*load\w*|\w*patch\w*|\w*create\w*|\w*init\w*", "load",
     "unsloth_zoo/vllm_utils.py load_vllm"),
    (r"openrlhf/trainer/ppo_utils/samples_generator\.py", _ANY, "generate",
     "OpenRLHF openrlhf/trainer/ppo_utils/samples_generator.py generate_samples -> _generate_vllm: rollouts"),
    (r"openrlhf/trainer/ray/vllm_engine\w*\.py", r"create_\w*|__init__|_configure\w*|_load\w*", "load",
     "OpenRLHF openrlhf/trainer/ray/vllm_engine.py create_vllm_engines"),
    (r"openrlhf/trainer/ray/vllm_engine\w*\.py", _ANY, "generate", "OpenRLHF openrlhf/trainer/ray/vllm_engine.py generate"),
    (r"openrlhf/models/loss\.py", _ANY, "loss", "OpenRLHF openrlhf/models/loss.py: policy, value, DPO losses"),
    (r"openrlhf/utils/deepspeed/deepspeed\.py", r"backward", "backward", "OpenRLHF openrlhf/utils/deepspeed/deepspeed.py backward"),
    (r"openrlhf/utils/deepspeed/deepspeed\.py", r"optimizer_step", "optimizer", "OpenRLHF deepspeed.py optimizer_step"),
    (r"openrlhf/utils/deepspeed/deepspeed\.py", r"\w*save\w*", "save", "OpenRLHF deepspeed.py save_model, save_ckpt"),
    (r"openrlhf/utils/deepspeed/deepspeed\.py", r"\w*load\w*", "load", "OpenRLHF deepspeed.py load_ckpt"),
    (r"openrlhf/utils/deepspeed/deepspeed\.py", r"prepare|_ds_init\w*", "zero_init",
     "OpenRLHF deepspeed.py prepare -> _ds_init_train_model -> deepspeed.initialize"),
    (r"openrlhf/models/(?:actor|model)\.py", r"__init__|get_llm_for_sequence_regression|_get_\w*model\w*", "load",
     "OpenRLHF openrlhf/models/actor.py Actor.__init__ loads the policy"),
    (r"liger_kernel/(?:ops|chunked_loss)/\w+\.py", r"\w*backward\w*|_\w*bwd\w*", "backward",
     "Liger-Kernel src/liger_kernel/ops/*.py: each autograd Function's backward and its kernels"),
    (r"liger_kernel/(?:chunked_loss/|ops/\w*(?:cross_entropy|jsd|kl_div|loss|tvd|dyt_loss|grpo)\w*\.py)", _ANY, "loss",
     "Liger-Kernel src/liger_kernel/ops/fused_linear_cross_entropy.py, chunked_loss/: the fused losses"),
    (r"liger_kernel/ops/\w+\.py", _ANY, "forward", "Liger-Kernel src/liger_kernel/ops: fused RMSNorm, RoPE, SwiGLU forward"),
    (r"litgpt/generate/", _ANY, "generate", "litgpt/generate/base.py generate"),
    (r"litgpt/(?:finetune|pretrain)\b", r"validate|\w*eval\w*", "eval", "litgpt/finetune/lora.py validate"),
    (r"litgpt/(?:finetune|pretrain)\b", r"\w*save\w*", "save", "litgpt/finetune/lora.py save_lora_checkpoint"),
    (r"litgpt/(?:finetune|pretrain)\b", r"fit", "forward", "litgpt/finetune/lora.py fit: the training loop"),
    (r"litgpt/(?:finetune|pretrain)\b", r"\w*dataloader\w*|get_\w*data\w*", "data", "litgpt/finetune/lora.py get_dataloaders"),
    (r"litgpt/utils\.py", r"chunked_cross_entropy", "loss", "litgpt/utils.py chunked_cross_entropy"),
    (r"litgpt/utils\.py", r"load_checkpoint\w*|\w*load\w*", "load", "litgpt/utils.py load_checkpoint"),
    (r"litgpt/(?:scripts/(?:merge_lora|convert_\w+)|utils)\.py", r"\w*save\w*|merge_\w*|convert_\w*|copy_weights\w*", "save",
     "litgpt/scripts/merge_lora.py, convert_lit_checkpoint.py"),
    (r"litgpt/eval/", _ANY, "eval", "litgpt/eval/evaluate.py"),
    (r"litgpt/data/", _NOT_A_PASS, "data", "litgpt/data: datamodules"),
    (r"litgpt/api\.py", r"\w*generate\w*|benchmark", "generate", "litgpt/api.py LLM.generate"),
    (r"litgpt/api\.py", r"load|distribute|__init__", "load", "litgpt/api.py LLM.load, distribute"),
    # ---------------------------------------------------------------- Megatron, ColossalAI, mmengine
    (r"megatron/core/pipeline_parallel/schedules\.py", r"loss_func|\w*loss_scale\w*", "loss",
     "megatron/core/pipeline_parallel/schedules.py forward_step_calc_loss -> loss_func"),
    (r"megatron/core/pipeline_parallel/schedules\.py", r"forward_step\w*|pp_pre_forward|pp_post_forward", "forward",
     "megatron/core/pipeline_parallel/schedules.py forward_step"),
    (r"megatron/training/training\.py", r"evaluate\w*", "eval", "megatron/training/training.py evaluate_and_print_results"),
    (r"megatron/training/training\.py", r"save_checkpoint\w*|_save\w*|checkpoint_and_decide_exit", "save",
     "megatron/training/training.py save_checkpoint_and_time"),
    (r"megatron/training/training\.py", r"setup_model_and_optimizer|get_model|build_model|_build_model_wrapper|"
     r"wrap_model_chunks_with_ddp|get_megatron_\w*|get_optimizer_param_scheduler|build_train_valid_test\w*", "load",
     "megatron/training/training.py setup_model_and_optimizer -> get_model, get_megatron_optimizer"),
    (r"megatron/training/training\.py", r"train|train_step|dummy_train_step", "forward",
     "megatron/training/training.py train -> train_step -> forward_backward_func"),
    (r"megatron/(?:training/checkpointing|core/dist_checkpointing/\S+)\.py", r"\w*load\w*|read_\w*|\w*resume\w*", "load",
     "megatron/training/checkpointing.py load_checkpoint; megatron/core/dist_checkpointing/serialization.py load"),
    (r"megatron/(?:training/checkpointing|core/dist_checkpointing/\S+)\.py", r"\w*save\w*|generate_state_dict|"
     r"\w*state_dict\w*|\w*finalize\w*", "save",
     "megatron/training/checkpointing.py save_checkpoint -> generate_state_dict; dist_checkpointing save"),
    (r"megatron/core/optimizer/\w+\.py", r"load_state_dict|load_parameter_state\w*|_set_main_param_and_optimizer_states|"
     r"reload_model_params|restore_from_cpu", "load", "megatron/core/optimizer/distrib_optimizer.py load_parameter_state"),
    (r"megatron/core/optimizer/\w+\.py", r"\w*state_dict\w*|save_parameter_state|get_parameter_state\w*|"
     r"sharded_param_state\w*", "save", "megatron/core/optimizer/distrib_optimizer.py sharded_state_dict, save_parameter_state"),
    (r"megatron/core/optimizer/\w+\.py", r"__init__|_build_\w*|_init_\w*|get_megatron_optimizer\w*|_get_param_groups\w*",
     "load", "megatron/core/optimizer/__init__.py get_megatron_optimizer: built while the model is set up"),
    (r"megatron/core/optimizer/\w+\.py", r"(?!\w*forward)\w+", "optimizer",
     "megatron/core/optimizer/optimizer.py MixedPrecisionOptimizer.step -> prepare_grads, step_with_ready_grads, clip_grads.py"),
    (r"megatron/core/distributed/\w+\.py", r"\w*grad_sync|register_grad_ready|scale_gradients|_make_backward_post_hook|"
     r"\w*reduce\w*", "backward",
     "megatron/core/distributed/param_and_grad_buffer.py start_grad_sync: gradients reduced as backward runs"),
    (r"megatron/core/distributed/\w+\.py", r"\w*param_sync\w*|_make_forward_pre_hook", "forward",
     "megatron/core/distributed/distributed_data_parallel.py forward pre-hook: finish_param_sync"),
    (r"megatron/core/distributed/\w+\.py", r"__init__|broadcast_params|_create_bucket|_new_bucket|partition_buckets|"
     r"group_params_for_buffers|_compute_\w*layout\w*", "load",
     "megatron/core/distributed/distributed_data_parallel.py DistributedDataParallel.__init__ builds the grad buffers"),
    (r"megatron/core/inference/", _ANY, "generate", "megatron/core/inference: the inference engines"),
    (r"megatron/core/(?:tensor_parallel|transformer|models|ssm|fusions)/\S+\.py", r"\w*load_state_dict\w*", "load",
     "megatron/core/transformer/module.py MegatronModule load_state_dict"),
    (r"megatron/core/(?:tensor_parallel|transformer|models|ssm|fusions)/\S+\.py", r"\w*state_dict\w*", "save",
     "megatron/core/transformer/module.py sharded_state_dict"),
    (r"megatron/core/tensor_parallel/cross_entropy\.py", _ANY, "loss",
     "megatron/core/tensor_parallel/cross_entropy.py vocab_parallel_cross_entropy"),
    (r"megatron/core/(?:tensor_parallel|transformer|models|ssm|fusions)/\S+\.py", r"__init__|_init_\w*|init_\w*|"
     r"_initialize_\w*|initialize_\w*", "load", "megatron/core/transformer: layers built"),
    (r"megatron/core/(?:tensor_parallel|transformer|models|ssm|fusions)/\S+\.py", _ANY, "forward",
     "megatron/core/transformer/transformer_block.py, tensor_parallel/layers.py: the layers' forward and their kernels"),
    (r"colossalai/zero/\S+\.py", r"step|_unscale_and_clip_grads|_compute_grad_norm|get_grad_norm|"
     r"update_master_params|zero_grad|\w*overflow\w*|_update_\w*params\w*", "optimizer",
     "colossalai/zero/low_level/low_level_optim.py LowLevelZeroOptimizer.step; gemini/gemini_optimizer.py step"),
    (r"colossalai/zero/\S+\.py", r"\w*reduce\w*|\w*reduction\w*|_grad_handler|_add_grad|_add_to_bucket|_sync_grad|"
     r"_update_\w*grad\w*|_post_backward\w*", "backward",
     "colossalai/zero/low_level/low_level_optim.py _attach_reduction_hook -> _grad_handler -> _run_reduction"),
    (r"colossalai/zero/\S+\.py", r"\w*load\w*", "load", "colossalai/zero/low_level/low_level_optim.py load_state_dict"),
    (r"colossalai/zero/\S+\.py", r"\w*state_dict\w*|\w*save\w*", "save", "colossalai/zero/low_level/low_level_optim.py state_dict"),
    (r"colossalai/zero/\S+\.py", r"__init__|_create_\w*|_sanity_checks|link_master_and_working_param", "load",
     "colossalai/zero/low_level/low_level_optim.py LowLevelZeroOptimizer.__init__: master weights built"),
    (r"colossalai/booster/\S+\.py", r"boost|configure|__init__", "load",
     "colossalai/booster/booster.py Booster.boost -> plugin.configure: model and optimizer wrapped"),
    (r"colossalai/booster/\S+\.py", r"\w*load\w*", "load", "colossalai/booster/booster.py load_model, load_optimizer"),
    (r"colossalai/booster/\S+\.py", r"\w*save\w*", "save", "colossalai/booster/booster.py save_model, save_optimizer"),
    (r"colossalai/booster/\S+\.py", r"clip_grad\w*|step", "optimizer", "colossalai/booster/mixed_precision: the optimizer's step"),
    (r"mmengine/(?:_strategy|runner)/\w+\.py", r"prepare|build_model|_wrap_model|build_optim_wrapper|"
     r"\w*load\w*|resume|_init_model_weights|wrap_model", "load",
     "mmengine/_strategy/base.py BaseStrategy.prepare -> build_model, _wrap_model; runner/checkpoint.py load_checkpoint"),
    (r"mmengine/(?:_strategy|runner)/\w+\.py", r"\w*save\w*", "save", "mmengine/runner/checkpoint.py save_checkpoint"),
    (r"mmengine/(?:runner|model/wrappers)/\w+\.py", r"val|test|val_step|test_step", "eval",
     "mmengine/runner/runner.py Runner.val, Runner.test; model/wrappers/distributed.py val_step"),
    (r"mmengine/(?:runner|model/wrappers)/\w+\.py", r"train|train_step", "forward",
     "mmengine/runner/runner.py Runner.train; model/wrappers/distributed.py MMDistributedDataParallel.train_step"),
    (r"mmengine/optim/optimizer/\w+\.py", r"step|update_params|zero_grad|\w*clip_grad\w*", "optimizer",
     "mmengine/optim/optimizer/optimizer_wrapper.py OptimWrapper.step"),
    # ---------------------------------------------------------------- Keras 3, tf-keras and the Keras TensorFlow bundled
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?(?:engine/training\w*|backend/\w+/trainer|"
     r"trainers/\w+)\.py", r"step_function|run_step|one_step_on_\w*|multi_step_on_\w*|function|_make_function", None,
     "keras/src/backend/tensorflow/trainer.py one_step_on_data, tf_keras/engine/training.py step_function: shared by "
     "fit, evaluate and predict"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?(?:engine/training\w*|backend/\w+/trainer|"
     r"trainers/\w+)\.py", r"evaluate\w*|test_step|test_function|\w*make_test_function\w*|test_on_batch|predict\w*|"
     r"\w*make_predict_function\w*|_get_test_function_runner", "eval",
     "keras/src/backend/tensorflow/trainer.py evaluate -> test_function -> test_step; predict -> predict_step"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?(?:engine/training\w*|backend/\w+/trainer|"
     r"trainers/\w+)\.py", r"compute_loss|_aggregate_additional_loss|compiled_loss|loss", "loss",
     "tf_keras/engine/training.py Model.compute_loss; keras/src/trainers/trainer.py compute_loss"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?(?:engine/training\w*|backend/\w+/trainer|"
     r"trainers/\w+)\.py", r"fit\w*|train_step|train_function|\w*make_train_function\w*|train_on_batch", "forward",
     "keras/src/backend/tensorflow/trainer.py fit -> train_function -> train_step: a Keras training step, read as "
     "forward as the labelling rule reads model.fit"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?(?:engine/\w+|saving/\S+|models/\w+)\.py",
     r"\w*save\w*", "save", "tf_keras/engine/training.py Model.save, save_weights; keras/src/saving"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?(?:engine/\w+|saving/\S+|models/\w+)\.py",
     r"\w*load\w*", "load", "tf_keras/engine/training.py Model.load_weights; keras/src/saving load_model"),
    # a layer's weights set from arrays: its initial weights when it is first built and called, a converted or loaded
    # model's values (tf_keras/engine/base_layer.py Layer.set_weights, as TensorFlow bundles it in python/keras/)
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?engine/\w+\.py", r"set_weights", "load",
     "tf_keras/engine/base_layer.py Layer.set_weights"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?(?:optimizers?|optimizer_v2)/", _ANY, "optimizer",
     "keras/src/optimizers/base_optimizer.py apply_gradients; tf_keras/optimizers"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?losses\b", _ANY, "loss",
     "keras/src/losses: every loss's call"),
    (r"(?:keras|tf_keras|tensorflow)/(?:src/|python/keras/)?layers/", _ANY, "forward",
     "keras/src/layers: each layer's call"),
    # ---------------------------------------------------------------- others, from their documented layout
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/|fabric/)?core/optimizer\.py", r"step", "optimizer",
     "lightning/pytorch/core/optimizer.py LightningOptimizer.step"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/|fabric/)?\S+\.py", r"cuda|to|_apply|half|float|double|type", "load",
     "lightning/fabric/utilities/device_dtype_mixin.py _DeviceDtypeModuleMixin.cuda/to: the module moved"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/)?loops/(?:evaluation_loop|prediction_loop|epoch/evaluation_epoch_loop)\.py",
     _ANY, "eval", "lightning/pytorch/loops/evaluation_loop.py: validation and test loops"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/)?\S+\.py", r"\w*backward\w*", "backward",
     "lightning/pytorch/plugins/precision/precision.py backward, core/module.py manual_backward"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/)?\S+\.py", r"optimizer_step|_optimizer_step|\w*clip_grad\w*|"
     r"clip_gradients", "optimizer", "lightning/pytorch/loops/optimization/automatic.py _optimizer_step"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/)?\S+\.py", r"\w*validation_step\w*|\w*test_step\w*|\w*predict_step\w*|"
     r"validate|_validate_impl|test|_test_impl|predict|_predict_impl|_run_sanity_check", "eval",
     "lightning/pytorch/trainer/trainer.py validate, test, predict; strategies' validation_step"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/)?\S+\.py", r"save_checkpoint|dump_checkpoint|\w*save\w*", "save",
     "lightning/pytorch/trainer/trainer.py save_checkpoint"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/)?\S+\.py", r"\w*restore\w*|\w*resume\w*|load_checkpoint|"
     r"load_model_state_dict|model_to_device|setup_module\w*|_setup_model|connect", "load",
     "lightning/pytorch/trainer/connectors/checkpoint_connector.py restore; strategies' model_to_device"),
    (r"(?:lightning|pytorch_lightning)/(?:pytorch/)?\S+\.py", r"\w*training_step\w*|fit|_fit_impl|_?run_train\w*|run_training_\w*",
     "forward", "lightning/pytorch/loops/optimization/automatic.py _training_step"),
    (r"vllm/(?:model_executor/model_loader|model_executor/layers/quantization)/", r"\w*forward\w*|apply", "forward",
     "vllm/model_executor/layers/quantization: quantized layers' apply in forward"),
    (r"vllm/model_executor/model_loader/", _NOT_A_PASS, "load", "vllm/model_executor/model_loader/*.py load_model, load_weights"),
    (r"vllm/(?:v1/)?worker/\w+\.py", r"load_model|init_device|determine_\w*|profile_run|_dummy_\w*|\w*capture\w*|"
     r"initialize_\w*|_initialize_\w*|init_\w*|_init_\w*|compile_or_warm_up_model|\w*warm_?up\w*|_allocate_\w*|"
     r"__init__|\w*reshape\w*|may_reinitialize_input_batch|reload_weights|\w*kv_cache\w*|raise_if_cache_size_invalid",
     "load",
     "vllm/v1/worker/gpu_worker.py init_device, determine_available_memory, compile_or_warm_up_model; "
     "gpu_model_runner.py load_model, profile_run, capture_model"),
    (r"vllm/(?:v1/)?worker/\w+\.py", r"execute_model|_execute\w*|_model_forward|\w*sample\w*|_update_states|"
     r"_prepare_inputs|_bookkeeping_sync", "generate", "vllm/v1/worker/gpu_model_runner.py execute_model: a served step"),
    (r"vllm/executor/\w+\.py", r"determine_\w*|initialize_cache|_initialize_kv_caches|_init_\w*|init_\w*|__init__", "load",
     "vllm/executor/gpu_executor.py determine_num_available_blocks, initialize_cache (v0)"),
    (r"vllm/(?:v1/)?engine/(?:\w+/)?\w+\.py", r"__init__|from_\w*|_initialize_kv_caches|_init\w*|make_client|run_engine_core|"
     r"\w*startup\w*", "load", "vllm/v1/engine/core.py EngineCore.__init__ -> _initialize_kv_caches"),
    (r"vllm/(?:v1/)?engine/(?:\w+/)?\w+\.py", r"step\w*|run_busy_loop|\w*engine\w*loop|_process_\w*|add_request\w*|generate|"
     r"output_handler|execute_model\w*", "generate", "vllm/v1/engine/core.py EngineCore.step, run_busy_loop"),
    (r"vllm/entrypoints/llm\.py", r"__init__", "load", "vllm/entrypoints/llm.py LLM.__init__ builds the engine"),
    (r"vllm/entrypoints/llm\.py", _ANY, "generate", "vllm/entrypoints/llm.py LLM.generate -> _run_engine"),
    (r"flash_attn/", r"\w*backward\w*|_\w*bwd\w*", "backward", "flash_attn/flash_attn_interface.py FlashAttnFunc.backward"),
    (r"flash_attn/", _ANY, "forward", "flash_attn/flash_attn_interface.py flash_attn_func -> _flash_attn_forward"),
    (r"diffusers/pipelines/", r"\w*save\w*", "save", "diffusers/pipelines/pipeline_utils.py DiffusionPipeline.save_pretrained"),
    (r"diffusers/pipelines/", r"from_pretrained|\w*load\w*|to|enable_\w*offload\w*", "load",
     "diffusers/pipelines/pipeline_utils.py DiffusionPipeline.from_pretrained, to"),
    (r"diffusers/pipelines/", _ANY, "generate", "diffusers/pipelines/*/pipeline_*.py __call__: the denoising loop"),
    (r"diffusers/(?:loaders|models/modeling_utils)\b", r"\w*save\w*", "save", "diffusers/models/modeling_utils.py save_pretrained"),
    (r"diffusers/loaders/", _NOT_A_PASS, "load", "diffusers/loaders: LoRA and single-file loading"),
    (r"diffusers/models/", r"from_pretrained|\w*load\w*|to|_apply|enable_\w*|__init__", "load",
     "diffusers/models/modeling_utils.py ModelMixin.from_pretrained"),
    (r"diffusers/models/", r"(?!save)\w+", "forward", "diffusers/models: attention processors, transformers and UNets run in forward"),
    # ---------------------------------------------------------------- ComfyUI, the A1111 web UI / Forge, text-generation-webui
    # ComfyUI moves a model's weights to the device when a node needs it (comfy/model_management.py load_models_gpu ->
    # LoadedModel.model_load -> model_use_more_vram -> comfy/model_patcher.py ModelPatcher.partially_load / load ->
    # patch_weight_to_device); its casts (cast_to, cast_to_device) also run inside a forward pass for weights kept off
    # the device (comfy/ops.py cast_bias_weight), so they name nothing
    (r"comfy/model_management\.py", r"cast_to\w*", None,
     "comfy/model_management.py cast_to, cast_to_device: called at load and from comfy/ops.py cast_bias_weight in forward"),
    (r"comfy/model_management\.py", r"\w*load_models?_gpu|model_load|model_use_more_vram|free_memory|\w*unload\w*|"
     r"partially_\w+", "load", "comfy/model_management.py load_models_gpu, LoadedModel.model_load, model_use_more_vram"),
    (r"comfy/model_patcher\.py", r"(?!\w*(?:forward|backward))\w*load\w*|patch_weight_to_device|patch_model\w*|"
     r"model_patches_to|unpatch_model", "load",
     "comfy/model_patcher.py ModelPatcher.load, partially_load, patch_weight_to_device, patch_model"),
    (r"comfy/sd\.py", r"load_\w+", "load", "comfy/sd.py load_checkpoint_guess_config, load_diffusion_model, load_clip"),
    # the sampling loop of every sampler node (nodes.py common_ksampler -> comfy/sample.py sample -> comfy/samplers.py
    # KSampler.sample -> comfy/k_diffusion/sampling.py sample_*): generation, as diffusers' pipelines are
    (r"comfy/(?:sample|samplers|k_diffusion/sampling)\.py", _ANY, "generate",
     "comfy/samplers.py KSampler.sample, CFGGuider.sample; comfy/sample.py sample; comfy/k_diffusion/sampling.py"),
    # the A1111 web UI and Forge: modules/sd_models.py reads and places the checkpoint, modules/processing.py runs a
    # txt2img or img2img request through the samplers of modules/sd_samplers*.py
    (r"modules/sd_models\.py", r"\w*load\w*|send_model_to_\w+|setup_model|instantiate_from_config|read_state_dict|"
     r"get_checkpoint_state_dict|get_state_dict_from_checkpoint|model_target_device", "load",
     "stable-diffusion-webui(-forge) modules/sd_models.py load_model, reload_model_weights, load_model_weights"),
    (r"modules/processing\.py|modules/sd_samplers\w*\.py", _ANY, "generate",
     "stable-diffusion-webui(-forge) modules/processing.py process_images -> process_images_inner -> sample; "
     "modules/sd_samplers_kdiffusion.py KDiffusionSampler.sample"),
    # text-generation-webui: modules/models.py loads the model, modules/text_generation.py answers a request
    (r"modules/models\.py", r"\w*load\w*", "load", "text-generation-webui modules/models.py load_model, reload_model"),
    (r"modules/text_generation\.py", _ANY, "generate",
     "text-generation-webui modules/text_generation.py generate_reply -> generate_reply_HF / generate_reply_custom"),
    # last: a forward pass by its name in any module of a known package that no row above places otherwise
    # (torch/nn/modules/module.py Module.forward, a framework's patched *_forward, a hook run around forward)
    (r"\S+\.py", r"\w*forward\w*", "forward", "torch/nn/modules/module.py: forward and forward hooks"),
)

_PACKAGE = re.compile(r"(?:^|[/\\])(" + "|".join(PACKAGES) + r")[/\\](?=[^\s\"',]*\.py)")
_ROW_TOPS = re.compile(r"\(\?:([\w|]+)\)|(\w+)")


_META = frozenset(".^$*+?{}[]|()\\")


def literal_prefix(pattern: str) -> str:
    """The literal text every `re.match` of `pattern` starts with ("" when unsure), read off the pattern's text
    without parsing it: the run of plain and backslash-escaped punctuation characters up to the first
    metacharacter, less its last character when a quantifier follows it; "" when a `|` outside any group
    makes the run one alternative only (re's syntax: docs.python.org/3/library/re.html#regular-expression-syntax)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
        elif c in _META:
            if c in "?*+{" and out:     # a quantified last character may repeat or be absent
                out.pop()
            elif c == "|":
                return ""
            break
        else:
            out.append(c)
            i += 1
    prefix = "".join(out)
    if not prefix or len(top_level_split(pattern[i:])) > 1:     # an alternative at the top: not every match's prefix
        return ""
    return prefix


@cache
def _rows(top: str) -> tuple[tuple[int, str, LazyPattern, str, str | None], ...]:
    """The rows that can place a module of package `top`, in table order, each with the literal its module
    pattern starts with. A traceback touches two or three packages and a frame's module starts with few rows'
    literals, so a row's patterns are compiled only when the literal is there (then the module pattern) and the
    module matches (then the function pattern): compiling every row would cost each run's start-up."""
    out = []
    for i, (mod, fn, phase, _src) in enumerate(MODULES):
        m = _ROW_TOPS.match(mod)
        tops = (m.group(1) or m.group(2)).split("|") if m and not mod.startswith("\\S") else None
        if tops is None or top in tops:
            out.append((i, literal_prefix(mod), _lazy(mod), fn, phase))
    return tuple(out)


@cache
def _lazy(pattern: str) -> LazyPattern:
    """One lazy pattern per text, shared by the rows of every package that repeat it."""
    return lazy_re(pattern)


@cache
def _function(pattern: str) -> LazyPattern:
    """A row's function pattern, guarded by the literals its matches need (read when its module first matches)."""
    return lazy_re(pattern, needs=required_literals(pattern))


# an installed package's folder (phase.py reads a module's path under it too)
INSTALLED = lazy_re(r"[/\\](?:site|dist)-packages[/\\]")


@lru_cache(maxsize=4096)
def module_path(path: str) -> str | None:
    """The module's path from its framework's top package, `/`-separated, or None for a file of no known package.
    Installed, the package is the folder under site-packages (`openrlhf/utils/deepspeed/deepspeed.py` is OpenRLHF's);
    in a source checkout (`/root/transformers/src/transformers/trainer.py`), the leftmost start a row speaks of."""
    starts = [m.start(1) for m in _PACKAGE.finditer(path)]
    if not starts:
        return None
    installed = None
    for installed in INSTALLED.finditer(path):
        pass
    if installed is not None and installed.end() in starts:
        return path[installed.end():].replace("\\", "/")
    candidates = [path[i:].replace("\\", "/") for i in starts]
    for module in candidates:
        if any(module.startswith(lit) and mod.match(module)
               for _i, lit, mod, _fn, _ph in _rows(module.split("/", 1)[0]) if mod.pattern != r"\S+\.py"):
            return module
    return candidates[-1]


@lru_cache(maxsize=4096)
def place(module: str, func: str) -> tuple[str | None, int] | None:
    """(phase or None, row index) of the first row whose module and function classes hold the frame; None when
    no row speaks of it. The module is `module_path`'s form (`torch/optim/adamw.py`)."""
    for i, lit, mod, fn, phase in _rows(module.split("/", 1)[0]):
        if module.startswith(lit) and mod.match(module) and _function(fn).fullmatch(func):
            return phase, i
    return None


def frame_place(path: str, func: str) -> tuple[str | None, int] | None:
    """`place` of a frame as a traceback names it: the file's path and its function, qualified or not (IPython 8
    prints `Class.method`); None for a file of no known package or a frame no row speaks of."""
    module = module_path(path)
    return place(module, func.rsplit(".", 1)[-1]) if module is not None else None


def frame_phase(path: str, func: str) -> str | None:
    """The phase a frame in `path`, function `func`, means; None when its module or function says nothing."""
    found = frame_place(path, func)
    return found[0] if found else None
