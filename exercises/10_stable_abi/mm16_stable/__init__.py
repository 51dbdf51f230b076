"""course::mm16 on the LibTorch stable ABI, as a package: importing it registers the operator.

The C++ library (_C) holds the schema and the CPU and CUDA kernels. What the stable ABI cannot express in C++ is
registered here, in Python, on the same operator: a fake kernel with symbolic sizes (a stable C++ Meta kernel would read
plain integers, so torch.compile would specialise every shape) and the autograd formula (the stable ABI has no autograd
registration)."""

import torch

from . import _C  # noqa: F401  (loading the library runs its STABLE_TORCH_LIBRARY blocks)


# --8<-- [start:fake]
# TODO(student) 5: register a fake kernel for course::mm16 with @torch.library.register_fake("course::mm16"): check
#   the shapes with torch._check (sizes may be symbols) and return a.new_empty((M, N), dtype=...) with float32 for
#   float16 inputs and the input dtype otherwise. Never read data.
# --8<-- [end:fake]


# --8<-- [start:autograd]
# TODO(student) 6: register the backward formula with torch.library.register_autograd("course::mm16", backward,
#   setup_context=...): save a and b; grad_a = grad @ b^T and grad_b = a^T @ grad, each in its input's dtype, only
#   where ctx.needs_input_grad says so.
# --8<-- [end:autograd]
