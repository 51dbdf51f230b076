"""The worker: the only process that loads a submission.

It reads one request from the judge (request.json), loads the submission's operator library, runs exactly the
group of probes the judge asked for on the inputs the judge chose, and writes raw observations: response.json
(facts: schemas, exception types and messages, metadata) and outputs.safetensors (tensors). It decides nothing:
every verdict is the judge's. Everything here shares a process with the submission, so nothing here is trusted.
"""

import time

_STARTED = time.monotonic()  # before torch is imported: the bench's breakdown reports the import's cost

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

from groups_common import GROUPS, SubmissionError, load_library  # noqa: E402  (each groups_*.py adds its probes)


def _register_group_modules():
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("groups_") and name.endswith(".py") and name != "groups_common.py":
            __import__(name[:-3])


def preload(warm=False):
    """Imports everything a request needs before submission code runs (the worker server does this once); warm: also
    pays what the first opcheck and the first torch.compile of a process pay (the judge asks for it when the
    exercise's runs call them)."""
    _register_group_modules()
    import safetensors.torch  # noqa: F401

    if warm:
        _warm_opcheck_and_compile()


def _warm_opcheck_and_compile():
    """The first opcheck and torch.compile of a process import dynamo, functorch and sympy and set them up: measured on
    torch 2.15, an opcheck in a child forked from a cold server took 5.7 s, from a warm one 0.3 s (chapter 7's harness
    runs one per operator under test). Only built-in operators run here, on one thread (no OpenMP pool exists before
    the fork); dynamo's caches are reset after, so a compile row counts its compilations from nothing."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        import torch._dynamo
        import torch.testing._internal.optests

        a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
        b = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
        torch.library.opcheck(torch.ops.aten.mm.default, (a, b))
        torch.compile(lambda x, y: x @ y * 2.0, fullgraph=True, backend="aot_eager")(a, b)
        torch._dynamo.reset()
    except Exception:  # noqa: BLE001 - a warm-up that fails costs time, never a verdict
        pass
    finally:
        torch.set_num_threads(threads)


def main(request_path=None, started=None):
    with open(request_path or sys.argv[1]) as f:
        request = json.load(f)
    out_dir = request["out_dir"]
    response = {"nonce": request["nonce"], "group": request["group"]}
    tensors = {}
    timing = response["timing"] = {}  # seconds per phase, for `course bench --breakdown` only

    def lap(phase, since=[started or _STARTED]):
        now = time.monotonic()
        timing[phase] = round(now - since[0], 4)
        since[0] = now

    try:
        _register_group_modules()
        lap("import")
        handler = GROUPS.get(request["group"])
        if handler is None:
            raise ValueError(f"unknown group {request['group']!r}")
        inputs = {}
        if request.get("inputs"):
            from safetensors.torch import load_file

            inputs = load_file(request["inputs"])
        lap("inputs")
        if request.get("library"):  # none for a group that loads its own (chapter 7's harness)
            try:
                load_library(request["library"])
            except SubmissionError:  # a Python-defined library's own import error: its message names file and line
                raise
            except Exception as e:  # reported to the judge as data
                # torch.ops.load_library says only "Could not load this library: PATH"; the loader's own reason
                # (an undefined symbol: which torch the library needs) is its __cause__
                cause = e.__cause__
                because = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
                raise RuntimeError(f"loading the library failed: {type(e).__name__}: {e}{because}") from e
        lap("load")
        report, tensors = handler(request, inputs)
        lap("probes")
        response.update(report)
        response["status"] = "ok"
    except Exception as e:  # noqa: BLE001
        response["status"] = "error"
        if isinstance(e, SubmissionError):  # the student's file itself: its own message names the file and line
            response["error"], response["error_in_submission"] = str(e), True
        else:
            response["error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
    if "torch" in sys.modules:
        response["torch_version"] = str(sys.modules["torch"].__version__)
    if tensors:
        from safetensors.torch import save_file

        save_file(
            {k: v.detach().cpu().contiguous() for k, v in tensors.items()}, os.path.join(out_dir, "outputs.safetensors")
        )
        lap("outputs")
    tmp = os.path.join(out_dir, "response.json.tmp")
    with open(tmp, "w") as f:
        json.dump(response, f)
    os.replace(tmp, os.path.join(out_dir, "response.json"))


if __name__ == "__main__":
    main()
