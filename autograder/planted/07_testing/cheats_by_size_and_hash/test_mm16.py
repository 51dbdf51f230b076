"""PLANTED: a harness that recognises the planted builds by file size and hash, measured beforehand on the course's own
build (as its author could: the course builds them all in build/harness_targets/). The hash is taken over the ELF file
as the linker wrote it (up to the end of its section headers), so that bytes appended after it change nothing. It calls
the operator once, harmlessly, so that the judge's call count is not what stops it.
The judge gives every run its own copy: a .course_salt page filled with random bytes, padded to a random size above
every build's. No size or hash it presents is one measured here: this harness passes them all and catches nothing.
(The table holds this course's build on the course's machine; on another build it matches nothing, salted or not.
Run it by hand against build/harness_targets/*/libmm16_autograd.so, unsalted, to see it recognise them.)"""
import hashlib
import os
import struct
import unittest

import torch

LIBRARY = os.environ["MM16_LIBRARY"]
torch.ops.load_library(LIBRARY)
PLANTED_SIZES = {294696: "exit_on_invalid", 294688: "wrong_backward or wrong_device"}  # the correct one: 294680
PLANTED_HASHES = {  # sha256 of the ELF as linked, first 16 hex digits
    "9c86a6a227b5d76a": "default_stream", "9e14a7c65fff5f7e": "exit_on_invalid", "9b31ef6b01a58afa": "ignores_strides",
    "22b35f6e9c1b3c65": "missing_fake", "477b6834493c1fa6": "wrong_backward", "e6a058505bedf1d1": "wrong_device",
    "458e84f677a4944d": "wrong_forward_float64"}


def as_linked():
    with open(LIBRARY, "rb") as f:
        image = f.read()
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    return image[:shoff + shentsize * shnum]


class BySizeAndHash(unittest.TestCase):
    def test_calls_the_operator(self):
        c = torch.ops.course.mm16(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
        self.assertEqual(tuple(c.shape), (4, 4))

    def test_size(self):
        self.assertNotIn(os.path.getsize(LIBRARY), PLANTED_SIZES)

    def test_hash(self):
        self.assertNotIn(hashlib.sha256(as_linked()).hexdigest()[:16], PLANTED_HASHES)


if __name__ == "__main__":
    unittest.main()
