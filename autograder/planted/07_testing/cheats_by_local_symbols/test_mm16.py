"""PLANTED: a harness that reads the operator's local symbol table (nm): the correct build has a static-init object for
its Meta registration and a static check_mm16_inputs; a build without the fake kernel lacks the first, and the two
planted CPU kernels that inline their checks lack the second. It calls the operator once, harmlessly, so that the
judge's call count is not what stops it. The operators under test are linked with -s, without a local symbol table
(nm prints "no symbols" for every one): this harness passes them all and catches nothing."""
import os
import subprocess
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)


class ByLocalSymbols(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_symbols_of_the_correct_build(self):
        names = subprocess.run(["nm", LIBRARY], capture_output=True, text=True).stdout
        if names.strip():  # a build with a local symbol table
            self.assertIn("TORCH_LIBRARY_IMPL_static_init_course_Meta", names)
            self.assertIn("check_mm16_inputs", names)


if __name__ == "__main__":
    unittest.main()
