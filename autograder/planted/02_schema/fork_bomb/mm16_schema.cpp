// Planted: a fork bomb, bounded so that a machine without the limit survives it.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {
struct Bomb {
  Bomb() {
    int n = 0;
    for (; n < 4000; ++n) {
      pid_t pid = fork();
      if (pid == 0) {
        sleep(600);
        _exit(0);
      }
      if (pid < 0) {
        std::fprintf(stderr, "fork bomb: fork failed after %d processes (%s)\n", n, std::strerror(errno));
        _exit(3);
      }
    }
    std::fprintf(stderr, "fork bomb: all %d processes started\n", n);
    _exit(3);
  }
} bomb;
}  // namespace
