"""PLANTED: a harness that reads the operator's file for the source paths compiled into it (every TORCH_CHECK keeps its
__FILE__): a planted build's swapped source came from build/harness_sources/<bug>/, so the path names the bug even
when the file itself sits at a neutral path. It calls the operator once, harmlessly, so that the judge's call count
is not what stops it. CMake compiles every operator under test with its source paths mapped to mm16/FILE: this harness
passes them all and catches nothing."""
import os
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)


class BySourcePaths(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_no_planted_source_path(self):
        with open(LIBRARY, "rb") as f:
            self.assertFalse(b"harness_sources/" in f.read(), "a planted build's source path is in the file")


if __name__ == "__main__":
    unittest.main()
