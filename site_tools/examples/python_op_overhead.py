# Chapter 11 shows this script and its output (GPU only): what a call costs on the host, by the way it reaches its
# work. Each row is the median, over 15 rounds of 300 calls, of one round's time per call (the device synchronised
# before and after each round, not between calls), on 16 x 16 float16 inputs, so the host's cost dominates.
# Run from the repository root on a machine with a CUDA GPU:  python site_tools/examples/python_op_overhead.py
import importlib.util
import statistics
import time

import torch
import triton
from torch.utils.cpp_extension import load_inline

spec = importlib.util.spec_from_file_location("python_ops", "solutions/11_python_ops/python_ops.py")
python_ops = importlib.util.module_from_spec(spec)
spec.loader.exec_module(python_ops)  # registers course::mm16 (triton_op) and course::scale_bias_ (custom_op)


def median_us(fn, a, b, rounds=15, calls=300):
    for _ in range(50):
        fn(a, b)
    times = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(a, b)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


# the same body five ways: one allocation, no kernel
def alloc(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.float32)


alloc_custom = torch.library.custom_op("overhead::alloc_custom", alloc, mutates_args=())
alloc_triton = torch.library.triton_op("overhead::alloc_triton", alloc, mutates_args=())
CPP = """
#include <ATen/ATen.h>
#include <torch/library.h>
at::Tensor alloc_cpp(const at::Tensor& a, const at::Tensor& b) {
  return at::empty({a.size(0), b.size(1)}, a.options().dtype(at::kFloat));
}
TORCH_LIBRARY(overhead, m) { m.def("alloc_cpp(Tensor a, Tensor b) -> Tensor"); }
TORCH_LIBRARY_IMPL(overhead, CompositeExplicitAutograd, m) { m.impl("alloc_cpp", &alloc_cpp); }
"""
try:
    load_inline("overhead_cpp", cpp_sources=CPP, is_python_module=False, extra_cflags=["-O2"])
    alloc_cpp = torch.ops.overhead.alloc_cpp
except Exception as e:  # no compiler here: the row says so
    alloc_cpp, cpp_error = None, f"{type(e).__name__}"


# the same body three ways: allocation and the Triton launch of mm16_kernel
def launch(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = a.new_empty((M, N), dtype=torch.float32)
    grid = (triton.cdiv(M, python_ops.BLOCK_M), triton.cdiv(N, python_ops.BLOCK_N))
    python_ops.mm16_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=16,
        BLOCK_N=16,
        BLOCK_K=16,
    )
    return c


launch_custom = torch.library.custom_op("overhead::launch_custom", launch, mutates_args=())

a = torch.randn(16, 16, device="cuda").half()
b = torch.randn(16, 16, device="cuda").half()
rows = [
    ("allocation only", "direct Python call", alloc),
    ("allocation only", "custom_op", alloc_custom),
    ("allocation only", "triton_op", alloc_triton),
    ("allocation only", "TORCH_LIBRARY (C++)", alloc_cpp),
    ("mm16_kernel launch", "direct Python call", launch),
    ("mm16_kernel launch", "custom_op", launch_custom),
    ("mm16_kernel launch", "triton_op (course::mm16)", torch.ops.course.mm16),
    ("cuBLAS", "aten::mm, float16 out (for scale)", torch.mm),
]
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
print("| body | how it is called | median per call (us) |")
print("| --- | --- | ---: |")
for body, how, fn in rows:
    value = f"{median_us(fn, a, b):.1f}" if fn is not None else f"n/a ({cpp_error})"
    print(f"| {body} | {how} | {value} |")
