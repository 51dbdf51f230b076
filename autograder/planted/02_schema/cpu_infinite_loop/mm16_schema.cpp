// Planted: never finishes loading.
namespace {
struct Spin {
  Spin() {
    volatile unsigned long long n = 0;
    for (;;) n = n + 1;
  }
} spin;
}  // namespace
