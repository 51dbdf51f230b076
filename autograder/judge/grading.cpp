// The grade's session: its start (init: the exercise, the toolchain, a clean work folder) and end (finish: the worker
// server stopped, the run folders pruned), its timeline, the CUDA probe, the GPU turn, the drawn inputs' streams and
// the verdict functions the checks call. The build (build.cpp) and the worker runs (worker_run.cpp) are its phases.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <utility>

#include "phase.hpp"
#include "sandbox.hpp"
#include "session_internal.hpp"

namespace judge {

// letters from the OS's random source: not derived from the grade's seed, which the judge prints
std::string random_token(int n) {
  static std::random_device rd;
  static const char* letters = "abcdefghijklmnopqrstuvwxyz";  // no digits: no run number to parse
  std::string t;
  for (int i = 0; i < n; ++i) t += letters[rd() % 26];
  return t;
}

std::string tail_lines(const std::string& s, std::size_t max_lines) {
  std::size_t pos = s.size(), lines = 0;
  while (pos > 0 && lines <= max_lines) {
    pos = s.rfind('\n', pos - 1);
    if (pos == std::string::npos) return s;
    ++lines;
  }
  return pos == 0 && lines <= max_lines ? s : s.substr(pos + 1);  // (empty, or fewer lines than asked: all of it)
}

namespace {

// Deep enough to overflow any stack; the volatile condition keeps the compiler from proving it infinite.
volatile bool keep_recursing = true;
int recurse(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  return keep_recursing ? recurse(depth + 1) + frame[0] : 0;
}

}  // namespace

// TEST HOOK (judge --test-fault CHECK[:KIND]): a fault of the judge's own inside check CHECK, at the first call it
// makes to the session (build, group) or to a verdict function, so the tests can prove that the reports survive one.
// KIND: segv (default, a store through a null pointer), abort, terminate (std::terminate), stack (a stack overflow),
// exit0 (std::exit(0) in the middle of the grade).
void test_fault_point() {
  const Session& s = Session::get();
  const std::string& spec = s.cfg.test_fault;
  if (spec.empty() || !s.current) return;
  auto colon = spec.find(':');
  std::string id = spec.substr(0, colon), kind = colon == std::string::npos ? "segv" : spec.substr(colon + 1);
  if (id != s.current->id) return;
  struct rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a planted fault leaves no core file behind
  std::fflush(nullptr);
  if (kind == "abort") std::abort();
  if (kind == "terminate") std::terminate();
  if (kind == "stack") std::printf("%d", recurse(0));
  if (kind == "exit0") std::exit(0);
  volatile int* volatile nowhere = nullptr;
  *nowhere = 1;
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> v;
  if (j.contains(key))
    for (auto& x : j[key]) v.push_back(x.get<std::string>());
  return v;
}

FileLock::FileLock(const std::string& path, mode_t mode)
    : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode)) {
  if (fd_ >= 0)
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
}
FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

GpuTurn::GpuTurn() {
  const char* lock = getenv("COURSE_GPU_LOCK");
  std::string path = lock && *lock ? lock : "/tmp/course-gpu.lock";
  if (path != "off") lock_.emplace(path, 0666);
}

std::mt19937_64 rng_for(const std::string& tag) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : tag) h = (h ^ c) * 1099511628211ull;
  return std::mt19937_64(Session::get().cfg.seed ^ h);
}

Session& Session::get() {
  static Session s;
  return s;
}

void Session::record_time(const std::string& what, std::chrono::steady_clock::time_point from, json extra) {
  using secs = std::chrono::duration<double>;
  extra["what"] = what;
  extra["start"] = secs(from - started_).count();
  extra["seconds"] = secs(std::chrono::steady_clock::now() - from).count();
  timeline.push_back(std::move(extra));
}

void Session::init(Config c) {
  started_ = std::chrono::steady_clock::now();
  cfg = std::move(c);
  exercise =
      Exercise::load(cfg.course_root / "exercises" / cfg.exercise_id / "exercise.json", catalog_path(cfg.course_root));
  toolchain = read_json_bounded(cfg.toolchain_file);
  if (cfg.seed == 0) cfg.seed = std::random_device{}() | 1u;
  // What an earlier grade in this folder left (its builds and runs) goes; reports are written anew.
  std::error_code ec;
  for (auto& e : fs::directory_iterator(cfg.work_dir, ec)) {
    const std::string n = e.path().filename().string();
    for (const char* mine : {"run-", "build-", "live", "cuobjdump-", "operator_under_test", "probe-"})
      if (n.rfind(mine, 0) == 0) fs::remove_all(e.path(), ec);
  }
  fs::create_directories(cfg.work_dir);
  Sandbox::get().configure(toolchain, cfg.course_root, cfg.work_dir);
  write_phase(cfg.out_dir, "starting", "starting");
}

// Empties a run's folder of what was written there, but for what a student or an instructor reads to debug: small
// files (the request, the worker's answer, a sanitizer log) up to a few MiB in all. The bytes removed.
unsigned long long prune_run_folder(const fs::path& dir) {
  constexpr unsigned long long kKeepFile = 1ull << 20, kKeepAll = 8ull << 20;
  std::vector<std::pair<unsigned long long, fs::path>> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode))
      files.emplace_back(static_cast<unsigned long long>(st.st_blocks) * 512, it->path());
  }
  std::sort(files.begin(), files.end());  // smallest first: those are kept while the budget lasts
  unsigned long long kept = 0, removed = 0;
  for (auto& [bytes, path] : files) {
    if (bytes <= kKeepFile && kept + bytes <= kKeepAll) {
      kept += bytes;
    } else if (fs::remove(path, ec)) {
      removed += bytes;
    }
  }
  return removed;
}

namespace {

std::string mib_text(unsigned long long bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes >= (1ull << 30) ? "%.1f GiB" : "%.0f MiB",
                bytes >= (1ull << 30) ? double(bytes) / double(1ull << 30) : double(bytes) / double(1ull << 20));
  return buf;
}

}  // namespace

void Session::finish() {
  auto step = std::chrono::steady_clock::now();
  if (server_) {
    Sandbox::get().stop_server(*server_, 2.0);  // idle: it ends at once on its own, with its sandbox
    record_time("the worker server stopped", step);
  }
  server_.reset();
  // Every check has read its runs: their folders keep what a person reads to debug, not what the submission wrote.
  std::error_code ec;
  for (auto& e : fs::directory_iterator(cfg.work_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("run-", 0) == 0) removed_bytes += prune_run_folder(e.path());
    if (name == "live") {
      removed_bytes += Sandbox::folder_bytes(e.path());
      fs::remove_all(e.path(), ec);
    }
  }
  if (removed_bytes > (4ull << 20))
    cleanup_note = "removed " + mib_text(removed_bytes) +
                   " that the worker runs wrote to their folders (what the "
                   "submission wrote there; the reports, the build logs and the workers' answers are kept)";
  write_phase(cfg.out_dir, "done", "done");
}

void Session::start_cuda_probe() {
  if (cuda_probe_ || cuda_probe_run_.valid()) return;
  // the environment the workers get (the sandbox's allowlist), so the answer holds for them
  auto env = submission_environment();
  env["HOME"] = cfg.work_dir.string();
  ProcessSpec spec{{toolchain.at("python").get<std::string>(), "-c",
                    "import json, torch\n"
                    "n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
                    "print(json.dumps({'count': n, 'name': torch.cuda.get_device_name(0) if n else ''}))"},
                   env,
                   cfg.work_dir.string(),
                   120,
                   16 * 1024};
  // Niced: it runs beside the compile, whose result the student waits for first.
  if (fs::exists("/usr/bin/nice")) spec.argv.insert(spec.argv.begin(), {"/usr/bin/nice", "-n", "10"});
  cuda_probe_started_ = std::chrono::steady_clock::now();
  cuda_probe_run_ = std::async(std::launch::async, [spec] { return run_process(spec); });
}

bool Session::cuda_available() {
  if (!cuda_probe_) {
    // Asked of torch in a process that never loads the submission; started beside the build when the exercise has
    // CUDA rows (it runs while the compiler does), or here.
    start_cuda_probe();
    auto r = cuda_probe_run_.get();
    record_time("CUDA probe (torch.cuda.device_count, beside the build)", cuda_probe_started_);
    json j = json::parse(r.out, nullptr, false);
    bool valid = r.exited && r.exit_code == 0 && j.is_object() && j.contains("count") &&
                 j["count"].is_number_integer() && j.contains("name") && j["name"].is_string();
    cuda_probe_ = valid ? j : json{{"count", 0}, {"name", ""}};
  }
  return (*cuda_probe_)["count"].get<int>() > 0;
}

int Session::cuda_device_count() { return cuda_available() ? (*cuda_probe_)["count"].get<int>() : 0; }

std::string Session::cuda_device_name() { return cuda_available() ? (*cuda_probe_)["name"].get<std::string>() : ""; }

void pass(const std::string& detail) {
  test_fault_point();
  Row* r = Session::get().current;
  if (!r || r->verdict_given) return;
  r->verdict_given = true;
  r->status = Status::Pass;
  r->detail = detail;
}

void fail(const std::string& detail, const std::string& expected, const std::string& seen) {
  test_fault_point();
  Row* r = Session::get().current;
  if (r && !r->verdict_given) {
    r->verdict_given = true;
    r->status = Status::Fail;
    r->detail = detail;
    r->expected = expected;
    r->seen = seen;
  }
  FAIL_CHECK(detail);
}

void skip(const std::string& reason, const std::string& why_not_graded) {
  test_fault_point();
  Row* r = Session::get().current;
  if (!r || r->verdict_given) return;
  r->verdict_given = true;
  r->status = Status::Skip;
  r->detail = reason;
  r->not_graded = why_not_graded.empty() ? reason : why_not_graded;
}

void skip_without_toolkit(Session& s) {
  if (s.toolkit_available()) return;
  for (auto& c : s.exercise.checks) {
    if (!c.toolkit) continue;
    Row r;
    r.id = c.id;
    r.title = c.title;
    r.hint = c.hint;
    r.max_points = c.points;
    r.verdict_given = true;
    r.not_graded = kNeedsToolkit;
    if (s.cfg.require_cuda) {  // an instructor's complete grade: a row it could not run counts as failed
      r.status = Status::Fail;
      r.detail =
          "not graded: this row needs the CUDA toolkit, the course here has none (COURSE_CUDA=off), and the "
          "grade was run with --require-cuda";
      r.expected = "the CUDA toolkit (--require-cuda)";
      r.seen = "no nvcc in toolchain.json";
    } else {
      r.status = Status::Skip;
      r.detail =
          "no CUDA toolkit: install it for the CUDA rows (the course is set up with COURSE_CUDA=off): not run, "
          "not passed";
    }
    s.rows.push_back(r);
  }
}

bool skip_without_cuda() {
  auto& s = Session::get();
  if (s.cuda_available()) return false;
  if (s.cfg.require_cuda) {
    fail(
        "not graded: this row needs a CUDA device, none is visible to torch here, and the grade was run with "
        "--require-cuda (grade it on a machine with a GPU)",
        "a CUDA device (--require-cuda)", "none visible (CUDA_VISIBLE_DEVICES or no GPU)");
    if (Row* r = s.current) r->not_graded = kNeedsCuda;
    return true;
  }
  skip("no CUDA device visible to torch here (CUDA_VISIBLE_DEVICES or no GPU): not run, not passed", kNeedsCuda);
  return true;
}

}  // namespace judge
