# Run from the repository root after ./course build:  python site_tools/examples/inspect_schema.py
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

torch.ops.load_library("build/lib/solutions/02_schema/libmm16_schema.so")

op = torch.ops.course.mm16_scaled.default  # the OpOverload of the empty overload name
schema = op._schema  # a torch._C.FunctionSchema
print(schema)
for arg in schema.arguments:
    print(f"  {arg.name:6} {str(arg.type):16} default={arg.default_value!r:5} kwarg_only={arg.kwarg_only}")

# The out variant is an overload of mm16, as aten::mm.out is of aten::mm; its tags are part of its definition
out_op = torch.ops.course.mm16.out
print(out_op._schema)
print("  overloads of mm16:", torch.ops.course.mm16.overloads())
out = out_op._schema.arguments[2]
print(f"  argument {out.name!r}: keyword-only = {out.kwarg_only}, written in place = {out.alias_info.is_write}")


def names(tags):
    return [tag.name for tag in tags]


print("  tags:", names(out_op.tags), " aten::mm.out's:", names(torch.ops.aten.mm.out.tags))
print("tags of mm16 and mm16_scaled:", names(torch.ops.course.mm16.default.tags), names(op.tags))

# PyTorch's tooling reads Tag.out: fake tensors need no fake kernel for it (the result is `out` itself), while the
# same schema as a separate, untagged operator (defined here from Python, in a namespace of its own) has none
untagged = torch.library.Library("untagged", "DEF")
untagged.define("mm16_out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)")
with FakeTensorMode():
    a, b, c = torch.empty(2, 3), torch.empty(3, 4), torch.empty(2, 4)
    print("under FakeTensorMode, mm16.out returns its out argument:", out_op(a, b, out=c) is c)
    try:
        torch.ops.untagged.mm16_out(a, b, out=c)
    except Exception as e:
        print("under FakeTensorMode, untagged mm16_out:", f"{type(e).__name__}: {e}")
# ... and torch.library's autograd registration refuses it; a keyword-only Tensor (bias) rules it out too
for name, target in (("mm16.out", "course::mm16.out"), ("mm16_scaled", "course::mm16_scaled")):
    try:
        torch.library.register_autograd(target, lambda ctx, grad: grad)
    except (RuntimeError, NotImplementedError) as e:
        print(f"register_autograd({name}): {type(e).__name__}: {str(e).split('. ')[0]}.")

# Which kernels does the dispatcher hold? Declared only, so none yet:
print("CPU kernel for course::mm16:", torch._C._dispatch_has_kernel_for_dispatch_key("course::mm16", "CPU"))
try:
    torch.ops.course.mm16(torch.randn(2, 3), torch.randn(3, 4))
except NotImplementedError as e:
    print("calling it:", str(e).split(". ")[0] + ".")
