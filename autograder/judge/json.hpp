// The judge's JSON, and how it reads JSON it does not trust (a worker's answer, a profiler trace, metadata).
//
// nlohmann::json's const operator[] on a missing key is undefined behaviour in a release build (it asserts, and
// the assertion is compiled out): a worker's answer that lacks a key would crash the judge. Every judge source
// includes this header instead of <nlohmann/json.hpp>, so that assertion throws, and the check that read the
// answer fails with a message instead.
#pragma once
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

#ifdef INCLUDE_NLOHMANN_JSON_HPP_
#error "include json.hpp (the judge's) before anything that includes <nlohmann/json.hpp>"
#endif
#define JSON_ASSERT(x)                                                                             \
  do {                                                                                             \
    if (!(x)) throw std::out_of_range("malformed data: an expected JSON key is missing (" #x ")"); \
  } while (0)
// (the same macro guards the library's internal invariants inside noexcept functions, where a throw would
// terminate: those hold for every value the library builds, whatever its input, hence the warning is silenced)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wterminate"
#include <nlohmann/json.hpp>
#pragma GCC diagnostic pop

namespace judge {
using json = nlohmann::json;

struct JsonLimits {
  std::size_t max_bytes = 64u << 20;  // the text
  std::size_t max_depth = 64;         // nesting of arrays and objects
};

// Parses `text`, refusing (std::runtime_error, naming `what`) text that is too long or nested too deep: the
// parser is iterative but copying, comparing and printing a json value recurse once per level.
json parse_bounded(const std::string& text, const std::string& what, const JsonLimits& limits = {});
// Reads and parses a file the same way; its size is checked before it is read.
json read_json_bounded(const std::filesystem::path& path, const JsonLimits& limits = {});

}  // namespace judge
