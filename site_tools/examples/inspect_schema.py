# Run from the repository root after ./course build:  python site_tools/examples/inspect_schema.py
import torch

torch.ops.load_library("build/lib/solutions/02_schema/libmm16_schema.so")

op = torch.ops.course.mm16_scaled.default      # the OpOverload of the empty overload name
schema = op._schema                            # a torch._C.FunctionSchema
print(schema)
for arg in schema.arguments:
    print(f"  {arg.name:6} {str(arg.type):16} default={arg.default_value!r:5} kwarg_only={arg.kwarg_only}")

out = torch.ops.course.mm16_out.default._schema.arguments[2]
print(f"mm16_out argument {out.name!r}: written in place = {out.alias_info.is_write}")

# Which kernels does the dispatcher hold? Declared only, so none yet:
print("CPU kernel for course::mm16:", torch._C._dispatch_has_kernel_for_dispatch_key("course::mm16", "CPU"))
try:
    torch.ops.course.mm16(torch.randn(2, 3), torch.randn(3, 4))
except NotImplementedError as e:
    print("calling it:", str(e).split(". ")[0] + ".")
