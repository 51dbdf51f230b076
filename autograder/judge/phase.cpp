// phase.json: where a running grade is, written by the judge itself (phase.hpp).
#include "phase.hpp"

#include <fstream>
#include <system_error>

#include "json.hpp"

namespace judge {

void write_phase(const std::filesystem::path& out_dir, const std::string& phase, const std::string& text) {
  if (out_dir.empty()) return;
  std::error_code ec;
  if (!std::filesystem::is_directory(out_dir, ec)) return;
  const std::filesystem::path tmp = out_dir / "phase.json.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    // (the text quotes a source name of the exercise: dump() escapes it, replacing invalid UTF-8)
    out << json{{"phase", phase}, {"text", text}}.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    if (!out) return;
  }
  std::filesystem::rename(tmp, out_dir / "phase.json", ec);
}

}  // namespace judge
