"""Chapter 4's kernel, as nvcc compiles it (no GPU needed):
  * the shared-memory tiles that load_matrix_sync / store_matrix_sync read and write are declared 32-byte aligned
    in the PTX (`.shared .align 32`): WMMA needs 256-bit aligned pointers, and __align__(32) makes that a promise;
    without the attribute the same tiles get only their element's alignment (chapter 4 says so: checked here);
  * a device pass for a GPU without tensor cores (compute capability below 7.0) is a compile-time error, not a kernel
    that silently leaves its output unwritten. nvcc 13 has no target below compute_75 any more; then the device
    pass's preprocessing is done with the C++ compiler and __CUDA_ARCH__ set as nvcc sets it for sm_60 (600), and,
    as a control, for sm_75 (750), which must go through.

usage: test_mm16_kernel.py NVCC CXX CUDA_INCLUDE_DIR KERNEL.cu"""

import os
import re
import subprocess
import sys
import tempfile


def main(nvcc, cxx, cuda_include, source):
    problems = []
    include = os.path.dirname(os.path.abspath(source))
    cuda_includes = [f"-I{d}" for d in cuda_include.split(";") if d]  # CMake's list of the toolkit's include folders
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "mm16_kernel.ptx")
        r = subprocess.run(
            [nvcc, "-std=c++17", "-ptx", "-arch=compute_75", "-I", include, source, "-o", ptx],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            return [f"nvcc -ptx -arch=compute_75 failed:\n{r.stderr}"]
        text = open(ptx).read()
        shared = re.findall(r"^\s*\.shared\s+(.*?);", text, re.M)
        print("shared declarations in the compute_75 PTX:", *shared, sep="\n  ")
        if len(shared) < 3:
            problems.append(f"expected the kernel's three shared tiles (sa, sb, sc) in the PTX, found {len(shared)}")
        for decl in shared:
            m = re.search(r"\.align\s+(\d+)", decl)
            if not m or int(m.group(1)) < 32:
                problems.append(f"a shared tile is not 32-byte aligned: .shared {decl}")
        # and without the attribute, nothing promises it: the same kernel with __align__(32) removed
        bare = os.path.join(tmp, "bare.cu")
        with open(source) as f, open(bare, "w") as g:
            g.write(f.read().replace("__align__(32) ", ""))
        r = subprocess.run(
            [nvcc, "-std=c++17", "-ptx", "-arch=compute_75", "-I", include, bare, "-o", ptx],
            capture_output=True,
            text=True,
        )
        aligns = (
            [int(a) for a in re.findall(r"^\s*\.shared\s+\.align\s+(\d+)", open(ptx).read(), re.M)]
            if r.returncode == 0
            else []
        )
        print("without __align__(32), the tiles' alignments in the PTX:", aligns)
        if not aligns or min(aligns) >= 32:
            problems.append(
                f"without __align__(32) the tiles were expected to get less than 32 bytes of alignment "
                f"(chapter 4 says so); got {aligns} (nvcc exit status {r.returncode})"
            )
        said = "uses tensor cores (WMMA): build it for compute capability 7.0 or newer"
        listed = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True).stdout.split()
        old = sorted(int(a.split("_")[1]) for a in listed if a.startswith("compute_") and int(a.split("_")[1]) < 70)
        if old:
            arch = old[0]
            r = subprocess.run(
                [
                    nvcc,
                    "-std=c++17",
                    "-c",
                    "-gencode",
                    f"arch=compute_{arch},code=sm_{arch}",
                    "-I",
                    include,
                    source,
                    "-o",
                    os.path.join(tmp, "old.o"),
                ],
                capture_output=True,
                text=True,
            )
            how = f"nvcc for sm_{arch}"
        else:
            r = subprocess.run(
                [
                    cxx,
                    "-E",
                    "-x",
                    "c++",
                    "-D__CUDA_ARCH__=600",
                    *cuda_includes,
                    "-I",
                    include,
                    source,
                    "-o",
                    os.devnull,
                ],
                capture_output=True,
                text=True,
            )
            how = "nvcc lists no target below compute_75; the sm_60 device pass's preprocessing (__CUDA_ARCH__=600)"
            control = subprocess.run(
                [
                    cxx,
                    "-E",
                    "-x",
                    "c++",
                    "-D__CUDA_ARCH__=750",
                    *cuda_includes,
                    "-I",
                    include,
                    source,
                    "-o",
                    os.devnull,
                ],
                capture_output=True,
                text=True,
            )
            print(f"the sm_75 device pass's preprocessing (__CUDA_ARCH__=750): exit status {control.returncode}")
            if control.returncode != 0:
                problems.append(f"preprocessing with __CUDA_ARCH__=750 failed:\n{control.stderr[-1500:]}")
        print(f"{how}: exit status {r.returncode}")
        if r.returncode == 0 or said not in r.stderr:
            problems.append(
                f"{how} must stop with the kernel's #error ({said!r}); it exited {r.returncode}:\n{r.stderr[-1500:]}"
            )
    return problems


if __name__ == "__main__":
    found = main(*sys.argv[1:5])
    for p in found:
        print("FAIL:", p)
    print(f"build/mm16_kernel: {len(found)} problem(s)")
    sys.exit(1 if found else 0)
