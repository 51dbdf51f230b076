// Checks every exercise has: the submission builds, and its library loads in the worker without ending it.
#include <doctest/doctest.h>

#include "../judge/grading.hpp"

using namespace judge;

TEST_SUITE("common") {
  TEST_CASE("build") {
    const BuildResult& b = Session::get().build();
    if (b.ok) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.1f", b.seconds);
      std::string left_out;
      for (auto& f : b.left_out) left_out += (left_out.empty() ? "" : ", ") + f;
      // what was built, named from its folder: libLIBRARY.so, or a stable-ABI package's LIBRARY/_C.abi3.so
      const std::string built = b.library.parent_path().filename().string() == Session::get().exercise.library
                                    ? Session::get().exercise.library + "/" + b.library.filename().string()
                                    : b.library.filename().string();
      if (Session::get().exercise.python_abi()) {
        pass("nothing to compile: the worker imports " + b.library.filename().string());
        return;
      }
      pass("built " + built + " from " + std::to_string(Session::get().exercise.sources.size() - b.left_out.size()) +
           " source(s) in " + secs + " s" +
           (left_out.empty() ? "" : " (CPU sources only: no CUDA toolkit to compile " + left_out + ")"));
    } else if (b.refused) {
      fail(b.failure, "the exercise's files, as regular files directly in the submission folder",
           "nothing was compiled: the judge reads no file through a link and no special file");
    } else if (!b.first_error.empty()) {
      // The row says the first error in the student's files; "What to fix" shows it with its source line first.
      std::string more = b.more_errors == 0
                             ? ""
                             : " (+" + std::to_string(b.more_errors) + " more error" + (b.more_errors > 1 ? "s)" : ")");
      fail(b.first_error + more, "the exercise's sources compile and link", b.failure + ":\n" + b.errors);
    } else {
      fail(b.failure, "the exercise's sources compile and link", b.log.empty() ? "(no compiler output)" : "\n" + b.log);
    }
  }

  TEST_CASE("load") {
    const GroupResult& g = Session::get().require("inspect");
    std::size_t n = g.report.value("ops", json::array()).size();
    const Exercise& ex = Session::get().exercise;
    pass((ex.stable_abi() || ex.python_abi() ? "import " + ex.library + " loaded it"
                                             : std::string("torch.ops.load_library loaded it")) +
         "; " + std::to_string(n) + " operator(s) in the course namespace");
  }
}
