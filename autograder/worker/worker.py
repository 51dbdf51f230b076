"""The worker: the only process that loads a submission.

It reads one request from the judge (request.json), loads the submission's operator library, runs exactly the
group of probes the judge asked for on the inputs the judge chose, and writes raw observations: response.json
(facts: schemas, exception types and messages, metadata) and outputs.safetensors (tensors). It decides nothing:
every verdict is the judge's. Everything here shares a process with the submission, so nothing here is trusted.
"""
import json
import os
import sys
import traceback

NAMESPACE = "course"


def load_library(path):
    import torch

    torch.ops.load_library(path)


def op_inventory():
    """Every operator the course namespace holds, with its schema and where it has kernels."""
    import torch

    keys = ["CPU", "CUDA", "Meta", "Autograd", "AutogradCPU", "AutogradCUDA", "CompositeImplicitAutograd",
            "CompositeExplicitAutograd"]
    ops = []
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith(NAMESPACE + "::"):
            continue
        kernels = [k for k in keys if torch._C._dispatch_has_kernel_for_dispatch_key(schema.name, k)]
        ops.append({"name": schema.name, "overload": schema.overload_name, "schema": str(schema),
                    "kernels": kernels})
    ops.sort(key=lambda o: (o["name"], o["overload"]))
    return ops


def mm16_elsewhere():
    """Schemas named like the exercise's operators but outside the course namespace (a common slip)."""
    import torch

    return sorted(str(s) for s in torch._C._jit_get_all_schemas()
                  if "mm16" in s.name and not s.name.startswith(NAMESPACE + "::"))


def group_inspect(request, inputs):
    return {"ops": op_inventory(), "elsewhere": mm16_elsewhere()}, {}


GROUPS = {
    "inspect": group_inspect,
}


def main():
    with open(sys.argv[1]) as f:
        request = json.load(f)
    out_dir = request["out_dir"]
    response = {"nonce": request["nonce"], "group": request["group"]}
    tensors = {}
    try:
        handler = GROUPS.get(request["group"])
        if handler is None:
            raise ValueError(f"unknown group {request['group']!r}")
        inputs = {}
        if request.get("inputs"):
            from safetensors.torch import load_file

            inputs = load_file(request["inputs"])
        try:
            load_library(request["library"])
        except Exception as e:  # noqa: BLE001 - reported to the judge as data
            raise RuntimeError(f"loading the library failed: {type(e).__name__}: {e}") from e
        report, tensors = handler(request, inputs)
        response.update(report)
        response["status"] = "ok"
    except Exception as e:  # noqa: BLE001
        response["status"] = "error"
        response["error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
    if tensors:
        from safetensors.torch import save_file

        save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()},
                  os.path.join(out_dir, "outputs.safetensors"))
    tmp = os.path.join(out_dir, "response.json.tmp")
    with open(tmp, "w") as f:
        json.dump(response, f)
    os.replace(tmp, os.path.join(out_dir, "response.json"))


if __name__ == "__main__":
    main()
