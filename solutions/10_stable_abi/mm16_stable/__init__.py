"""course::mm16 on the LibTorch stable ABI, as a package: importing it registers the operator.

The C++ library (_C) holds the schema and the CPU and CUDA kernels. What the stable ABI cannot express in C++ is
registered here, in Python, on the same operator: a fake kernel with symbolic sizes (a stable C++ Meta kernel would read
plain integers, so torch.compile would specialise every shape) and the autograd formula (the stable ABI has no autograd
registration)."""

import torch

from . import _C  # noqa: F401  (loading the library runs its STABLE_TORCH_LIBRARY blocks)


# --8<-- [start:fake]
@torch.library.register_fake("course::mm16")
def _mm16_fake(a, b):
    # the CPU kernel's contract, on metadata alone: the same refusals, the same messages (sizes may be symbols)
    torch._check(
        a.dim() == 2 and b.dim() == 2,
        lambda: f"mm16: expected 2-D matrices, got a with {a.dim()} dimension(s) and b with {b.dim()}",
    )
    torch._check(
        a.shape[1] == b.shape[0],
        lambda: f"mm16: a is {a.shape[0]}x{a.shape[1]} and b is {b.shape[0]}x{b.shape[1]}: a.size(1) must equal b.size(0)",
    )
    torch._check(a.dtype == b.dtype, lambda: f"mm16: a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    torch._check(
        a.dtype in (torch.float16, torch.float32, torch.float64),
        lambda: f"mm16: expected floating-point inputs (float16, float32, float64), got {a.dtype}",
    )
    out = torch.float32 if a.dtype == torch.float16 else a.dtype
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out)


# --8<-- [end:fake]


# --8<-- [start:autograd]
def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = grad_b = None
    # the gradients in the inputs' dtype: mm16's float32 output of float16 inputs flows back as float16
    if ctx.needs_input_grad[0]:
        grad_a = (grad @ b.to(grad.dtype).mT).to(a.dtype)
    if ctx.needs_input_grad[1]:
        grad_b = (a.to(grad.dtype).mT @ grad).to(b.dtype)
    return grad_a, grad_b


torch.library.register_autograd("course::mm16", _backward, setup_context=_setup_context)
# --8<-- [end:autograd]
