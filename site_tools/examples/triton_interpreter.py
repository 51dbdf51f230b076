# Chapter 11 shows this script and its output: exercise 11's reference run by Triton's interpreter on CPU tensors.
# Eager calls work; a trace of the operator's body (torch.compile, opcheck's test_aot_dispatch_dynamic) does not.
import importlib.util
import os

# --8<-- [start:interpret]
os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton: each @triton.jit reads it when it is applied
import torch

path = os.path.join(os.path.dirname(__file__), "..", "..", "solutions", "11_python_ops", "python_ops.py")
spec = importlib.util.spec_from_file_location("python_ops", path)
python_ops = importlib.util.module_from_spec(spec)
spec.loader.exec_module(python_ops)  # defines course::mm16 (triton_op) and course::scale_bias_ (custom_op)
# --8<-- [end:interpret]


def first_line(e):
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"


schema = torch.ops.course.mm16.default._schema
keys = ("CPU", "CUDA", "Meta", "Autograd", "CompositeExplicitAutograd")
print(f"{schema}: kernels for {[k for k in keys if torch._C._dispatch_has_kernel_for_dispatch_key(schema.name, k)]}")
torch.manual_seed(0)
a, b = torch.randn(17, 33).half(), torch.randn(33, 5).half()
c = torch.ops.course.mm16(a, b)
error = (c.double() - a.double() @ b.double()).abs().max().item()
print(f"eager, CPU tensors: {c.dtype} {list(c.shape)}, largest error against float64 {error:.1e}")

try:
    torch.compile(lambda x, y: torch.ops.course.mm16(x, y) * 2, backend="aot_eager", fullgraph=True)(a, b)
    print("torch.compile(backend='aot_eager'): ran")
except Exception as e:
    print(f"torch.compile(backend='aot_eager'): {type(e).__name__}")

x = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
y = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
for test, outcome in torch.library.opcheck(torch.ops.course.mm16.default, (x, y), raise_exception=False).items():
    print(f"opcheck {test}: {outcome if isinstance(outcome, str) else first_line(outcome)}")
