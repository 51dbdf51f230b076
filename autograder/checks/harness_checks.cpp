// Chapter 7: the student's test harness is the submission. The judge runs it (groups_harness.py, with unittest)
// against the correct operator, where every test must pass, and against planted-bug operators built by CMake
// (cmake/OperatorsUnderTest.cmake), where at least one test must fail. "Caught" means the harness ran to its end and
// reported a failing test, in a run where it called the operator: a harness whose process dies (the operator called
// exit()) reported nothing, and one that fails without calling the operator tested nothing.
//
// A harness must not be able to tell the operators apart except by calling them:
//  * every run sees its operator at one path under one name, a copy salted for that run: a random page and a random
//    size, written just before the run (no hash, size or mtime is shared by two runs); CMake built the operators with
//    the same symbol tables and neutral source paths;
//  * the runs (the correct operator twice, with and without CUDA, and each planted one) happen in an order shuffled
//    from the grade's seed, each in a fresh scratch folder and a fresh process, with the submission's own files
//    written anew: no order, timestamp or leftover says which run came before;
//  * nothing is kept between runs: the sandbox gives each a fresh /tmp and HOME, and the judge empties the kernel
//    keyrings of the sandbox uid, which outlive every process and every sandbox;
//  * each operator counts its calls (autograder/operators_under_test/mm16_call_counter.cpp): a row counts a catch only
//    in a run where the harness called the operator, and the correct operator must have been called too.
// What no copy can hide is the operator's own code: a harness that compares the machine code (on disk or in memory)
// with what it knows of the course's builds can still tell them apart. That is a known limit (autograder/THREATS.md).
#include <doctest/doctest.h>
#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "../judge/grading.hpp"
#include "../judge/sandbox.hpp"

using namespace judge;

namespace {

const char* kCallsFile = "mm16_calls";  // in each run's folder; groups_harness.py points COURSE_MM16_CALLS at it

struct HarnessRun {
  const GroupResult* group = nullptr;
  int passed = 0, failing = 0, skipped = 0;
  long long calls = 0;  // calls of course::mm16 in the run (the harness's process and its children)
  std::string failing_tests, skipped_tests;
};

// One operator as a run sees it.
struct Target {
  std::string run;      // the run's name: "correct", "correct_cpu_only" or a planted operator's
  std::string library;  // where CMake built it
  std::string device;   // "cuda": shows only on a GPU
  bool hide_cuda = false;
};

std::string last_line(const std::string& s) {
  auto end = s.find_last_not_of("\n ");
  if (end == std::string::npos) return s;
  auto nl = s.rfind('\n', end);
  return s.substr(nl == std::string::npos ? 0 : nl + 1, end - (nl == std::string::npos ? 0 : nl + 1) + 1);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) throw NotRun("the judge could not read " + p.string());
  return ss.str();
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw NotRun("the judge could not write " + p.string());
}

// [offset, offset + size) of the section `name` in a 64-bit little-endian ELF image; size 0 when absent.
std::pair<std::size_t, std::size_t> elf_section(const std::string& image, const char* name) {
  Elf64_Ehdr eh;
  if (image.size() < sizeof eh || image.compare(0, SELFMAG, ELFMAG) != 0 || image[EI_CLASS] != ELFCLASS64 ||
      image[EI_DATA] != ELFDATA2LSB)
    return {0, 0};
  std::memcpy(&eh, image.data(), sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum || eh.e_shoff > image.size() ||
      eh.e_shnum > (image.size() - eh.e_shoff) / sizeof(Elf64_Shdr))
    return {0, 0};
  auto header = [&](std::size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, image.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  Elf64_Shdr names = header(eh.e_shstrndx);
  if (names.sh_offset > image.size() || names.sh_size > image.size() - names.sh_offset) return {0, 0};
  const std::size_t want = std::strlen(name) + 1;
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = header(i);
    if (sh.sh_name >= names.sh_size || names.sh_size - sh.sh_name < want ||
        std::memcmp(image.data() + names.sh_offset + sh.sh_name, name, want) != 0)
      continue;
    if (sh.sh_type != SHT_PROGBITS || sh.sh_offset > image.size() || sh.sh_size > image.size() - sh.sh_offset)
      return {0, 0};
    return {sh.sh_offset, sh.sh_size};
  }
  return {0, 0};
}

// Every run of the grade, made at once, in an order shuffled from the seed.
class Grade {
 public:
  static Grade& get() {
    static Grade g;
    return g;
  }
  // The run `name` ("correct", "correct_cpu_only" or a planted operator's), after every run has been made.
  const HarnessRun& run(const std::string& name) {
    if (!done_) make_all();
    if (!failure_.empty()) throw NotRun(failure_);
    auto found = runs_.find(name);
    if (found == runs_.end()) throw NotRun("the grader made no run named '" + name + "'");
    return found->second;
  }
  // The planted operator `name` as the toolchain lists it (null: not built here).
  json planted(const std::string& name) {
    for (auto& t : Session::get().toolchain.value("harness_targets", json::array()))
      if (t.value("name", "") == name && !t.value("correct", false)) return t;
    return nullptr;
  }

 private:
  bool done_ = false;
  std::string failure_;
  std::map<std::string, HarnessRun> runs_;
  std::map<std::string, std::string> originals_;              // library -> its bytes as CMake built it
  std::size_t padded_size_ = 0;                               // every copy's size is drawn above the largest original
  std::vector<std::pair<std::string, std::string>> sources_;  // the submission's files, as the judge first copied them
  std::random_device salt_;  // not the seed: nothing of a copy is reproducible or predictable

  void make_all() {
    done_ = true;
    auto& s = Session::get();
    std::vector<Target> targets;
    bool correct = false;
    for (auto& t : s.toolchain.value("harness_targets", json::array())) {
      Target target{t.value("name", ""), t.value("library", ""), t.value("device", "cpu")};
      if (t.value("correct", false)) {
        correct = true;
        targets.push_back({"correct", target.library, "cpu", false});
        targets.push_back({"correct_cpu_only", target.library, "cpu", true});
      } else if (target.device != "cuda" || s.cuda_available()) {
        targets.push_back(target);
      }
    }
    if (!correct || targets.size() < 3) {
      failure_ =
          "this grader was built without the course's operators under test (cmake/OperatorsUnderTest.cmake "
          "needs solutions/06_autograd and CUDA): chapter 7 cannot be graded here";
      return;
    }
    try {
      for (auto& t : targets) {
        if (originals_.count(t.library)) continue;
        std::string bytes = read_file(t.library);
        if (elf_section(bytes, ".course_salt").second == 0)
          throw NotRun(t.library + " has no .course_salt section to salt: rebuild the course (./course build)");
        padded_size_ = std::max(padded_size_, bytes.size());
        originals_[t.library] = std::move(bytes);
      }
      const BuildResult& b = s.build();
      if (b.ok)
        for (auto& e : fs::directory_iterator(b.dir / "src"))
          if (e.is_regular_file()) sources_.emplace_back(e.path().filename().string(), read_file(e.path()));
    } catch (const std::exception& e) {
      failure_ = e.what();
      return;
    }
    // Fisher-Yates with the 64-bit Mersenne Twister, whose output the standard fixes: the seed the judge prints
    // reproduces the order on any machine with the same operators.
    auto rng = rng_for("harness run order");
    for (std::size_t i = targets.size() - 1; i > 0; --i) std::swap(targets[i], targets[rng() % (i + 1)]);
    Sandbox::get().empty_keyrings();  // the uid may have been another grade's (it is derived from a pid)
    for (auto& t : targets) runs_[t.run] = run_one(t);
  }

  // The operator's copy for one run: the .course_salt page filled with random bytes, then random bytes up to a
  // random size above every original's, so the size says nothing either.
  std::string salted(const std::string& library) {
    std::string bytes = originals_.at(library);
    auto [offset, size] = elf_section(bytes, ".course_salt");
    std::uniform_int_distribution<int> byte(0, 255);
    std::mt19937_64 fill((static_cast<uint64_t>(salt_()) << 32) ^ salt_());
    for (std::size_t i = 0; i < size; ++i) bytes[offset + i] = static_cast<char>(byte(fill));
    std::size_t total = padded_size_ + 1 + fill() % 65536;
    while (bytes.size() < total) bytes.push_back(static_cast<char>(byte(fill)));
    return bytes;
  }

  HarnessRun run_one(const Target& t) {
    auto& s = Session::get();
    const BuildResult& b = s.build();
    // The operator: one path, one name, a file and a folder made just now, for every run. Inside the build folder,
    // which the grade's worker server mounts: the runs are served by it (forked from a process that has imported
    // torch and made its first opcheck) instead of a fresh sandbox each.
    fs::path shown_dir = (b.ok ? b.dir : s.cfg.work_dir) / "operator_under_test";
    fs::path shown = shown_dir / "libmm16_autograd.so";
    std::error_code ec;
    fs::remove_all(shown_dir, ec);
    fs::create_directories(shown_dir);
    write_file(shown, salted(t.library));
    fs::permissions(shown, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    // The submission's own files, written anew: their timestamps say when this run began, not how many came before.
    if (b.ok) {
      fs::remove_all(b.dir / "src", ec);
      fs::create_directories(b.dir / "src");
      for (auto& [name, bytes] : sources_) write_file(b.dir / "src" / name, bytes);
    }
    // judge_tag tells the runs apart for the judge alone; the worker never sees it.
    json args = {{"library", ""},
                 {"target", shown.string()},
                 {"judge_tag", t.run},
                 {"calls_file", kCallsFile},
                 {"read_only", json::array({shown_dir.string()})},
                 {"hide_cuda", t.hide_cuda},
                 {"judge_gpu", !t.hide_cuda && s.cuda_available()}};
    HarnessRun run;
    run.group = &s.group("harness", args);
    if (!run.group->dir.empty()) {
      fs::path calls = run.group->dir / kCallsFile;
      if (fs::is_regular_file(fs::symlink_status(calls, ec)))
        run.calls = static_cast<long long>(fs::file_size(calls, ec));
      fs::remove_all(run.group->dir, ec);  // nothing of this run stays for the next one to find
    }
    Sandbox::get().empty_keyrings();
    if (!run.group->ok) return run;
    for (auto& test : run.group->report.value("tests", json::array())) {
      std::string outcome = test.value("outcome", ""), id = test.value("id", "?");
      if (outcome == "passed") {
        ++run.passed;
      } else if (outcome == "skipped") {
        ++run.skipped;
        std::string why = test.value("message", "");
        auto colon = why.find(':');
        std::string todo =
            why.rfind("TODO(student)", 0) == 0 && colon != std::string::npos ? " [" + why.substr(0, colon) + "]" : "";
        run.skipped_tests += (run.skipped_tests.empty() ? " " : ", ") + id.substr(id.rfind('.') + 1) + todo;
      } else {
        ++run.failing;
        run.failing_tests += (run.failing_tests.empty() ? " " : "; ") + id + " (" + outcome + ": " +
                             last_line(test.value("message", "")) + ")";
      }
    }
    return run;
  }
};

std::string counts(const HarnessRun& r) {
  return std::to_string(r.passed) + " passed, " + std::to_string(r.failing) + " failed, " + std::to_string(r.skipped) +
         " skipped";
}

std::string calls(const HarnessRun& r) { return "course::mm16 called " + std::to_string(r.calls) + " time(s)"; }

// The precondition of every catches.* row: the harness passes the correct operator, having called it.
bool passes_correct(const HarnessRun& r) { return r.group->ok && r.failing == 0 && r.passed > 0 && r.calls > 0; }

std::string died(const HarnessRun& r) {
  const ProcessResult& p = r.group->process;
  if (p.timed_out) return "it was stopped at the time limit";
  return "its process " + p.describe() +
         " before the harness reported (last output: " + last_line(p.err.empty() ? p.out : p.err) + ")";
}

void catches(const std::string& name, const std::string& bug) {
  auto& grade = Grade::get();
  json target = grade.planted(name);
  if (target.is_null()) throw NotRun("the grader has no planted operator '" + name + "' (built without CUDA?)");
  if (target.value("device", "cpu") == "cuda" && skip_without_cuda()) return;
  if (!passes_correct(grade.run("correct")))
    return fail("not counted: your harness does not pass the correct operator (see harness.passes_reference)",
                "a harness that passes the correct operator and fails this one", "it fails the correct one too");
  const HarnessRun& r = grade.run(name);
  if (!r.group->ok)
    return fail("not caught: against an operator with " + bug + ", your harness did not finish: " + died(r),
                "the harness runs to its end and reports a failing test",
                r.group->failure +
                    "\n(A test run that dies reports nothing; if the operator may exit(), call it "
                    "in a child process.)");
  if (r.failing == 0)
    return fail("not caught: every test passed against an operator with " + bug, "at least one failing test",
                counts(r) + (r.skipped ? "; skipped:" + r.skipped_tests : ""));
  if (r.calls == 0)
    return fail("not caught: against an operator with " + bug +
                    " your harness failed without calling it: a failure "
                    "that never ran the operator says nothing about it",
                "a failing test in a run that calls course::mm16", counts(r) + ", " + calls(r) + ":" + r.failing_tests);
  pass("caught by " + std::to_string(r.failing) + " failing test(s):" + r.failing_tests + " (" + calls(r) + ")");
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("harness.passes_reference") {
    const HarnessRun& r = Grade::get().run("correct");
    if (!r.group->ok)
      return fail("your harness did not finish against the correct operator: " + r.group->failure,
                  "every test passes (or skips) against the correct operator", r.group->failure);
    if (r.passed == 0)
      return fail("no test passed against the correct operator (" + counts(r) + ")", "at least one test that runs",
                  counts(r));
    if (r.failing > 0)
      return fail("your harness fails the correct operator: a test that fails a correct operator catches nothing",
                  "every test passes (or skips)", counts(r) + ":" + r.failing_tests);
    if (r.calls == 0)
      return fail(
          "your harness never called the operator: its tests passed without running course::mm16, so they "
          "test nothing",
          "tests that call course::mm16 (through torch.ops.course.mm16, in this process or a child)",
          counts(r) + ", " + calls(r));
    pass(counts(r) + (r.skipped ? "; skipped:" + r.skipped_tests : "") + "; " + calls(r));
  }

  TEST_CASE("harness.cpu_only_split") {
    const HarnessRun& r = Grade::get().run("correct_cpu_only");
    if (!r.group->ok)
      return fail("with no CUDA device visible your harness did not finish: " + r.group->failure,
                  "the CUDA tests skip, the others pass", r.group->failure);
    if (r.failing > 0)
      return fail("with no CUDA device visible some tests fail instead of skipping",
                  "CUDA tests skipped (unittest.skipUnless(torch.cuda.is_available(), ...)), the rest pass",
                  counts(r) + ":" + r.failing_tests);
    if (r.passed == 0) return fail("with no CUDA device no test passed", "the CPU tests pass", counts(r));
    if (r.calls == 0)
      return fail("with no CUDA device visible no test called the operator", "the CPU tests call course::mm16",
                  counts(r) + ", " + calls(r));
    pass("CUDA hidden (CUDA_VISIBLE_DEVICES=): " + counts(r));
  }

  TEST_CASE("catches.wrong_forward_float64") {
    catches("wrong_forward_float64", "a forward that doubles float64 products");
  }
  TEST_CASE("catches.wrong_forward_float16") {
    catches("wrong_forward_float16", "a forward that doubles float16 products");
  }
  TEST_CASE("catches.ignores_strides") { catches("ignores_strides", "a kernel that ignores strides"); }
  TEST_CASE("catches.exit_on_invalid") { catches("exit_on_invalid", "std::exit(1) on a 1-D input"); }
  TEST_CASE("catches.missing_fake") { catches("missing_fake", "no fake (Meta) kernel"); }
  TEST_CASE("catches.fake_wrong_shape") {
    catches("fake_wrong_shape",
            "a fake (Meta) kernel whose output is N x M, not M x N (right only for square outputs)");
  }
  TEST_CASE("catches.wrong_backward") { catches("wrong_backward", "a backward that doubles the gradients"); }
  TEST_CASE("catches.wrong_backward_b") { catches("wrong_backward_b", "a backward that doubles b's gradient alone"); }
  TEST_CASE("catches.wrong_dtype") { catches("wrong_dtype", "a float16 output for float16 inputs (right values)"); }
  TEST_CASE("catches.default_stream") { catches("default_stream", "a kernel launched on the legacy default stream"); }
  TEST_CASE("catches.wrong_device") { catches("wrong_device", "the output copied to the CPU"); }
}
