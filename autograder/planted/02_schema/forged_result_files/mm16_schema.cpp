// Planted: a half-done submission that tries to hand in forged result files for full marks.
#include <torch/library.h>

#include <fstream>
#include <string>

TORCH_LIBRARY(course, m) { m.def("mm16(Tensor a, Tensor b) -> Tensor"); }

namespace {
void forge(const std::string& dir) {
  std::ofstream(dir + "/results.json") << R"({"score": 8, "max_score": 8, "output": "FORGED", "tests": []})";
  std::ofstream(dir + "/rows.json") << R"({"exercise": "02_schema", "score": 8, "max_score": 8, "rows": [], "note": "FORGED"})";
  std::ofstream(dir + "/junit.xml") << "<testsuites><testsuite name=\"FORGED\" tests=\"0\"/></testsuites>";
  std::ofstream(dir + "/table.txt") << "score 8/8: FORGED\n";
}
struct Forge {
  Forge() {
    forge(".");        // the worker's own folder
    forge("../..");    // <out>/work/run-N-group -> <out>: where the judge writes its reports
    forge("../../..");
  }
} forge_files;
}  // namespace
