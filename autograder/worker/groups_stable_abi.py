"""Chapter 10: the stable-ABI audit of the submission's extension module (PACKAGE/_C.abi3.so), read as a file and
never loaded: torch-abi-audit lists its undefined symbols of at::, c10:: and torch:: internals (the unstable ABI) and
the oldest torch its C-shim symbols exist in; abi3audit lists its CPython symbols outside the limited API that its
abi3 tag promises. Both tools are the course's pins (requirements/course.txt); what they say is data for the judge."""

from pathlib import Path

from groups_common import group


def _torch_side(module):
    from torch_abi_audit.inspect import inspect_extension

    report = inspect_extension(module)
    torch = report.torch
    return {
        "error": report.error or "",
        "uses_torch": torch.uses_torch,
        "unstable_symbols": list(torch.unstable_symbols),
        "shim_symbols": torch.stable_shim_count,
        "min_torch_version": torch.min_torch_version or "",
        "version_defining_symbols": list(torch.version_defining_symbols),
        "unknown_shim_symbols": list(torch.unknown_shim_symbols),
    }


def _python_side(module, minimum):
    # abi3audit's own audit of one shared object (its CLI's, without the console): the symbols outside the limited
    # API of the abi3 version the file's tag says (".abi3": the minimum given)
    from abi3audit._audit import audit
    from abi3audit._extract import SharedObjectExtractor, SharedObjectSpec
    from abi3info.models import PyVersion

    major, minor = (int(x) for x in minimum.split("."))
    non_abi3, newer = set(), {}
    for so in SharedObjectExtractor(SharedObjectSpec(str(module))):
        result = audit(so, assume_minimum_abi3=PyVersion(major, minor))
        non_abi3.update(sym.name for sym in result.non_abi3_symbols)
        newer.update({obj.symbol.name: str(obj.added) for obj in result.future_abi3_objects})
    return {"non_abi3_symbols": sorted(non_abi3), "newer_than_tag": newer}


@group("abi_audit")
def group_abi_audit(request, inputs):
    module = Path(request["args"]["module"])
    try:
        import abi3audit  # noqa: F401
        import torch_abi_audit  # noqa: F401
    except ImportError as e:  # a python without the course's pins (the GPU machine's own): the rows say so
        return {"tools_missing": f"{type(e).__name__}: {e}"}, {}
    return {"torch": _torch_side(module), "python": _python_side(module, request["args"]["abi3_minimum"])}, {}
