"""Exercise 09_portability: what a built library carries, and the flags that put it there.

Chapter: chapters/09_portability.md. Grade it with: ./course grade 09_portability
Try cuobjdump yourself: cuobjdump --list-elf --list-ptx build/lib/solutions/06_autograd/libmm16_autograd.so
"""
import re  # noqa: F401 (a regular expression is one way to read the listing)


# --8<-- [start:listing]
def embedded_targets(listing):
    """The SM numbers of the machine code (cubin) and of the PTX a library embeds, each sorted.

    `listing` is the output of `cuobjdump --list-elf --list-ptx LIB`. Return {"cubin": [75, 90], "ptx": [75]}.
    """
    raise NotImplementedError("TODO(student) 1 in inspect_targets.py (embedded_targets): read the 'ELF file N: "
                              "NAME.sm_XX.cubin' and 'PTX file N: NAME.sm_XX.ptx' lines")
# --8<-- [end:listing]


# --8<-- [start:gencode]
def gencode_flags(architectures):
    """CMake's CUDA_ARCHITECTURES ("75;90-real", "75-virtual") as a list of nvcc -gencode flags."""
    raise NotImplementedError("TODO(student) 2 in inspect_targets.py (gencode_flags): one "
                              "-gencode=arch=compute_XX,code=... flag per item: XX gives sm_XX and compute_XX, "
                              "XX-real sm_XX only, XX-virtual compute_XX only")
# --8<-- [end:gencode]
