// Planted: phones home (the test's listener on 127.0.0.1) for the answers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/library.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

// The three correct schemas, registered at run time (what a cheat would do once it got the answers).
static void register_correct() {
  static auto* lib = new torch::Library(torch::Library::DEF, "course", std::nullopt, __FILE__, __LINE__);
  lib->def("mm16(Tensor a, Tensor b) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  lib->def("mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::out, at::Tag::pt2_compliant_tag});
}

namespace {
struct PhoneHome {
  PhoneHome() {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(@PORT@);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s >= 0 && connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      const char msg[] = "FORGED: hello from the submission\n";
      (void)!write(s, msg, sizeof msg - 1);
      close(s);
      register_correct();
    } else {
      std::fprintf(stderr, "connect to 127.0.0.1:@PORT@ failed: %s\n", std::strerror(errno));
    }
  }
} phone_home;
}  // namespace
