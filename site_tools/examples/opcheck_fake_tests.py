# Chapter 5 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/opcheck_fake_tests.py
import warnings

import torch

warnings.simplefilter("ignore")
torch.ops.load_library("build/lib/solutions/03_cpu/libmm16_cpu.so")  # CPU kernel only: no Meta kernel yet
mm16 = torch.ops.course.mm16.default
a, b = torch.randn(5, 3, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)


def opcheck():
    results = torch.library.opcheck(mm16, (a, b), raise_exception=False)
    return {
        test: result if result == "SUCCESS" else f"FAILED ({type(result).__name__})" for test, result in results.items()
    }


print("no fake kernel:", opcheck())

seen = set()  # what the fake kernel was called with


@torch.library.register_fake("course::mm16")
def _(a, b):
    seen.add(f"{type(a).__name__} on {a.device.type}")
    out_dtype = torch.float32 if a.dtype == torch.float16 else a.dtype
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


print("a fake kernel:", opcheck())
print("opcheck called the fake kernel with:", sorted(seen))
