"""PLANTED: a harness that tells the runs apart by their order. The judge used to run the correct operator first (with
CUDA, then without), then the planted ones; this harness works out whether it is in the first run from
  * a number in its run folder's name (the judge once numbered them run-1-harness, run-2-harness, ...);
  * how long before its own process started its files were written: the judge wrote the submission once per grade,
    so every earlier run shows as seconds that passed before this one began (a run lasts about as long as a process
    takes to start, which it measures on itself).
It takes the first run, and any run without CUDA (the judge's CPU-only run is the correct operator), for the correct
operator and fails the others. It calls the operator once, harmlessly, so that the judge's call count is not what
stops it. The judge names run folders with letters only, writes the submission's files anew just before each run, and
runs the operators in an order shuffled from the seed: every run looks like the first, so this harness passes them
all and catches nothing."""
import os
import re
import time
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)
HERE = os.path.dirname(os.path.abspath(__file__))


def process_age():
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    with open("/proc/self/stat") as f:
        started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    return uptime - started


class ByRunOrder(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_first_run(self):
        if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
            return
        number = re.search(r"\d+", os.path.basename(os.getcwd()))
        self.assertLess(int(number.group()) if number else 1, 2, "a later run, by its folder's number")
        age = process_age()
        written = min(os.stat(HERE).st_mtime, os.stat(os.path.abspath(__file__)).st_mtime)
        before = time.time() - age - written
        self.assertLess(before, age / 2, f"a later run: its files were written {before:.1f} s before it started")


if __name__ == "__main__":
    unittest.main()
