# Chapter 5 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/fake_kernel_in_python.py
import torch

torch.ops.load_library("build/lib/solutions/03_cpu/libmm16_cpu.so")  # CPU kernel only, no Meta kernel


@torch.library.register_fake("course::mm16")
def _(a, b):
    torch._check(a.dim() == 2 and b.dim() == 2, lambda: "mm16: expected 2-D matrices")
    torch._check(a.shape[1] == b.shape[0], lambda: "mm16: a.size(1) must equal b.size(0)")
    out_dtype = torch.float32 if a.dtype == torch.float16 else a.dtype
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def f(a, b):
    return torch.ops.course.mm16(a, b) * 2


a = torch.randn(37, 45, dtype=torch.float16)
b = torch.randn(45, 29, dtype=torch.float16)
c = torch.compile(f, fullgraph=True)(a, b)
print(c.shape, c.dtype, torch.allclose(c, 2 * (a.double() @ b.double()).float(), rtol=1e-3, atol=1e-3))
meta = torch.ops.course.mm16(a.to("meta"), b.to("meta"))
print(meta.shape, meta.dtype, meta.stride(), meta.device)
