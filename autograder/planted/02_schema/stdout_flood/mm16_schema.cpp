// Planted: floods both output streams.
#include <unistd.h>

#include <cstring>

namespace {
struct Flood {
  Flood() {
    static char line[4096];
    std::memset(line, 'x', sizeof line);
    line[sizeof line - 1] = '\n';
    for (int i = 0; i < 65536; ++i) {
      (void)!write(1, line, sizeof line);
      (void)!write(2, line, sizeof line);
    }
    _exit(5);
  }
} flood;
}  // namespace
