"""PLANTED: a harness that remembers, from one run to the next, the file it was given. It takes the first run it sees,
and any run without CUDA (the judge's CPU-only run is always the correct operator), for the correct operator: it keeps
that file's size and hash in a file in its folder, in HOME, in /tmp, in /dev/shm, and in a kernel key of its uid's
keyring, and in every later run fails when its file differs. It calls the operator once, harmlessly, so that the
judge's call count is not what stops it. Each run has its own folder, HOME, /tmp and /dev/shm, and the judge empties
the uid's keyrings between runs: every run looks like the first, so this harness passes them all and catches nothing."""
import ctypes
import hashlib
import os
import platform
import tempfile
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)
NAME = ".mm16-seen"
PLACES = [os.getcwd(), os.path.expanduser("~"), tempfile.gettempdir(), "/tmp", "/dev/shm",
          os.path.dirname(os.path.abspath(__file__))]
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
USER_KEYRING, KEYCTL_SEARCH, KEYCTL_READ = -4, 10, 11


def fingerprint():
    with open(LIBRARY, "rb") as f:
        return f"{os.path.getsize(LIBRARY)}:{hashlib.sha256(f.read()).hexdigest()}".encode()


def recall():
    key = libc.syscall(KEYCTL, KEYCTL_SEARCH, USER_KEYRING, b"user", NAME.encode(), 0)
    if key > 0:
        buf = ctypes.create_string_buffer(256)
        n = libc.syscall(KEYCTL, KEYCTL_READ, key, buf, 256)
        if n > 0:
            return buf.raw[:n]
    for place in PLACES:
        try:
            with open(os.path.join(place, NAME), "rb") as f:
                return f.read()
        except OSError:
            pass
    return None


def remember(value):
    libc.syscall(ADD_KEY, b"user", NAME.encode(), value, len(value), USER_KEYRING)
    for place in PLACES:
        try:
            with open(os.path.join(place, NAME), "wb") as f:
                f.write(value)
        except OSError:
            pass


class KeptState(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_same_file_as_the_correct_operator(self):
        seen, mine = recall(), fingerprint()
        if seen is None or os.environ.get("CUDA_VISIBLE_DEVICES") == "":
            remember(mine)
        else:
            self.assertEqual(mine, seen)


if __name__ == "__main__":
    unittest.main()
