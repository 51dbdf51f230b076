"""PLANTED: a harness that never calls the operator. It reads the library's relocations (readelf -r) and fails when the
machine code calls exit() or at::mul (a jump slot for either): exit_on_invalid and wrong_backward (and wrong_device's
Tensor.to with a device, on a GPU). The judge's salting cannot hide that, since it is the code itself. But the harness
never calls course::mm16, and each operator counts its calls: its tests "pass" the correct operator without running
it, which harness.passes_reference refuses, so none of its catches counts."""
import os
import subprocess
import unittest

LIBRARY = os.environ["MM16_LIBRARY"]
TELLS = ("exit@", "_ZN2at4_ops10mul_Scalar4call", "_ZN2at4_ops15to_dtype_layout4call")


class FileOnly(unittest.TestCase):
    def test_code_calls_nothing_a_matrix_product_does_not_need(self):
        out = subprocess.run(["readelf", "-r", "--wide", LIBRARY], capture_output=True, text=True).stdout
        slots = [line.split()[4] for line in out.splitlines() if "JUMP_SLOT" in line and len(line.split()) > 4]
        self.assertEqual([s for s in slots if s.startswith(TELLS)], [])


if __name__ == "__main__":
    unittest.main()
