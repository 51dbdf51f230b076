"""Reference solution of exercise 09_portability: what a built library carries, and the flags that put it there.

Chapter: chapters/09_portability.md. Grade it with: ./course grade 09_portability solutions/09_portability
"""
import re


# --8<-- [start:listing]
# cuobjdump --list-elf --list-ptx LIB prints one line per embedded image, e.g.
#   PTX file    1: libmm16.1.sm_75.ptx      (PTX for the virtual architecture compute_75)
#   ELF file    1: libmm16.1.sm_75.cubin    (machine code for sm_75)
# and, for a library without device code, a message ("does not contain device code") and no such lines.
_IMAGE = re.compile(r"^(PTX|ELF) file\s+\d+:\s+\S*\.sm_(\d+)[a-z]?\.(?:ptx|cubin)\s*$")


def embedded_targets(listing):
    """The SM numbers of the machine code (cubin) and of the PTX a library embeds, each sorted."""
    found = {"cubin": set(), "ptx": set()}
    for line in listing.splitlines():
        m = _IMAGE.match(line.strip())
        if m:
            found["ptx" if m.group(1) == "PTX" else "cubin"].add(int(m.group(2)))
    return {kind: sorted(numbers) for kind, numbers in found.items()}
# --8<-- [end:listing]


# --8<-- [start:gencode]
def gencode_flags(architectures):
    """CMake's CUDA_ARCHITECTURES ("75;90-real") as nvcc flags.

    "75"         machine code for sm_75 and PTX for compute_75 (runs on 7.5 and, JIT-compiled, on anything newer)
    "90-real"    machine code for sm_90 only
    "75-virtual" PTX for compute_75 only: every GPU JIT-compiles it (the PTX path, forced)
    """
    flags = []
    for item in filter(None, (part.strip() for part in architectures.split(";"))):
        arch, _, kind = item.partition("-")
        code = {"real": f"sm_{arch}", "virtual": f"compute_{arch}"}.get(kind, f"[sm_{arch},compute_{arch}]")
        flags.append(f"-gencode=arch=compute_{arch},code={code}")
    return flags
# --8<-- [end:gencode]
