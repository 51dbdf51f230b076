"""Chapter 9: asks the student's inspect_targets.py about cuobjdump listings and CUDA architecture lists the judge
chose (the judge ran cuobjdump itself and knows the answers), and runs a probe kernel built with the student's
flags (ctypes, no torch): on a GPU the driver must JIT-compile its PTX when no machine code fits."""

import ctypes

from groups_common import describe_error, group, submission_module


def _targets(value):
    """embedded_targets' answer as it was, for the judge to decide: for each kind, the container's type and its
    items (an int stays an int; anything else is reported by its repr, never converted)."""
    if not isinstance(value, dict):
        raise TypeError(f"embedded_targets returned a {type(value).__name__}, not a dict with 'cubin' and 'ptx'")
    answer = {}
    for kind in ("cubin", "ptx"):
        if kind not in value:
            answer[kind] = {"type": "missing", "items": []}
            continue
        got = value[kind]
        items = list(got) if isinstance(got, (list, tuple, set, frozenset)) else []
        answer[kind] = {"type": type(got).__name__, "items": [x if type(x) is int else repr(x) for x in items]}
    return answer


@group("targets")
def group_targets(request, inputs):
    student = submission_module(request, "inspect_targets")
    args = request["args"]
    listings, flags = {}, {}
    for name, text in args["listings"].items():
        try:
            listings[name] = _targets(student.embedded_targets(text))
        except Exception as e:  # noqa: BLE001 - the student's exception is data
            listings[name] = {"error": describe_error(e, "inspect_targets.py")}
    for arch_list in args["arch_lists"]:
        try:
            flags[arch_list] = [str(f) for f in student.gencode_flags(arch_list)]
        except Exception as e:  # noqa: BLE001
            flags[arch_list] = {"error": describe_error(e, "inspect_targets.py")}
    return {"listings": listings, "flags": flags}, {}


@group("probe")
def group_probe(request, inputs):
    lib = ctypes.CDLL(request["args"]["probe"])
    n = 1000
    out = (ctypes.c_float * n)()
    code = lib.probe_run(out, n)
    lib.probe_error_name.restype = ctypes.c_char_p
    return {"code": code, "error": lib.probe_error_name(code).decode(), "values": list(out)}, {}
