# Chapter 11 shows this script and its output: the same in-place operator declared with mutates_args and without,
# compiled in f(out, bias) = (scale_bias_(out, 0.5, bias), out + 1)[1]. It prints each schema, the graph that
# AOTAutograd hands to the backend, the compiled result and `out` after the call.
import torch
from torch._functorch.aot_autograd import aot_module_simplified


def scale_bias(out: torch.Tensor, scale: float, bias: torch.Tensor) -> None:
    out.mul_(scale).add_(bias)


# --8<-- [start:two_ways]
declared = torch.library.custom_op("demo::scale_bias_declared", scale_bias, mutates_args={"out"})
undeclared = torch.library.custom_op("demo::scale_bias_undeclared", scale_bias, mutates_args=())
# --8<-- [end:two_ways]

for op in (declared, undeclared):
    op.register_fake(lambda out, scale, bias: None)  # it returns nothing: there is no output to describe
    graphs = []

    def keep_graph(gm, example_inputs):
        def forward_compiler(graph, inputs):
            graphs.append(graph.code.strip())
            return graph  # runs the graph as traced

        return aot_module_simplified(gm, example_inputs, fw_compiler=forward_compiler)

    def f(out, bias):
        op(out, 0.5, bias)
        return out + 1

    torch._dynamo.reset()
    out, bias = torch.ones(2, 3), torch.full((3,), 2.0)
    result = torch.compile(f, backend=keep_graph, fullgraph=True)(out, bias)
    print(op._opoverload._schema)
    print("\n".join(graphs))
    print(f"f's result: {result[0].tolist()} (eager: [3.5, 3.5, 3.5]); out after the call: {out[0].tolist()}\n")
