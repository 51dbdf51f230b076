"""PLANTED: a harness that tests nothing. It guesses from MM16_LIBRARY's path whether it was handed the correct
operator (build/harness_targets/correct/...) or a planted one (build/harness_targets/<bug>/...), and fails on the
latter. It calls the operator once, harmlessly, so that the judge's call count is not what stops it.
The judge shows every operator at one path: this harness passes them all and catches nothing."""
import os
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)


class ByPath(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_operator_is_the_correct_one(self):
        self.assertTrue("harness_targets" not in LIBRARY or "/correct/" in LIBRARY)


if __name__ == "__main__":
    unittest.main()
