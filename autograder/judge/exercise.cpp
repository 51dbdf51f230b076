// Loading an exercise: its exercise.json resolved against the check catalog (the course's, never the
// submission's), and CMake's CUDA architecture list turned into the nvcc flags the judge builds with.
#include <algorithm>
#include <regex>
#include <sstream>

#include "grading.hpp"

namespace judge {

// COURSE_CUDA_ARCHITECTURES (CMake syntax) -> nvcc -gencode flags
std::vector<std::string> gencode_flags(const std::string& arch_list) {
  std::vector<std::string> flags;
  std::stringstream ss(arch_list);
  std::string item;
  while (std::getline(ss, item, ';')) {
    if (item.empty()) continue;
    std::string arch = item, kind = "both";
    auto dash = item.find('-');
    if (dash != std::string::npos) {
      arch = item.substr(0, dash);
      kind = item.substr(dash + 1);
    }
    std::string code = kind == "real"      ? "sm_" + arch
                       : kind == "virtual" ? "compute_" + arch
                                           : "[sm_" + arch + ",compute_" + arch + "]";
    flags.push_back("-gencode=arch=compute_" + arch + ",code=" + code);
  }
  return flags;
}

// A check's flags in the catalog: where it can run, and whether its exercise's worker server starts warm.
static void read_flags(CheckSpec& s, const json& c) {
  s.cuda = c.contains("cuda") && c["cuda"] == true;
  s.toolkit = s.cuda || (c.contains("toolkit") && c["toolkit"] == true);
  s.warms_worker = c.contains("warms_worker") && c["warms_worker"] == true;
}

// "abi" is one the judge knows; a Python-defined exercise's library is the module LIBRARY.py of its sources, nothing
// compiled.
template <typename Need>
static void need_known_abi(const Exercise& e, Need need) {
  need(e.abi == "classic" || e.abi == "stable" || e.abi == "python",
       "'abi' must be \"classic\", \"stable\" or \"python\"");
  if (!e.python_abi()) return;
  need(!e.library.empty() && std::find(e.sources.begin(), e.sources.end(), e.library + ".py") != e.sources.end(),
       "a Python-defined exercise (\"abi\": \"python\") names its 'library', the module LIBRARY.py of 'sources'");
  need(e.cuda_sources.empty(), "a Python-defined exercise compiles nothing: no 'cuda_sources'");
}

// exercises/ID/exercise.json (format 2) with its checks resolved from the catalog autograder/metadata/checks.json:
// the judge's reader of the metadata that opcourse/metadata.py reads for Python (same rules, same messages).
Exercise Exercise::load(const fs::path& metadata_file, const fs::path& catalog_file) {
  json j = read_json_bounded(metadata_file);
  json catalog = read_json_bounded(catalog_file);
  const std::string where = metadata_file.string();
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(where + ": " + what);
  };
  need(j.is_object() && j.contains("format_version") && j["format_version"] == 2,
       "format_version must be 2 (checks as ids of autograder/metadata/checks.json)");
  need(catalog.is_object() && catalog.contains("checks") && catalog["checks"].is_object(),
       catalog_file.string() + " has no 'checks' object");
  const json& known = catalog["checks"];
  auto text = [&](const json& o, const char* key, bool required) -> std::string {
    if (!o.contains(key)) {
      need(!required, std::string("'") + key + "' is missing");
      return "";
    }
    need(o[key].is_string(), std::string("'") + key + "' must be a string");
    return o[key].get<std::string>();
  };
  Exercise e;
  e.id = text(j, "id", true);
  e.title = text(j, "title", true);
  e.chapter = text(j, "chapter", false);
  e.library = text(j, "library", false);  // empty: a Python-only exercise (the operator under test is the course's)
  for (const char* list : {"sources", "hints"}) {
    need(j.contains(list) && j[list].is_array(), std::string("'") + list + "' must be a list");
    for (auto& x : j[list]) {
      need(x.is_string(), std::string("'") + list + "' must hold strings");
      (std::string(list) == "sources" ? e.sources : e.hints).push_back(x.get<std::string>());
    }
  }
  if (j.contains("cuda_sources")) {
    need(j["cuda_sources"].is_array(), "'cuda_sources' must be a list");
    for (auto& x : j["cuda_sources"]) {
      need(x.is_string() && std::find(e.sources.begin(), e.sources.end(), x.get<std::string>()) != e.sources.end(),
           "'cuda_sources' must name files of 'sources'");
      e.cuda_sources.push_back(x.get<std::string>());
    }
  }
  if (j.contains("abi")) e.abi = text(j, "abi", true);
  need_known_abi(e, need);
  e.torch_target = text(j, "torch_target", false);
  if (e.stable_abi()) {
    std::smatch m;
    need(std::regex_match(e.torch_target, m, std::regex("2\\.[0-9]{1,2}")),
         "'torch_target' must say the oldest torch the stable binary runs on, as MAJOR.MINOR (\"2.10\")");
    need(!e.library.empty(), "a stable-ABI exercise names its 'library' (the Python package the wheel holds)");
  }
  for (auto& src : e.sources) {  // a source in a folder: only a stable-ABI exercise's package, LIBRARY/NAME.py
    const std::size_t slash = src.find('/');
    if (slash == std::string::npos) continue;
    need(e.stable_abi() && src.substr(0, slash) == e.library && src.size() > 3 &&
             src.compare(src.size() - 3, 3, ".py") == 0 && src.find('/', slash + 1) == std::string::npos,
         "source '" + src + "': a source in a folder must be the stable-ABI package's LIBRARY/NAME.py");
  }
  if (!e.stable_abi()) {
    need(e.torch_target.empty(), "'torch_target' is for \"abi\": \"stable\" only");
  }
  need(j.contains("checks") && j["checks"].is_array() && !j["checks"].empty(), "'checks' must be a non-empty list");
  for (auto& entry : j["checks"]) {
    need(entry.is_string() || (entry.is_object() && entry.contains("id") && entry["id"].is_string()),
         "each check is an id, or {\"id\": ..., \"hint\": ...}");
    CheckSpec s;
    s.id = entry.is_string() ? entry.get<std::string>() : entry["id"].get<std::string>();
    need(known.contains(s.id) && known[s.id].is_object(),
         "check '" + s.id + "' is not declared in autograder/metadata/checks.json");
    const json& c = known[s.id];
    s.title = text(c, "title", true);
    s.hint = entry.is_object() && entry.contains("hint") ? text(entry, "hint", true) : text(c, "hint", false);
    need(c.contains("points") && c["points"].is_number() && c["points"].get<double>() > 0,
         "check '" + s.id + "' needs positive points in checks.json");
    s.points = c["points"].get<double>();
    read_flags(s, c);
    for (auto& other : e.checks) need(other.id != s.id, "check '" + s.id + "' is listed twice");
    e.checks.push_back(s);
  }
  return e;
}

const CheckSpec* Exercise::find_check(const std::string& id) const {
  for (auto& c : checks)
    if (c.id == id) return &c;
  return nullptr;
}

}  // namespace judge
