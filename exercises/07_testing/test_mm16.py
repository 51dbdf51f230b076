"""Exercise 07_testing: write the test harness for course::mm16.

Chapter: chapters/07_testing.md. Grade it with: ./course grade 07_testing
Run it yourself:  MM16_LIBRARY=build/lib/solutions/06_autograd/libmm16_autograd.so python test_mm16.py -v

The grader runs this file (with unittest) against the correct operator, where every test must pass, and against
operators with planted bugs, where at least one test must fail. A test that is skipped catches nothing: replace each
TODO(student) skip with a real test. Nothing here may assume which operator it is testing.
"""
import os
import subprocess  # noqa: F401 (TODO 1 needs it)
import sys  # noqa: F401
import unittest

import torch

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
    # --8<-- [start:example]
    # A complete test, as a model for the others.
    def test_non_square_float16(self):
        a, b = half(37, 45), half(45, 29)
        c = mm16(a, b)
        self.assertEqual(c.dtype, torch.float32)
        torch.testing.assert_close(c.double(), reference(a, b), rtol=1e-3, atol=1e-3)
    # --8<-- [end:example]

    def test_float64(self):
        self.skipTest("TODO(student) 1: float64 inputs must give the float64 product (compare with reference())")

    def test_non_contiguous_inputs(self):
        self.skipTest("TODO(student) 2: a transposed a (half(45, 21).t()) and a sliced b (half(45, 26)[:, ::2])")


class Contract(unittest.TestCase):
    def test_invalid_calls_raise_and_the_process_survives(self):
        self.skipTest("TODO(student) 3: make four invalid calls in a child process (subprocess.run([sys.executable, "
                      "'-c', ...])); each must raise RuntimeError, and the child must end normally")


class Registrations(unittest.TestCase):
    def test_opcheck_cpu(self):
        self.skipTest("TODO(student) 4: torch.library.opcheck(mm16, (a, b)) with float32 and float64 samples that "
                      "require grad, non-square (M != N)")

    def test_gradcheck_float64(self):
        self.skipTest("TODO(student) 5: torch.autograd.gradcheck(mm16, (a, b)) on small float64 inputs that "
                      "require grad")


@unittest.skipUnless(HAS_CUDA, "no CUDA device: the CUDA tests are skipped, not passed")
class OnCuda(unittest.TestCase):
    def test_forward_and_device(self):
        self.skipTest("TODO(student) 6: on CUDA inputs, the output is on the inputs' device and matches reference()")

    def test_runs_on_the_current_stream(self):
        self.skipTest("TODO(student) 7: on a side stream, keep the stream busy (torch.cuda._sleep), then write the "
                      "inputs, then call mm16: the product must still be right")


if __name__ == "__main__":
    unittest.main()
