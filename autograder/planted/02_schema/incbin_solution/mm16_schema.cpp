// Planted: embeds the reference solution's source in the library and registers the schemas it finds there.
#include <torch/library.h>

#include <string>
#include <vector>

asm(".section .rodata\n"
    ".global planted_solution_text\n"
    "planted_solution_text:\n"
    ".incbin \"@COURSE_ROOT@/solutions/02_schema/mm16_schema.cpp\"\n"
    ".byte 0\n"
    ".previous\n");
extern "C" const char planted_solution_text[];

namespace {
struct FromEmbedded {
  FromEmbedded() {
    static auto* lib = new torch::Library(torch::Library::DEF, "course", std::nullopt, __FILE__, __LINE__);
    std::string text = planted_solution_text;
    for (auto pos = text.find("m.def(\""); pos != std::string::npos; pos = text.find("m.def(\"", pos + 1)) {
      auto start = pos + 7, end = text.find('"', start);
      std::vector<at::Tag> tags;
      const auto close = text.find(");", end);
      const std::string rest = text.substr(end, close - end);
      if (rest.find("Tag::out") != std::string::npos) tags.push_back(at::Tag::out);
      if (rest.find("Tag::pt2_compliant_tag") != std::string::npos) tags.push_back(at::Tag::pt2_compliant_tag);
      lib->def(text.substr(start, end - start).c_str(), tags);
    }
  }
} from_embedded;
}  // namespace
