"""The judge must never load submission code: it links no torch, no Python, no CUDA, and cannot dlopen."""

import re
import subprocess
import sys

judge = sys.argv[1]
ldd = subprocess.run(["ldd", judge], capture_output=True, text=True, check=True).stdout
print(ldd)
# the names and paths only: a load address such as (0x00007efc8c102000) can hold "c10" by chance
names = [re.sub(r"\(0x[0-9a-f]+\)", "", line) for line in ldd.splitlines()]
bad = [line for line in names if any(k in line for k in ("torch", "c10", "python", "cuda", "mm16"))]
undefined = subprocess.run(["nm", "-D", "--undefined-only", judge], capture_output=True, text=True, check=True).stdout
loaders = [s for s in ("dlopen", "dlmopen") if s in undefined]
if bad or loaders:
    sys.exit(f"the judge links or can load foreign code: {bad} {loaders}")
print("judge links only system libraries and imports no dlopen: it cannot load a submission")
