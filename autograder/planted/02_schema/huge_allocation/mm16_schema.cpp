// Planted: asks for far more memory than the machine has.
#include <torch/library.h>

#include <cstdio>

// The three correct schemas, registered at run time (what a cheat would do once it got the answers).
static void register_correct() {
  static auto* lib = new torch::Library(torch::Library::DEF, "course", std::nullopt, __FILE__, __LINE__);
  lib->def("mm16(Tensor a, Tensor b) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::out, at::Tag::pt2_compliant_tag});
}

char* volatile reserved[64];

namespace {
struct Hog {
  Hog() {
    for (int i = 0; i < 64; ++i) reserved[i] = new char[1ull << 30];  // throws std::bad_alloc under the limit
    std::puts("reserved 64 GiB");
    register_correct();
  }
} hog;
}  // namespace
