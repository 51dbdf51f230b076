"""Probes every exercise shares, and the GROUPS registry that the other groups_*.py modules add to.

A group handler takes (request, inputs) and returns (report, tensors): raw observations for the judge, never a
verdict. request["args"] holds what the judge asked for; inputs are the tensors the judge chose.
"""
import torch

GROUPS = {}


def group(name):
    def register(fn):
        GROUPS[name] = fn
        return fn
    return register


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


@group("inspect")
def group_inspect(request, inputs):
    return {"ops": op_inventory(), "elsewhere": mm16_elsewhere()}, {}


def submission_module(request, name):
    """Imports the submission's Python file `name`.py (chapters 7 to 9) from the folder the judge copied it to."""
    import importlib.util
    import os

    path = os.path.join(request["sources_dir"], name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # an exception here is reported as the worker's error, with its message
    return module


def describe_error(e):
    return f"{type(e).__name__}: {e}"
