// Planted: fills the sandbox's /tmp (memory the whole machine shares) with files each under the file-size limit.
#include <torch/library.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {
// 2 GiB in 256 MiB files; only if all of it fits are the (correct) schemas registered.
const bool filled = [] {
  std::vector<char> mib(1 << 20, 'y');
  for (int file = 0, written = 0; file < 8; ++file) {
    std::FILE* f = std::fopen(("/tmp/fill-" + std::to_string(file)).c_str(), "wb");
    for (int i = 0; f && i < 256; ++i, ++written)
      if (std::fwrite(mib.data(), 1, mib.size(), f) != mib.size() || std::fflush(f) != 0) {
        std::fprintf(stderr, "tmp filler: /tmp full after %d MiB: %s\n", written, std::strerror(errno));
        _exit(6);
      }
    if (f) std::fclose(f);
  }
  static auto* lib = new torch::Library(torch::Library::DEF, "course", std::nullopt, __FILE__, __LINE__);
  lib->def("mm16(Tensor a, Tensor b) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::out, at::Tag::pt2_compliant_tag});
  return true;
}();
}  // namespace
