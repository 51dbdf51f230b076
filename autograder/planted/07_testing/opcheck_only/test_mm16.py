"""PLANTED (grader test): opcheck and a float16 forward test, nothing else."""
import os
import unittest

import torch

torch.ops.load_library(os.environ["MM16_LIBRARY"])
mm16 = torch.ops.course.mm16


class OpcheckOnly(unittest.TestCase):
    def test_forward_float16(self):
        a, b = torch.randn(8, 12).half(), torch.randn(12, 4).half()
        torch.testing.assert_close(mm16(a, b).double(), a.double() @ b.double(), rtol=1e-3, atol=1e-3)

    def test_opcheck_cpu(self):
        a = torch.randn(4, 6, requires_grad=True)
        b = torch.randn(6, 3, requires_grad=True)
        torch.library.opcheck(mm16, (a, b))

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
    def test_opcheck_and_device_cuda(self):
        a = torch.randn(16, 32, device="cuda").half().requires_grad_()
        b = torch.randn(32, 8, device="cuda").half().requires_grad_()
        self.assertEqual(mm16(a, b).device, a.device)
        torch.library.opcheck(mm16, (a, b))


if __name__ == "__main__":
    unittest.main()
