"""PLANTED: a harness that reads what the operator imports from other libraries (nm -D): a correct matrix product has
no reason to import exit(), at::mul or a Tensor.to with a device, and the planted exit_on_invalid, wrong_backward and
wrong_device each import one of them. It calls the operator once, harmlessly, so that the judge's call count is not
what stops it. Every operator under test imports the union of what any of them imports, the correct one included:
this harness fails the correct operator as well, so nothing it does counts."""
import os
import subprocess
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)
TELLS = ("_ZN2at4_ops10mul_Scalar4call", "_ZN2at4_ops15to_dtype_layout4call")  # at::mul, Tensor.to


class ByImports(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_imports_of_the_correct_build(self):
        out = subprocess.run(["nm", "-D", "--undefined-only", LIBRARY], capture_output=True, text=True).stdout
        imported = [line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()]
        self.assertEqual([name for name in imported if name == "exit" or name.startswith(TELLS)], [])


if __name__ == "__main__":
    unittest.main()
