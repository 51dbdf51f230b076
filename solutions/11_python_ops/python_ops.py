"""Reference solution of exercise 11_python_ops: operators defined in Python, and a Triton kernel as an operator.

course::mm16 is a Triton kernel (a[M, K] @ b[K, N], float16 in, float32 accumulation and out; float32 and float64
kept end to end) registered with torch.library.triton_op and launched through torch.library.wrap_triton, so that
torch.compile sees the kernel itself; its fake kernel and its backward are registered on the same operator.
course::scale_bias_ is a torch.library.custom_op that changes its argument `out` in place and says so in
mutates_args.

Importing this module registers both operators. Without a GPU, Triton runs through its interpreter: set
TRITON_INTERPRET=1 in the environment before this module is imported (Triton decides per @triton.jit, at import).
Chapter: chapters/11_python_ops.md. Grade it with: ./course grade 11_python_ops solutions/11_python_ops
"""

import contextlib

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

# --8<-- [start:kernel]
BLOCK_M, BLOCK_N, BLOCK_K = 16, 16, 16  # tl.dot needs every block side >= 16


@triton.jit
def mm16_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # one program computes one BLOCK_M x BLOCK_N tile of c
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # the accumulator has the output's element type: float32 for float16 and float32 inputs, float64 for float64
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=c_ptr.dtype.element_ty)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        # an edge tile reads only what lies inside the matrices; the rest of the block is zero, which adds nothing
        a = tl.load(a_ptr + rows[:, None] * stride_am + k[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        # "ieee": float32 inputs multiplied in float32, not rounded to TF32 on tensor cores
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))
# --8<-- [end:kernel]


def check_mm16_inputs(a, b):
    """The contract of chapter 3's mm16, with its messages; torch._check works on real, fake and symbolic sizes."""
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
    torch._check(
        a.device == b.device, lambda: f"mm16: a and b must be on the same device, got {a.device} and {b.device}"
    )


def mm16_out_dtype(dtype):
    # float16 inputs give a float32 result (accumulated in float32); float32 and float64 keep theirs
    return torch.float32 if dtype == torch.float16 else dtype


# --8<-- [start:op]
@triton_op("course::mm16", mutates_args=())
def mm16(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    check_mm16_inputs(a, b)
    M, K = a.shape
    N = b.shape[1]
    c = a.new_empty((M, N), dtype=mm16_out_dtype(a.dtype))
    if M == 0 or N == 0:  # an empty output: nothing to launch (a grid with no programs)
        return c
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    # Triton launches on the current CUDA device (and its current stream): make it the inputs' device
    with torch.cuda.device(a.device) if a.is_cuda else contextlib.nullcontext():
        # wrap_triton: under torch.compile the launch becomes a node of the graph that Inductor compiles with the rest
        wrap_triton(mm16_kernel)[grid](a, b, c, M, N, K,
                                       a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return c
# --8<-- [end:op]


# --8<-- [start:fake]
# triton_op registers the function itself as the fake kernel (it must trace with fake tensors anyway); a fake kernel
# registered here replaces it, and states the output's metadata without the launch.
@mm16.register_fake
def _mm16_fake(a, b):
    check_mm16_inputs(a, b)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=mm16_out_dtype(a.dtype))
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


mm16.register_autograd(_backward, setup_context=_setup_context)
# --8<-- [end:autograd]


# --8<-- [start:epilogue]
@torch.library.custom_op("course::scale_bias_", mutates_args={"out"})
def scale_bias_(out: torch.Tensor, scale: float, bias: torch.Tensor) -> None:
    """out = out * scale + bias, in place (bias[N] added to every row of out[M, N]); returns nothing."""
    torch._check(out.dim() == 2, lambda: f"scale_bias_: expected a 2-D out, got {out.dim()} dimension(s)")
    torch._check(
        bias.dim() == 1 and bias.shape[0] == out.shape[1],
        lambda: f"scale_bias_: bias must have shape [{out.shape[1]}] (out's columns), got {list(bias.shape)}",
    )
    torch._check(
        bias.dtype == out.dtype and bias.device == out.device,
        lambda: f"scale_bias_: bias must match out's dtype and device, got {bias.dtype} on {bias.device} and "
        f"{out.dtype} on {out.device}",
    )
    out.mul_(scale).add_(bias)


@scale_bias_.register_fake
def _scale_bias_fake(out, scale, bias):
    return None  # it returns nothing; what it changes is declared in mutates_args


def mm16_scale_bias(a, b, scale, bias):
    """mm16 followed by the epilogue: (a @ b) * scale + bias."""
    c = torch.ops.course.mm16(a, b)
    torch.ops.course.scale_bias_(c, scale, bias)
    return c
# --8<-- [end:epilogue]
