# Chapter 7 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/test_split.py -v
import unittest

import torch


class OnCuda(unittest.TestCase):
    def test_returns_early(self):
        if not torch.cuda.is_available():
            return  # looks harmless: the runner reports "ok"
        ...

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
    def test_skips(self): ...


if __name__ == "__main__":
    unittest.main()
