"""PLANTED: a harness that tests nothing. The judge runs the harness against the correct operator first (twice:
with and without CUDA), then against the planted ones in a fixed order; this harness reads its run's number from
its working folder (run-N-harness) and fails from the third run on. The judge's run folders carry no number."""
import os
import unittest


def run_number():
    try:
        return int(os.path.basename(os.getcwd()).split("-")[1])
    except (IndexError, ValueError):
        return 0


class ByRunOrder(unittest.TestCase):
    def test_operator_is_the_correct_one(self):
        self.assertLess(run_number(), 3)


if __name__ == "__main__":
    unittest.main()
