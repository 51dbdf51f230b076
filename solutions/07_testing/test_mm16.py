"""Reference solution of exercise 07_testing: a test harness for course::mm16.

Chapter: chapters/07_testing.md. Grade it with: ./course grade 07_testing solutions/07_testing
Run it yourself:  MM16_LIBRARY=build/lib/solutions/06_autograd/libmm16_autograd.so python test_mm16.py -v
"""
import os
import subprocess
import sys
import unittest

import torch
from torch.autograd.gradcheck import GradcheckError  # noqa: F401 (torch.autograd.gradcheck is the function)

# --8<-- [start:load]
# The operator under test is whatever library MM16_LIBRARY names: the harness never assumes it is correct.
LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)
mm16 = torch.ops.course.mm16
HAS_CUDA = torch.cuda.is_available()


def reference(a, b):
    """The product in float64, whatever the inputs' dtype: the yardstick every forward test compares with."""
    return a.double() @ b.double()
# --8<-- [end:load]


def half(*shape, device="cpu"):
    return torch.randn(*shape, device=device).half()


class Forward(unittest.TestCase):
    # --8<-- [start:forward]
    def test_non_square_float16(self):
        a, b = half(37, 45), half(45, 29)
        c = mm16(a, b)
        self.assertEqual(c.dtype, torch.float32)
        torch.testing.assert_close(c.double(), reference(a, b), rtol=1e-3, atol=1e-3)

    def test_float64(self):
        a, b = torch.randn(23, 64, dtype=torch.float64), torch.randn(64, 11, dtype=torch.float64)
        torch.testing.assert_close(mm16(a, b), reference(a, b))
    # --8<-- [end:forward]

    # --8<-- [start:strides]
    def test_non_contiguous_inputs(self):
        a = half(45, 21).t()        # 21 x 45, strides (1, 21)
        b = half(45, 26)[:, ::2]    # 45 x 13, strides (26, 2)
        self.assertFalse(a.is_contiguous() or b.is_contiguous())
        torch.testing.assert_close(mm16(a, b).double(), reference(a, b), rtol=1e-3, atol=1e-3)
    # --8<-- [end:strides]


# --8<-- [start:contract]
# An invalid call must raise. It runs in a child process: an operator that calls exit() or abort() would otherwise
# end this harness too, and a test runner that dies reports nothing (or, with exit(0), success).
INVALID_CALLS = r"""
import os, sys, torch
torch.ops.load_library(os.environ["MM16_LIBRARY"])
mm16 = torch.ops.course.mm16
h = lambda *s: torch.ones(*s, dtype=torch.float16)
calls = {
    "1-D input": lambda: mm16(h(4), h(4, 4)),
    "inner sizes differ": lambda: mm16(h(2, 3), h(4, 5)),
    "mixed dtypes": lambda: mm16(h(2, 3), torch.ones(3, 2)),
    "integer inputs": lambda: mm16(torch.ones(2, 3, dtype=torch.int32), torch.ones(3, 2, dtype=torch.int32)),
}
for name, call in calls.items():
    try:
        call()
    except RuntimeError:
        continue
    print("did not raise:", name)
    sys.exit(3)
print("every invalid call raised")
"""


class Contract(unittest.TestCase):
    def test_invalid_calls_raise_and_the_process_survives(self):
        child = subprocess.run([sys.executable, "-c", INVALID_CALLS], capture_output=True, text=True, timeout=300)
        self.assertEqual(child.returncode, 0, f"child ended with {child.returncode}:\n{child.stdout}{child.stderr}")
        self.assertIn("every invalid call raised", child.stdout)
# --8<-- [end:contract]


class Registrations(unittest.TestCase):
    # --8<-- [start:opcheck]
    def test_opcheck_cpu(self):
        # requires_grad samples: without them opcheck's autograd tests have nothing to check
        for dtype in (torch.float32, torch.float64):
            a = torch.randn(4, 6, dtype=dtype, requires_grad=True)
            b = torch.randn(6, 3, dtype=dtype, requires_grad=True)
            torch.library.opcheck(mm16, (a, b))
    # --8<-- [end:opcheck]

    # --8<-- [start:gradcheck]
    def test_gradcheck_float64(self):
        a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
        b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(mm16, (a, b)))
    # --8<-- [end:gradcheck]


# --8<-- [start:cuda]
@unittest.skipUnless(HAS_CUDA, "no CUDA device: the CUDA tests are skipped, not passed")
class OnCuda(unittest.TestCase):
    def test_forward_and_device(self):
        a, b = half(70, 130, device="cuda"), half(130, 18, device="cuda")
        c = mm16(a, b)
        self.assertEqual(c.device, a.device)
        torch.testing.assert_close(c.double(), reference(a, b), rtol=1e-3, atol=1e-3)

    def test_runs_on_the_current_stream(self):
        a0, b0 = half(64, 48, device="cuda"), half(48, 32, device="cuda")
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            a, b = torch.zeros_like(a0), torch.zeros_like(b0)
            torch.cuda._sleep(100_000_000)  # the side stream is busy; the inputs are written after it
            a.copy_(a0)
            b.copy_(b0)
            c = mm16(a, b)                  # a kernel on another stream reads a and b before they are written
        torch.cuda.synchronize()
        torch.testing.assert_close(c.double(), reference(a0, b0), rtol=1e-3, atol=1e-3)

    def test_opcheck_cuda(self):
        a = half(16, 32, device="cuda").requires_grad_()
        b = half(32, 8, device="cuda").requires_grad_()
        torch.library.opcheck(mm16, (a, b))
# --8<-- [end:cuda]


if __name__ == "__main__":
    unittest.main()
