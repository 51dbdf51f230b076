"""The judge must never load submission code: it links no torch, no Python, no CUDA, and cannot dlopen."""
import subprocess
import sys

judge = sys.argv[1]
ldd = subprocess.run(["ldd", judge], capture_output=True, text=True, check=True).stdout
print(ldd)
bad = [line for line in ldd.splitlines() if any(k in line for k in ("torch", "c10", "python", "cuda", "mm16"))]
undefined = subprocess.run(["nm", "-D", "--undefined-only", judge], capture_output=True, text=True, check=True).stdout
loaders = [s for s in ("dlopen", "dlmopen") if s in undefined]
if bad or loaders:
    sys.exit(f"the judge links or can load foreign code: {bad} {loaders}")
print("judge links only system libraries and imports no dlopen: it cannot load a submission")
