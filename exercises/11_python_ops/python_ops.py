"""Exercise 11_python_ops: operators defined in Python, and a Triton kernel as an operator.

course::mm16 is a Triton kernel (a[M, K] @ b[K, N], float16 in, float32 accumulation and out; float32 and float64
kept end to end) registered with torch.library.triton_op and launched through torch.library.wrap_triton, so that
torch.compile sees the kernel itself; its fake kernel and its backward are registered on the same operator.
course::scale_bias_ is a torch.library.custom_op that changes its argument `out` in place and says so in
mutates_args.

Importing this module registers both operators. Without a GPU, Triton runs through its interpreter: set
TRITON_INTERPRET=1 in the environment before this module is imported (Triton decides per @triton.jit, at import).
Chapter: chapters/11_python_ops.md. Grade it with: ./course grade 11_python_ops
"""

import contextlib  # noqa: F401 (TODO(student) 3: a context that does nothing, for CPU inputs)

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton  # noqa: F401 (wrap_triton: TODO(student) 3)

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
    # TODO(student) 1: for k0 in range(0, K, BLOCK_K): load the a tile (rows, k0 + ks) and the b tile (k0 + ks, cols)
    #   through their strides, each with a mask that keeps it inside the matrix (other=0.0: an edge tile is zero
    #   past the edge), and accumulate acc = tl.dot(a, b, acc, input_precision="ieee").
    # TODO(student) 2: store acc at c_ptr + rows * stride_cm + cols * stride_cn, masked to the M x N output.
# --8<-- [end:kernel]


# --8<-- [start:checks]
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
# --8<-- [end:checks]


# --8<-- [start:op]
@triton_op("course::mm16", mutates_args=())
def mm16(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    check_mm16_inputs(a, b)
    # TODO(student) 3: allocate c, M x N with mm16_out_dtype(a.dtype) on a's device (a.new_empty); return it at once
    #   when it is empty; otherwise launch mm16_kernel through wrap_triton(mm16_kernel)[grid](...) on a grid of
    #   cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N) programs, with the sizes and all six strides, inside
    #   torch.cuda.device(a.device) for CUDA inputs (Triton launches on the current device).
    raise NotImplementedError("TODO(student) 3 in python_ops.py (mm16): allocate the output and launch mm16_kernel "
                              "through wrap_triton")
# --8<-- [end:op]


# --8<-- [start:fake]
# triton_op registers the function itself as the fake kernel (it must trace with fake tensors anyway); a fake kernel
# registered here replaces it, and states the output's metadata without the launch.
@mm16.register_fake
def _mm16_fake(a, b):
    # TODO(student) 4: the same checks (check_mm16_inputs), then an empty M x N tensor with the output's dtype
    #   (mm16_out_dtype), read from metadata alone: no launch, no data.
    raise NotImplementedError("TODO(student) 4 in python_ops.py (_mm16_fake): return a.new_empty((M, N), dtype=...) "
                              "with float32 for float16 inputs")
# --8<-- [end:fake]


# --8<-- [start:autograd]
# TODO(student) 5: register the backward with mm16.register_autograd(backward, setup_context=...): save a and b;
#   grad_a = grad @ b^T and grad_b = a^T @ grad, each in its input's dtype, only where ctx.needs_input_grad says so.
# --8<-- [end:autograd]


# --8<-- [start:epilogue]
@torch.library.custom_op("course::scale_bias_", mutates_args=())  # TODO(student) 6: declare what it changes
def scale_bias_(out: torch.Tensor, scale: float, bias: torch.Tensor) -> None:
    """out = out * scale + bias, in place (bias[N] added to every row of out[M, N]); returns nothing."""
    # TODO(student) 6: check that out is 2-D and bias is [out.shape[1]] with out's dtype and device (torch._check, with
    #   the sizes in the message), then out = out * scale + bias in place; and say in mutates_args that out changes.
    raise NotImplementedError("TODO(student) 6 in python_ops.py (scale_bias_): out.mul_(scale).add_(bias), and "
                              "mutates_args={\"out\"}")


@scale_bias_.register_fake
def _scale_bias_fake(out, scale, bias):
    return None  # it returns nothing; what it changes is declared in mutates_args


def mm16_scale_bias(a, b, scale, bias):
    """mm16 followed by the epilogue: (a @ b) * scale + bias."""
    c = torch.ops.course.mm16(a, b)
    torch.ops.course.scale_bias_(c, scale, bias)
    return c
# --8<-- [end:epilogue]
