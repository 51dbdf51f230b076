// Planted: correct schemas, but the library ends the process with status 0 as soon as it is loaded.
#include <torch/library.h>

#include <cstdio>
#include <cstdlib>

TORCH_LIBRARY(course, m) {
  m.def("mm16(Tensor a, Tensor b) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::out, at::Tag::pt2_compliant_tag});
}

namespace {
struct ExitOnLoad {
  ExitOnLoad() {
    std::puts("all checks passed");
    std::exit(0);
  }
} exit_on_load;
}  // namespace
