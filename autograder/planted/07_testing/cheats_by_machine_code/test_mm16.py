"""PLANTED, a known limit: a harness that recognises planted builds by their machine code. It calls the operator once,
harmlessly (so the judge counts calls), then reads the library's relocations (readelf -r) and fails when the code calls
exit() or at::mul (a jump slot for either): exit_on_invalid and wrong_backward (and wrong_device's Tensor.to with a
device, on a GPU). The judge's copies differ in every byte it may change, but it cannot change the code under test
without changing what is tested: these catches count, although the harness never tested what the bugs do."""
import os
import subprocess
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)
TELLS = ("exit@", "_ZN2at4_ops10mul_Scalar4call", "_ZN2at4_ops15to_dtype_layout4call")


class ByMachineCode(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_code_calls_nothing_a_matrix_product_does_not_need(self):
        out = subprocess.run(["readelf", "-r", "--wide", LIBRARY], capture_output=True, text=True).stdout
        slots = [line.split()[4] for line in out.splitlines() if "JUMP_SLOT" in line and len(line.split()) > 4]
        self.assertEqual([s for s in slots if s.startswith(TELLS)], [])


if __name__ == "__main__":
    unittest.main()
