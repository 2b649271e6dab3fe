"""Liger's fused linear cross-entropy, restated in torch ops so its memory can be traced on fake tensors.

Liger's Triton kernels cannot run on fake tensors, but they only write into tensors its Python code has
allocated beforehand; what the kernel allocates is therefore what the Python around it allocates. This
follows liger_kernel/ops/fused_linear_cross_entropy.py (fused_linear_cross_entropy_forward/_backward,
linkedin/Liger-Kernel) allocation by allocation:

- the tokens are cut into chunks of next_power_of_2(ceil(tokens / ceil(vocab / hidden))) rows;
- per chunk, the chunk's logits (`x @ W.t()`, in the matmul's dtype, under autocast the compute dtype); the
  cross-entropy kernel writes the loss into a preallocated fp32 row and the logits' gradient in place;
- the hidden states' gradient for every token (`zeros_like(hidden)`) is filled chunk by chunk during the
  forward, and so is the output layer's weight gradient when that weight trains (`zeros_like(W)`);
- backward only hands those two back (scaled in place), so the logits never exist for all tokens at once.

Liger's loss entry (transformers/model/loss_utils.py LigerForCausalLMLoss) pads the labels by one and flattens
the hidden states as a view: no copy of the hidden states either. Imports torch: load it only for a trace.
"""
from __future__ import annotations

import torch


def chunk_rows(tokens: int, hidden: int, vocab: int) -> int:
    """Rows per chunk: Liger's inc_factor = cdiv(V, H); chunk = next_power_of_2(cdiv(BT, inc_factor))."""
    inc = -(-vocab // max(1, hidden))
    rows = -(-tokens // max(1, inc))
    return 1 << (max(1, rows) - 1).bit_length()


class LinearCrossEntropy(torch.autograd.Function):
    """loss = mean cross-entropy of (hidden @ weight.t()) against target, with Liger's allocations."""

    @staticmethod
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, target: torch.Tensor):  # type: ignore[override]
        tokens, width = hidden.shape
        vocab = weight.shape[0]
        chunk = chunk_rows(tokens, width, vocab)
        wants_input = ctx.needs_input_grad[0]
        wants_weight = ctx.needs_input_grad[1]
        grad_input = torch.zeros_like(hidden)
        grad_weight = torch.zeros_like(weight) if wants_input and wants_weight else None
        loss_rows = torch.zeros(tokens, dtype=torch.float32, device=hidden.device)
        for start in range(0, tokens, chunk):
            rows = hidden[start:start + chunk]
            logits = rows @ weight.t()          # chunk x V: the only logits alive; the kernel turns them into
            if wants_input:                     # their gradient in place and writes loss_rows
                grad_input[start:start + chunk] = logits @ weight
            if grad_weight is not None:
                if grad_weight.dtype == torch.float32 and logits.dtype in (torch.float16, torch.bfloat16):
                    # Ampere+ GPUs: addmm(..., out_dtype=float32, out=grad_weight) accumulates in place; only
                    # the chunk's input is cast to the logits' dtype (no V x H temporary; values do not matter)
                    cast = rows.to(logits.dtype)
                    del cast
                else:
                    grad_weight += torch.mm(logits.t(), rows.to(logits.dtype)).float()
            del logits
        loss = loss_rows.sum() / max(1, tokens)
        if grad_weight is not None:
            grad_weight = grad_weight.to(weight.dtype)
        ctx.save_for_backward(grad_input, grad_weight if grad_weight is not None else torch.empty(0))
        ctx.has_weight_grad = grad_weight is not None
        return loss

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):  # type: ignore[override]
        grad_input, grad_weight = ctx.saved_tensors
        # Liger's element_mul_kernel scales both in place by grad_output (skipped when it is 1.0)
        return grad_input, (grad_weight if ctx.has_weight_grad else None), None


__all__ = ["LinearCrossEntropy", "chunk_rows"]
