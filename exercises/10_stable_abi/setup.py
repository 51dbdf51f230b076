"""Builds the wheel of mm16_stable: `pip wheel --no-build-isolation .` with the torch whose headers it compiles
against in the environment (any torch from the target on runs it).

One extension, mm16_stable._C, from the stable-ABI sources: tagged abi3 (py_limited_api), so the one wheel serves
every CPython from 3.9, and linked against no libtorch_python (the stable ABI needs none)."""

import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

TARGET = "0x020A000000000000"  # TORCH_TARGET_VERSION 2.10: the oldest torch this binary promises to run on
HERE = os.path.dirname(os.path.abspath(__file__))

setup(
    name="mm16_stable",
    version="0.10.0",
    packages=["mm16_stable"],
    ext_modules=[
        CUDAExtension(
            "mm16_stable._C",
            ["mm16_stable_module.cpp", "mm16_stable.cpp", "mm16_stable_cuda.cpp", "mm16_kernel.cu"],
            define_macros=[("Py_LIMITED_API", "0x03090000"), ("TORCH_TARGET_VERSION", TARGET), ("USE_CUDA", None)],
            extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2"]},
            py_limited_api=True,
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
)
