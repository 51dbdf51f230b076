// The judge: decides every verdict of a grading run. It never links or loads the submission: a worker process
// does that and returns raw data (worker_run.cpp), and the checks (checks/*.cpp, doctest test cases) judge it here.
//
// Whatever fails inside the judge itself (a segfault, abort(), std::terminate, a stack overflow in a check), the
// reports are still written: the checks run in a child process, which rewrites rows.json after every row
// (report.hpp, write_progress); if it dies, this process writes every report from what it recorded, each undecided
// row FAILed as a grader bug, and exits 1.
#define DOCTEST_CONFIG_IMPLEMENT
// No doctest signal handler: it would run the reporters (allocating, writing files) inside the handler of a fault,
// where that can deadlock or fault again. A fault ends the checking process; its parent writes the reports.
#define DOCTEST_CONFIG_NO_POSIX_SIGNALS
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include "grading.hpp"
#include "phase.hpp"
#include "report.hpp"
#include "sandbox.hpp"

namespace {
const char* kUsage =
    "usage: judge --exercise ID --submission DIR [options] [-- doctest options]\n"
    "  --exercise ID       exercise to grade, e.g. 02_schema (its checks come from the course, not the submission)\n"
    "  --submission DIR    folder holding the submission's source files\n"
    "  --out DIR           where table.txt, junit.xml and results.json go (default: " COURSE_BINARY_DIR
    "/grades/ID)\n"
    "  --seed N            seed of the inputs the judge chooses (default: random, printed)\n"
    "  --course-root DIR   the course checkout (default: " COURSE_SOURCE_DIR
    ")\n"
    "  --toolchain FILE    compiler settings written by CMake (default: " COURSE_BINARY_DIR
    "/toolchain.json)\n"
    "  --worker-timeout S  wall-clock limit of one worker run, in seconds (default 120)\n"
    "  --require-cuda      a check that needs a CUDA device FAILs (not graded, counted as failed) when there is none,\n"
    "                      instead of being SKIPPED: a grade that could not run its CUDA rows is not complete\n"
    "  --protections       print (JSON) which sandbox protections this machine allows, and exit\n"
    "  --list              list the exercise's checks and exit\n"
    "  --list-checks       list every check compiled into this judge (its doctest test cases) and exit\n"
    "  --no-color          plain table even on a terminal\n"
    "  --test-fault CHECK[:KIND]  TEST HOOK, for the grader's own tests: the judge faults inside CHECK (KIND:\n"
    "                      segv (default), abort, terminate, stack, exit0), to prove the reports survive it\n";

int usage_error(const std::string& msg) {
  std::cerr << "judge: " << msg << "\n" << kUsage;
  return 2;
}
}  // namespace

// Arms `sig` for when the parent `parent` dies; false when it was already gone before the signal was armed.
static bool die_with_parent(pid_t parent, int sig) {
  prctl(PR_SET_PDEATHSIG, sig);
  return getppid() == parent;
}

namespace {
using namespace judge;

// The command line, read: what to do besides grading, and the options left to doctest.
struct Options {
  Config cfg;
  bool protections = false, list = false, color = isatty(1) && !getenv("NO_COLOR");
  std::vector<const char*> doctest_args;
};

// An option after which the judge is done: --list-checks, --help, or an unknown option (a usage error).
int final_option(const std::string& a, char* argv0) {
  if (a == "--list-checks") {
    const char* query[] = {argv0, "--list-test-cases", "--reporters=names", "--no-version"};
    doctest::Context names(4, query);
    return names.run();
  }
  if (a == "-h" || a == "--help") {
    std::cout << kUsage;
    return 0;
  }
  return usage_error("unknown option '" + a + "'");
}

// Reads the command line into `o`; an exit status when the judge is done already (help, --list-checks, a usage
// error), else nothing.
std::optional<int> read_options(int argc, char** argv, Options& o) {
  Config& cfg = o.cfg;
  cfg.course_root = COURSE_SOURCE_DIR;
  cfg.toolchain_file = fs::path(COURSE_BINARY_DIR) / "toolchain.json";
  o.doctest_args = {argv[0]};
  // the options that take a value, and where it goes; then those that are a switch
  const std::map<std::string, std::function<void(const std::string&)>> valued = {
      {"--exercise", [&](const std::string& v) { cfg.exercise_id = v; }},
      {"--submission", [&](const std::string& v) { cfg.submission = v; }},
      {"--out", [&](const std::string& v) { cfg.out_dir = v; }},
      {"--course-root", [&](const std::string& v) { cfg.course_root = v; }},
      {"--toolchain", [&](const std::string& v) { cfg.toolchain_file = v; }},
      {"--seed", [&](const std::string& v) { cfg.seed = std::stoull(v); }},
      {"--worker-timeout", [&](const std::string& v) { cfg.worker_timeout_s = std::stod(v); }},
      {"--test-fault", [&](const std::string& v) { cfg.test_fault = v; }}};
  const std::map<std::string, std::function<void()>> switches = {{"--require-cuda", [&] { cfg.require_cuda = true; }},
                                                                 {"--list", [&] { o.list = true; }},
                                                                 {"--protections", [&] { o.protections = true; }},
                                                                 {"--no-color", [&] { o.color = false; }}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {  // the rest is doctest's
      for (++i; i < argc; ++i) o.doctest_args.push_back(argv[i]);
      break;
    }
    try {
      if (auto v = valued.find(a); v != valued.end()) {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        v->second(argv[++i]);
      } else if (auto s = switches.find(a); s != switches.end()) {
        s->second();
      } else {
        return final_option(a, argv[0]);
      }
    } catch (const std::exception& e) {
      return usage_error(e.what());
    }
  }
  return std::nullopt;
}

// judge --protections: which sandbox protections this machine allows, as JSON.
int print_protections(const Config& cfg) {
  json tc;
  try {
    tc = read_json_bounded(cfg.toolchain_file);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  Sandbox::get().configure(tc, cfg.course_root);
  std::cout << Sandbox::get().protections_json().dump(2) << "\n";
  return 0;
}

// The options checked against the course (the exercise exists, the folders do) and completed with their defaults;
// an exit status when they are wrong, else nothing.
std::optional<int> check_options(Options& o) {
  Config& cfg = o.cfg;
  if (cfg.exercise_id.empty()) return usage_error("--exercise is required");
  fs::path metadata = cfg.course_root / "exercises" / cfg.exercise_id / "exercise.json";
  if (!fs::is_regular_file(metadata)) {
    std::string known;
    std::error_code ec;
    for (auto& d : fs::directory_iterator(cfg.course_root / "exercises", ec))
      if (fs::is_regular_file(d.path() / "exercise.json")) known += " " + d.path().filename().string();
    return usage_error("no exercise '" + cfg.exercise_id + "' (known:" + known + ")");
  }
  if (!o.list) {
    if (cfg.submission.empty()) return usage_error("--submission is required");
    if (!fs::is_directory(cfg.submission))
      return usage_error("submission folder " + cfg.submission.string() + " does not exist");
    if (!fs::is_regular_file(cfg.toolchain_file))
      return usage_error("no " + cfg.toolchain_file.string() +
                         ": configure the course with CMake first (./course build)");
  }
  if (cfg.out_dir.empty()) cfg.out_dir = fs::path(COURSE_BINARY_DIR) / "grades" / cfg.exercise_id;
  if (!cfg.submission.empty()) cfg.submission = fs::absolute(cfg.submission);  // --list needs none
  cfg.out_dir = fs::absolute(cfg.out_dir);
  cfg.work_dir = cfg.out_dir / "work";
  return std::nullopt;
}

// The checking process: the exercise's checks (doctest test cases) run, then every report is written. Never returns.
[[noreturn]] void run_checks(Session& session, Options& o, const std::function<double()>& seconds) {
  doctest::Context ctx;
  ctx.setOption("reporters", "rows");
  // An exercise runs exactly the checks its metadata lists, so one check (a test case) can serve several exercises.
  skip_without_toolkit(session);
  std::string check_ids;
  for (auto& c : session.exercise.checks)
    if (!c.toolkit || session.toolkit_available()) check_ids += (check_ids.empty() ? "" : ",") + c.id;
  if (check_ids.empty()) check_ids = "\x01";  // none left to run: a filter that matches no check
  ctx.setOption("test-case", check_ids.c_str());
  ctx.setOption("order-by", "file");
  ctx.applyCommandLine(static_cast<int>(o.doctest_args.size()), o.doctest_args.data());
  ctx.setOption("no-breaks", true);
  ctx.run();
  session.finish();
  auto rows = final_rows(session);
  write_reports(session, rows, seconds(), o.color);
  std::exit(summarize(rows).failed > 0 ? 1 : 0);
}

// The checking process died (or ended without its reports): a fault inside the judge, never the submission's
// (that runs in workers). Whatever it started goes, and every report is written from the rows it recorded.
int report_crash(Session& session, int status, const json& progress, bool color,
                 const std::function<double()>& seconds) {
  Sandbox::get().kill_leftovers(session.cfg.work_dir);
  std::string how = WIFSIGNALED(status)
                        ? "signal " + std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status))
                        : "it ended with exit status " + std::to_string(WEXITSTATUS(status)) + " before its reports";
  std::string deciding = progress.is_object() && progress.contains("deciding") && progress["deciding"].is_string()
                             ? progress["deciding"].get<std::string>()
                             : "";
  const std::string bug = ": a grader bug, please report it";
  auto rows = rows_after_crash(
      session, progress, "the grader crashed while deciding this row (" + how + ")" + bug,
      "not decided: the grader crashed (" + how + ")" +
          (deciding.empty() ? std::string(" before this row") : " while deciding " + deciding + ", before this row") +
          bug);
  session.grader_crash = "the judge's checking process crashed (" + how + ")" +
                         (deciding.empty() ? std::string() : " while deciding " + deciding) +
                         "; the rows it had not decided FAIL" + bug;
  json extra = {{"grader_crash",
                 {{"how", how},
                  {"while_deciding", deciding.empty() ? json(nullptr) : json(deciding)},
                  {"signal", WIFSIGNALED(status) ? json(WTERMSIG(status)) : json(nullptr)},
                  {"exit_status", WIFEXITED(status) ? json(WEXITSTATUS(status)) : json(nullptr)}}}};
  if (progress.is_object() && progress.contains("judge_peak_rss_mb") && progress["judge_peak_rss_mb"].is_number())
    extra["judge_peak_rss_mb"] = progress["judge_peak_rss_mb"];  // the checking process's, as it last recorded
  std::cerr << "judge: " << session.grader_crash << "\n";
  write_reports(session, rows, seconds(), color, extra);
  write_phase(session.cfg.out_dir, "done", "done");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // The course's commands wait for the judges they start and name themselves in COURSE_JUDGE_PARENT: one killed (a
  // batch or a mutants run stopped, a job's time limit) takes its judge with it, rather than leave it grading into a
  // folder the next command reuses. Started by anyone else (the name is not our parent's), a judge runs on its own.
  if (const char* parent = getenv("COURSE_JUDGE_PARENT"); parent && std::to_string(getppid()) == parent) {
    if (!die_with_parent(getppid(), SIGTERM)) return 1;
  }
  Options o;
  if (auto done = read_options(argc, argv, o)) return *done;
  if (o.protections) return print_protections(o.cfg);
  if (auto wrong = check_options(o)) return *wrong;

  Session& session = Session::get();
  try {
    if (o.list) {
      fs::path metadata = o.cfg.course_root / "exercises" / o.cfg.exercise_id / "exercise.json";
      session.exercise = Exercise::load(metadata, catalog_path(o.cfg.course_root));
      for (auto& c : session.exercise.checks)
        std::cout << c.id << "\t" << c.points << "\t"
                  << (c.cuda      ? "cuda"
                      : c.toolkit ? "toolkit"
                                  : "cpu")
                  << "\t" << c.title << "\n";
      return 0;
    }
    session.init(o.cfg);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }

  auto t0 = std::chrono::steady_clock::now();
  std::function<double()> seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Reports left by an earlier grade in this folder must not pass for this one's; rows.json starts as "nothing
  // decided yet" (the child rewrites it after every row).
  fs::create_directories(session.cfg.out_dir);
  for (const char* f : {"table.txt", "junit.xml", "results.json"}) fs::remove(session.cfg.out_dir / f);
  write_progress(session);
  std::cout << std::flush;
  std::cerr << std::flush;

  const pid_t judge_pid = getpid();
  pid_t child = fork();
  if (child == 0) {
    if (!die_with_parent(judge_pid, SIGKILL)) _exit(1);  // a judge killed from outside takes its checks with it
    run_checks(session, o, seconds);
  }
  if (child < 0) {
    std::cerr << "judge: cannot start the checking process: " << std::strerror(errno) << "\n";
    return 2;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  json progress;
  try {
    progress = read_json_bounded(session.cfg.out_dir / "rows.json");
  } catch (const std::exception&) {
    progress = json();  // unreadable: nothing was decided
  }
  const bool finished = progress.is_object() && progress.value("final", false) == true;
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1) && finished)
    return WEXITSTATUS(status);
  return report_crash(session, status, progress, o.color, seconds);
}
