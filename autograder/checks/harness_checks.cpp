// Chapter 7: the student's test harness is the submission. The judge runs it (groups_harness.py, with unittest)
// against the correct operator, where every test must pass, and against planted-bug operators built by CMake
// (cmake/OperatorsUnderTest.cmake), where at least one test must fail. "Caught" means the harness ran to its end and
// reported a failing test: a harness whose process dies (the operator called exit()) reported nothing.
#include <doctest/doctest.h>

#include "../judge/grading.hpp"

using namespace judge;

namespace {

struct HarnessRun {
  const GroupResult* group = nullptr;
  int passed = 0, failing = 0, skipped = 0;
  std::string failing_tests, skipped_tests;  // "name: first line of the message" lines
};

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl) + " ...";
}

std::string last_line(const std::string& s) {
  auto end = s.find_last_not_of("\n ");
  if (end == std::string::npos) return s;
  auto nl = s.rfind('\n', end);
  return s.substr(nl == std::string::npos ? 0 : nl + 1, end - (nl == std::string::npos ? 0 : nl + 1) + 1);
}

HarnessRun run_harness(const std::string& library, bool hide_cuda) {
  auto& s = Session::get();
  if (library.empty())
    throw NotRun("this grader was built without the course's operators (cmake/OperatorsUnderTest.cmake needs "
                 "solutions/06_autograd and CUDA): chapter 7 cannot be graded here");
  // Every run sees its operator at the same path, under the same name: the harness learns which operator it
  // tests only by testing it (build/harness_targets/<bug>/... would name the bug).
  fs::path shown_dir = s.cfg.work_dir / "operator_under_test";
  fs::path shown = shown_dir / "libmm16_autograd.so";
  fs::create_directories(shown_dir);
  fs::remove(shown);  // a new file, not one rewritten under a process that may still map it
  fs::copy_file(library, shown);
  json args = {{"library", ""}, {"target", shown.string()}, {"judge_tag", library},
               {"read_only", json::array({shown_dir.string()})}, {"hide_cuda", hide_cuda}};
  HarnessRun run;
  run.group = &s.group("harness", args);
  if (!run.group->ok) return run;
  for (auto& t : run.group->report.value("tests", json::array())) {
    std::string outcome = t.value("outcome", ""), id = t.value("id", "?");
    if (outcome == "passed") {
      ++run.passed;
    } else if (outcome == "skipped") {
      ++run.skipped;
      std::string why = t.value("message", "");
      auto colon = why.find(':');
      std::string todo = why.rfind("TODO(student)", 0) == 0 && colon != std::string::npos ? " [" + why.substr(0, colon) + "]" : "";
      run.skipped_tests += (run.skipped_tests.empty() ? " " : ", ") + id.substr(id.rfind('.') + 1) + todo;
    } else {
      ++run.failing;
      run.failing_tests += (run.failing_tests.empty() ? " " : "; ") + id + " (" + outcome + ": " +
                           last_line(t.value("message", "")) + ")";
    }
  }
  return run;
}

std::string counts(const HarnessRun& r) {
  return std::to_string(r.passed) + " passed, " + std::to_string(r.failing) + " failed, " +
         std::to_string(r.skipped) + " skipped";
}

std::string course_operator() { return Session::get().toolchain.value("course_operator", ""); }

// The harness against the correct operator: the precondition of every catches.* row.
const HarnessRun& reference_run() {
  static HarnessRun r = run_harness(course_operator(), false);
  return r;
}

std::string died(const HarnessRun& r) {
  const ProcessResult& p = r.group->process;
  if (p.timed_out) return "it was stopped at the time limit";
  return "its process " + p.describe() + " before the harness reported (last output: " +
         last_line(p.err.empty() ? p.out : p.err) + ")";
}

void catches(const std::string& name, const std::string& bug) {
  json target;
  for (auto& t : Session::get().toolchain.value("harness_targets", json::array()))
    if (t.value("name", "") == name) target = t;
  if (target.is_null()) throw NotRun("the grader has no planted operator '" + name + "' (built without CUDA?)");
  if (target.value("device", "cpu") == "cuda" && skip_without_cuda()) return;
  const HarnessRun& ref = reference_run();
  if (!ref.group->ok || ref.failing > 0)
    return fail("not counted: your harness does not pass the correct operator (see harness.passes_reference)",
                "a harness that passes the correct operator and fails this one", "it fails the correct one too");
  HarnessRun r = run_harness(target.at("library").get<std::string>(), false);
  if (!r.group->ok)
    return fail("not caught: against an operator with " + bug + ", your harness did not finish: " + died(r),
                "the harness runs to its end and reports a failing test",
                r.group->failure + "\n(A test run that dies reports nothing; if the operator may exit(), call it "
                "in a child process.)");
  if (r.failing == 0)
    return fail("not caught: every test passed against an operator with " + bug,
                "at least one failing test", counts(r) + (r.skipped ? "; skipped:" + r.skipped_tests : ""));
  pass("caught by " + std::to_string(r.failing) + " failing test(s):" + r.failing_tests);
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("harness.passes_reference") {
    const HarnessRun& r = reference_run();
    if (!r.group->ok)
      return fail("your harness did not finish against the correct operator: " + r.group->failure,
                  "every test passes (or skips) against the correct operator", r.group->failure);
    if (r.passed == 0)
      return fail("no test passed against the correct operator (" + counts(r) + ")",
                  "at least one test that runs", counts(r));
    if (r.failing > 0)
      return fail("your harness fails the correct operator: a test that fails a correct operator catches nothing",
                  "every test passes (or skips)", counts(r) + ":" + r.failing_tests);
    pass(counts(r) + (r.skipped ? "; skipped:" + r.skipped_tests : ""));
  }

  TEST_CASE("harness.cpu_only_split") {
    HarnessRun r = run_harness(course_operator(), true);
    if (!r.group->ok)
      return fail("with no CUDA device visible your harness did not finish: " + r.group->failure,
                  "the CUDA tests skip, the others pass", r.group->failure);
    if (r.failing > 0)
      return fail("with no CUDA device visible some tests fail instead of skipping",
                  "CUDA tests skipped (unittest.skipUnless(torch.cuda.is_available(), ...)), the rest pass",
                  counts(r) + ":" + r.failing_tests);
    if (r.passed == 0) return fail("with no CUDA device no test passed", "the CPU tests pass", counts(r));
    pass("CUDA hidden (CUDA_VISIBLE_DEVICES=): " + counts(r));
  }

  TEST_CASE("catches.wrong_forward_float64") { catches("wrong_forward_float64", "a forward that doubles float64 products"); }
  TEST_CASE("catches.ignores_strides") { catches("ignores_strides", "a kernel that ignores strides"); }
  TEST_CASE("catches.exit_on_invalid") { catches("exit_on_invalid", "std::exit(1) on a 1-D input"); }
  TEST_CASE("catches.missing_fake") { catches("missing_fake", "no fake (Meta) kernel"); }
  TEST_CASE("catches.wrong_backward") { catches("wrong_backward", "a backward that doubles the gradients"); }
  TEST_CASE("catches.default_stream") { catches("default_stream", "a kernel launched on the legacy default stream"); }
  TEST_CASE("catches.wrong_device") { catches("wrong_device", "the output copied to the CPU"); }
}
