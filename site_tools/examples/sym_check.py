# Chapter 5 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/sym_check.py
# symdemo::mm_check and symdemo::mm_sym_check (site_tools/examples/demo_ops.cpp) differ only in their Meta kernel's
# shape check: TORCH_CHECK(a.sym_size(1) == b.sym_size(0)) or TORCH_SYM_CHECK(a.sym_size(1).sym_eq(b.sym_size(0))).
import re
import warnings

import torch
import torch.fx.experimental._config as fx_config

warnings.simplefilter("ignore")
torch.ops.load_library("build/examples/libcourse_demo_ops.so")
fx_config.use_duck_shape = False  # a's K and b's K get a symbol each, even when their values are equal
torch._dynamo.config.capture_dynamic_output_shape_ops = True  # nonzero() inside the compiled function


def guards_of(op, a, b):
    """Compiles op(a, b) with symbolic sizes; the guards on sizes the compiled program relies on, sizes named."""
    found = []

    def backend(gm, example_inputs):
        env = torch._guards.TracingContext.try_get().fake_mode.shape_env
        for guard in env.guards:
            text = str(guard.expr)
            for symbol in sorted(guard.expr.free_symbols, key=str, reverse=True):
                source = env.var_to_sources[symbol][0].name  # e.g. L['a'].size()[1]
                source = source() if callable(source) else source
                m = re.fullmatch(r"L\['args'\]\[(\d)\]\.size\(\)\[(\d+)\]", source)  # op(*args): a, b
                text = text.replace(str(symbol), f"{'ab'[int(m[1])]}.size({m[2]})" if m else source)
            found.append(text)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(op, fullgraph=True, dynamic=True, backend=backend)(a, b)
    return found


def data_dependent(op):
    def f(a, b, keep_a, keep_b):  # K of a and K of b: sizes known only once nonzero() has run (unbacked)
        return op(a[:, keep_a.nonzero().squeeze(1)], b[keep_b.nonzero().squeeze(1)])

    return f


def outcome(call):
    try:
        return f"ran, output {tuple(call().shape)}"
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0].split(' (unhinted')[0]}"


a, b = torch.randn(3, 4), torch.randn(4, 5)
keep_a, keep_b = torch.tensor([True, False, True, True]), torch.tensor([True, True, False, True])
for name in ("mm_size", "mm_check", "mm_sym_check"):
    op = getattr(torch.ops.symdemo, name)
    print(f"{name}, sizes with values (dynamic=True): compiled, guards {guards_of(op, a, b)}")
    torch._dynamo.reset()
    f = torch.compile(data_dependent(op), fullgraph=True, backend="eager")
    print(f"{name}, data-dependent sizes: {outcome(lambda: f(a, b, keep_a, keep_b))}")
    print(f"  then K = 3 for a and 4 for b: {outcome(lambda: f(a, b, keep_a, torch.ones(4, dtype=torch.bool)))}")
