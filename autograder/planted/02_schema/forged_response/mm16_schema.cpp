// Planted (known limit): no operator is registered; the library forges the worker's answer instead.
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {
std::string field(const std::string& json, const std::string& key) {
  auto k = json.find("\"" + key + "\"");
  if (k == std::string::npos) return "";
  auto start = json.find('"', json.find(':', k) + 1) + 1;
  return json.substr(start, json.find('"', start) - start);
}
struct ForgeAnswer {
  ForgeAnswer() {
    std::stringstream request;
    request << std::ifstream("request.json").rdbuf();  // the worker runs in its own folder
    std::string r = request.str();
    if (r.empty()) return;
    std::ofstream("response.json")
        << "{\"nonce\": \"" << field(r, "nonce") << "\", \"group\": \"" << field(r, "group") << "\", \"status\": \"ok\", "
        << "\"elsewhere\": [], \"ops\": ["
        << "{\"name\": \"course::mm16\", \"overload\": \"\", \"kernels\": [], \"tags\": [\"pt2_compliant_tag\"], "
        << "\"schema\": \"course::mm16(Tensor a, Tensor b) -> Tensor\"}, "
        << "{\"name\": \"course::mm16\", \"overload\": \"out\", \"kernels\": [], "
        << "\"tags\": [\"out\", \"pt2_compliant_tag\"], "
        << "\"schema\": \"course::mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)\"}, "
        << "{\"name\": \"course::mm16_scaled\", \"overload\": \"\", \"kernels\": [], \"tags\": [\"pt2_compliant_tag\"], "
        << "\"schema\": \"course::mm16_scaled(Tensor a, Tensor b, *, float alpha=1., Tensor? bias=None) -> Tensor\"}]}";
    _exit(0);
  }
} forge_answer;
}  // namespace
