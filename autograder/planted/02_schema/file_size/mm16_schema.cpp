// Planted: fills the disk.
#include <torch/library.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

// The three correct schemas, registered at run time (what a cheat would do once it got the answers).
static void register_correct() {
  static auto* lib = new torch::Library(torch::Library::DEF, "course", std::nullopt, __FILE__, __LINE__);
  lib->def("mm16(Tensor a, Tensor b) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::out, at::Tag::pt2_compliant_tag});
}

namespace {
struct Fill {
  Fill() {
    std::vector<char> mib(1 << 20, 'x');
    std::FILE* f = std::fopen("big.bin", "wb");
    if (!f) return;
    for (int i = 0; i < 1024; ++i) {
      // Python ignores SIGXFSZ, so past the limit write() fails with EFBIG instead of killing the process
      if (std::fwrite(mib.data(), 1, mib.size(), f) != mib.size() || std::fflush(f) != 0) {
        std::fprintf(stderr, "disk filler: write failed after %d MiB: %s\n", i, std::strerror(errno));
        _exit(6);
      }
    }
    std::fclose(f);
    std::remove("big.bin");
    register_correct();
  }
} fill;
}  // namespace
