// Reference solution of exercise 06_autograd, part 4: the backward formula of course::mm16, as a C++
// torch::autograd::Function registered for the Autograd dispatch key.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/mm.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// --8<-- [start:function]
class MM16Function : public torch::autograd::Function<MM16Function> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    // Below the Autograd key: the call reaches the CPU, CUDA or Meta kernel instead of coming back here.
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("course::mm16", "")
                         .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
    ctx->save_for_backward({a, b});
    return op.call(a, b);
  }

  // c = a @ b, so for an upstream gradient g = dL/dc: dL/da = g @ b^T and dL/db = a^T @ g.
  // g has the output's dtype (float32 for float16 inputs); each gradient takes its input's dtype.
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& a = saved[0];
    const at::Tensor& b = saved[1];
    const at::Tensor g = grad_outputs[0];
    at::Tensor grad_a, grad_b;
    if (ctx->needs_input_grad(0)) grad_a = at::mm(g, b.to(g.scalar_type()).t()).to(a.scalar_type());
    if (ctx->needs_input_grad(1)) grad_b = at::mm(a.to(g.scalar_type()).t(), g).to(b.scalar_type());
    return {grad_a, grad_b};
  }
};
// --8<-- [end:function]

// --8<-- [start:library]
at::Tensor mm16_autograd(const at::Tensor& a, const at::Tensor& b) {
  return MM16Function::apply(a, b);
}

TORCH_LIBRARY_IMPL(course, Autograd, m) {
  m.impl("mm16", &mm16_autograd);
}
// --8<-- [end:library]
