// Exercise 06_autograd, part 4: the backward formula of course::mm16, as a C++ torch::autograd::Function
// registered for the Autograd dispatch key. Chapter: chapters/06_autograd.md. Grade it with: ./course grade 06_autograd
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

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    // TODO(student) 1: c = a @ b. With g = grad_outputs[0] (dtype of the output: float32 for float16 inputs) and
    //   a, b from ctx->get_saved_variables(), return {grad_a, grad_b} with grad_a = g @ b^T (a's shape) and
    //   grad_b = a^T @ g (b's shape), each cast to its input's dtype (.to(a.scalar_type())). at::mm multiplies;
    //   .t() transposes. Then delete the line below.
    TORCH_CHECK(false, "TODO(student) 1 in mm16_autograd.cpp: MM16Function::backward is not written yet");
    (void)ctx;
    return {grad_outputs[0], grad_outputs[0]};
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
