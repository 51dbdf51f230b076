# Chapter 7 shows this script and how it ends; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build, against the planted library that calls exit(1):
#   MM16_LIBRARY=build/harness_targets/exit_on_invalid/libmm16_autograd.so \
#       python site_tools/examples/test_in_process.py -v
import os
import unittest

import torch

torch.ops.load_library(os.environ["MM16_LIBRARY"])
mm16 = torch.ops.course.mm16


class InProcess(unittest.TestCase):
    def test_1d_input_raises(self):
        with self.assertRaises(RuntimeError):
            mm16(torch.ones(4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))

    def test_forward(self):
        a, b = torch.randn(8, 12).half(), torch.randn(12, 4).half()
        torch.testing.assert_close(mm16(a, b).double(), a.double() @ b.double(), rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    unittest.main()
