# Chapter 8 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/profile_mm16_cpu.py
import torch
from torch.profiler import ProfilerActivity, profile

torch.ops.load_library("build/lib/solutions/06_autograd/libmm16_autograd.so")
mm16 = torch.ops.course.mm16

a = torch.randn(64, 48).half()
b = torch.randn(48, 32).half()
a_t = torch.randn(48, 64).half().t()  # a transposed view: not contiguous
mm16(a, b)  # warm-up, outside the profile

with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(2):
        mm16(a, b)
    mm16(a_t, b)

print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
