# Chapter 11 shows this script and its output: what one call costs on the host, by the way it reaches the same work.
# Each row is the median, over 15 rounds of 300 calls, of one round's time per call (a CUDA device is synchronised
# before and after each round, never between calls), on 16 x 16 float16 inputs, so the host's cost dominates.
# On any machine it times one allocation reached four ways; with a CUDA device it also times the Triton launch of
# exercise 11's mm16_kernel three ways, and cuBLAS for scale.
#   python site_tools/examples/python_op_overhead.py [DEMO_OPS_LIBRARY]   (default: build/examples/libcourse_demo_ops.so)
import importlib.util
import os
import statistics
import sys
import time

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def median_us(fn, a, b, rounds=15, calls=300):
    def wait():
        if device == "cuda":
            torch.cuda.synchronize()

    for _ in range(50):  # first calls: caches, lazy initialisation
        fn(a, b)
    per_call = []
    for _ in range(rounds):
        wait()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(a, b)
        wait()
        per_call.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(per_call)


# --8<-- [start:ways]
# The same body, one allocation and no kernel, reached four ways
def alloc(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.float32)


alloc_custom_op = torch.library.custom_op("overhead::alloc_custom", alloc, mutates_args=())
alloc_triton_op = torch.library.triton_op("overhead::alloc_triton", alloc, mutates_args=())
torch.ops.load_library(sys.argv[1] if len(sys.argv) > 1 else "build/examples/libcourse_demo_ops.so")
alloc_cpp = torch.ops.overhead.alloc_cpp  # TORCH_LIBRARY in C++ (site_tools/examples/demo_ops.cpp)
# --8<-- [end:ways]

rows = [
    ("allocation only", "direct Python call", alloc),
    ("allocation only", "custom_op", alloc_custom_op),
    ("allocation only", "triton_op", alloc_triton_op),
    ("allocation only", "TORCH_LIBRARY (C++)", alloc_cpp),
]
header = f"device: {torch.cuda.get_device_name() if device == 'cuda' else 'CPU'}, torch {torch.__version__}"
if device == "cuda":  # the launch of a real kernel: Triton compiles it for this GPU at its first call
    import triton

    path = os.path.join(os.path.dirname(__file__), "..", "..", "solutions", "11_python_ops", "python_ops.py")
    spec = importlib.util.spec_from_file_location("python_ops", path)
    python_ops = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(python_ops)  # registers course::mm16 (triton_op) and course::scale_bias_ (custom_op)

    def launch(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        N = b.shape[1]
        c = a.new_empty((M, N), dtype=torch.float32)
        grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
        strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        python_ops.mm16_kernel[grid](a, b, c, M, N, K, *strides, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
        return c

    rows += [
        ("mm16_kernel launch", "direct Python call", launch),
        ("mm16_kernel launch", "custom_op", torch.library.custom_op("overhead::launch", launch, mutates_args=())),
        ("mm16_kernel launch", "triton_op (course::mm16)", torch.ops.course.mm16),
        ("cuBLAS", "torch.mm, float16 out (for scale)", torch.mm),
    ]
    header += f", triton {triton.__version__}"

a = torch.randn(16, 16, device=device).half()
b = torch.randn(16, 16, device=device).half()
print(header)
print("| body | how it is called | median per call |")
print("| --- | --- | ---: |")
for body, how, fn in rows:
    print(f"| {body} | {how} | {median_us(fn, a, b):.1f} us |")
