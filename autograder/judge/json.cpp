#include "json.hpp"

#include <fstream>
#include <system_error>

namespace judge {

json parse_bounded(const std::string& text, const std::string& what, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw std::runtime_error(what + " is " + std::to_string(text.size()) + " bytes, more than the " +
                             std::to_string(limits.max_bytes) + " the judge reads");
  // Depth of [ and { outside strings, before the parser sees the text.
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth)
        throw std::runtime_error(what + " is nested more than " + std::to_string(limits.max_depth) +
                                 " levels deep: refused");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error(what + " is not valid JSON");
  return j;
}

json read_json_bounded(const std::filesystem::path& path, const JsonLimits& limits) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error("cannot read " + path.string() + ": " + ec.message());
  if (size > limits.max_bytes)
    throw std::runtime_error(path.string() + " is " + std::to_string(size) + " bytes, more than the " +
                             std::to_string(limits.max_bytes) + " the judge reads");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_bounded(text, path.filename().string(), limits);
}

}  // namespace judge
