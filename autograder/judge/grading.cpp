#include "grading.hpp"

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

#include "diagnostics.hpp"
#include "machine_faults.hpp"
#include "sandbox.hpp"
#include "sha256.hpp"
#include "submission_files.hpp"

namespace judge {

namespace {

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

// Deep enough to overflow any stack; the volatile condition keeps the compiler from proving it infinite.
volatile bool keep_recursing = true;
int recurse(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  return keep_recursing ? recurse(depth + 1) + frame[0] : 0;
}

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
  struct rlimit no_core {0, 0};
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

}  // namespace

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
    std::string code = kind == "real" ? "sm_" + arch : kind == "virtual" ? "compute_" + arch
                                                                         : "[sm_" + arch + ",compute_" + arch + "]";
    flags.push_back("-gencode=arch=compute_" + arch + ",code=" + code);
  }
  return flags;
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
    s.cuda = c.contains("cuda") && c["cuda"] == true;
    s.toolkit = s.cuda || (c.contains("toolkit") && c["toolkit"] == true);
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

FileLock::FileLock(const std::string& path, mode_t mode)
    : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode)) {
  if (fd_ >= 0)
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {}
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
  exercise = Exercise::load(cfg.course_root / "exercises" / cfg.exercise_id / "exercise.json", catalog_path(cfg.course_root));
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
}

const BuildResult& Session::build(const std::string& variant) {
  test_fault_point();
  auto found = builds_.find(variant);
  if (found != builds_.end()) return found->second;
  BuildResult& b = builds_[variant];
  auto t0 = std::chrono::steady_clock::now();
  fs::path dir = cfg.work_dir / ("build-" + variant);
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  b.dir = dir;
  if (variant == "default") {  // both overlap the compile: a core is free while the compiler runs
    start_server(dir);
    if (std::any_of(exercise.checks.begin(), exercise.checks.end(), [](const CheckSpec& c) { return c.cuda; }))
      start_cuda_probe();
  }

  // Only the files the exercise names (and headers beside them) are taken from the submission: regular files,
  // read without following links (submission_files.hpp). A refusal is the build's failure.
  auto is_header = [](const std::string& name) {
    auto ext = fs::path(name).extension().string();
    return ext == ".h" || ext == ".hpp" || ext == ".cuh";
  };
  SubmissionRead read = read_submission(cfg.submission, exercise.sources, is_header);
  if (!read.ok) {
    b.failure = read.failure;
    b.refused = true;
    return b;
  }
  for (auto& f : read.files) {
    std::ofstream out(dir / "src" / f.name, std::ios::binary);
    out.write(f.content.data(), static_cast<std::streamsize>(f.content.size()));
    if (!out) {
      b.failure = "the judge could not write its copy of " + f.name + " into " + (dir / "src").string();
      return b;
    }
  }

  const json& tc = toolchain;
  // The compiler's settings on top of the sandbox's allowlisted environment (Sandbox::run): nothing else of the
  // grading host's environment reaches the compiler (no NVCC_APPEND_FLAGS, CCACHE_PREFIX or CPATH of the host's).
  std::map<std::string, std::string> env;
  // The compiler's messages in the C locale: plain ASCII quotes ('k', not the UTF-8 ones), the same on every
  // machine, as diagnostics.cpp reads them. (Sources stay UTF-8: g++ and nvcc read them so in any locale.)
  env["LC_ALL"] = "C";
  // What a failed compile or link is read with: the student's files (as copied), where they were compiled.
  DiagnosticsContext diag;
  for (auto& f : read.files) diag.student_files[f.name] = f.content;
  diag.build_dir = dir;
  diag.include_dirs = strings(tc, "include_dirs");
  auto read_errors = [&](const std::string& output) {
    CompilerErrors e = read_compiler_errors(output, diag);
    if (!e.found) return;
    b.first_error = e.first;
    b.more_errors = e.more;
    b.errors = e.text;
  };
  std::string ccache = tc.value("ccache", "");
  // Each submission folder gets a compiler cache of its own: a regrade recompiles only the sources that changed,
  // and no submission can plant objects in another's cache.
  fs::path own_cache;
  if (!ccache.empty()) {
    std::string base = tc.value("ccache_dir", "");
    if (base.empty() && getenv("CCACHE_DIR")) base = getenv("CCACHE_DIR");
    if (base.empty()) base = (fs::path(getenv("HOME") ? getenv("HOME") : "/tmp") / ".cache" / "ccache").string();
    char key[32];
    std::snprintf(key, sizeof key, "%016zx", std::hash<std::string>{}(fs::weakly_canonical(cfg.submission).string()));
    own_cache = fs::path(base) / "submissions" / key;
    std::error_code mk;
    fs::create_directories(own_cache, mk);
    if (mk) own_cache.clear();
    else env["CCACHE_DIR"] = own_cache.string();
  }
  // Two judges grading the same folder at once (a class batch and a student's watch, or the test suite) would hand
  // the cache to two sandbox uids in turn, and one compiler would find its folders owned by the other: builds of one
  // submission take turns. The lock file sits beside the cache, outside what the sandbox mounts.
  std::optional<FileLock> cache_lock;
  if (!own_cache.empty()) {
    cache_lock.emplace(own_cache.string() + ".lock", 0600);
    if (!cache_lock->held()) {
      own_cache.clear();  // no lock, no shared cache: this build compiles without ccache
      env.erase("CCACHE_DIR");
    }
  }
  // Every grade builds in a new folder: compile with paths relative to it (and tell ccache to rewrite any absolute
  // path under it), so an unchanged source hits the cache whichever folder it is graded in.
  if (!ccache.empty()) {
    env["CCACHE_BASEDIR"] = dir.string();
    env["CCACHE_NOHASHDIR"] = "1";
    env["CCACHE_SLOPPINESS"] = "pch_defines,time_macros,include_file_mtime,include_file_ctime";
  }
  // The torch headers precompiled by CMake with these very flags (toolchain.json "pch_include"), if built.
  std::string pch = tc.value("pch_include", "");
  if (!pch.empty() && !fs::is_regular_file(pch + ".gch")) pch.clear();
  if (const char* p = getenv("COURSE_PCH"); p && std::string(p) == "off") pch.clear();
  std::vector<std::string> common;
  for (auto& d : strings(tc, "definitions")) common.push_back("-D" + d);
  for (auto& i : strings(tc, "include_dirs")) { common.push_back("-isystem"); common.push_back(i); }
  std::string arch = variant == "ptx" ? "75-virtual" : tc.value("cuda_architectures", "75;90-real");

  std::vector<std::string> objects;
  bool has_cuda = false;
  for (auto& src : exercise.sources) {
    fs::path in = dir / "src" / src, obj = dir / (src + ".o");
    if (in.extension() == ".py") continue;  // Python sources are imported by the worker, never compiled
    if (!toolkit_available() &&
        std::find(exercise.cuda_sources.begin(), exercise.cuda_sources.end(), src) != exercise.cuda_sources.end()) {
      b.left_out.push_back(src);  // the library gets its CPU kernels only; the toolkit's rows are SKIPPED
      continue;
    }
    std::vector<std::string> argv;
    if (!ccache.empty()) argv.push_back(ccache);
    if (in.extension() == ".cu") {
      has_cuda = true;
      argv.push_back(tc.at("nvcc").get<std::string>());
      argv.insert(argv.end(), {"-ccbin", tc.at("cxx").get<std::string>()});
      for (auto& f : tc.at("cuda_flags")) argv.push_back(f.get<std::string>());  // CMakeLists.txt's, only there
      for (auto& g : gencode_flags(arch)) argv.push_back(g);
    } else {
      argv.push_back(tc.at("cxx").get<std::string>());
      for (auto& f : tc.at("cxx_flags")) argv.push_back(f.get<std::string>());  // those the PCH was built with
      if (!pch.empty()) argv.insert(argv.end(), {"-include", pch});
    }
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(argv.end(), {"-c", fs::relative(in, dir).string(), "-o", fs::relative(obj, dir).string()});
    ProcessSpec spec{argv, env, dir.string(), cfg.build_timeout_s, 256 * 1024, /*compiler=*/true};
    auto step = std::chrono::steady_clock::now();
    auto r = Sandbox::get().run(spec, dir, {}, own_cache);
    record_time("compile " + src, step, {{"variant", variant}, {"argv", argv}, {"cwd", dir.string()}});
    b.log += r.out + r.err;
    if (!r.exited || r.exit_code != 0) {
      const std::string said = r.out + r.err;
      // what g++, its precompiled header, nvcc's front ends and ccache say when an allocation fails
      bool no_memory = false;
      for (const char* says : {"out of memory allocating", "virtual memory exhausted", "std::bad_alloc",
                               "PCH allocation failure", "Cannot allocate memory", "out of memory"})
        no_memory = no_memory || said.find(says) != std::string::npos;
      b.failure = "compiling " + src + " failed (the compiler " + r.describe() + ")" +
                  (no_memory ? ": it ran out of the memory a compile may use (" +
                                   std::to_string(Sandbox::get().compile_memory_mb()) +
                                   " MiB of address space; an instructor sets COURSE_SANDBOX_COMPILE_MEMORY_MB)"
                             : "");
      diag.compiling = src;
      read_errors(r.out + r.err);
      b.log = tail_lines(b.log, 40);
      return b;
    }
    objects.push_back(obj.string());
  }
  if (objects.empty()) {  // nothing to compile or link: the exercise is Python only
    b.ok = true;
    b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return b;
  }
  b.library = dir / ("lib" + exercise.library + ".so");
  std::vector<std::string> link{tc.at("cxx").get<std::string>(), "-shared", "-o", b.library.string()};
  link.insert(link.end(), objects.begin(), objects.end());
  for (auto& d : strings(tc, "link_dirs")) {
    link.push_back("-L" + d);
    link.push_back("-Wl,-rpath," + d);
  }
  for (auto& l : strings(tc, "libs")) link.push_back(l);
  if (has_cuda)
    for (auto& l : strings(tc, "cuda_libs")) link.push_back(l);
  // Symbols used and defined in none of these libraries are listed (as warnings: the link goes on as before). A C++
  // one (a launcher declared with one signature and defined with another) fails the build here, naming the
  // function that uses it, rather than as a mangled "undefined symbol" when the worker loads the library; a C one
  // is left to the loader (diagnostics.hpp, undefined_cxx_references).
  link.insert(link.end(), {"-Wl,-z,defs", "-Wl,--warn-unresolved-symbols"});
  auto step = std::chrono::steady_clock::now();
  auto r = Sandbox::get().run(ProcessSpec{link, env, dir.string(), cfg.build_timeout_s, 256 * 1024, true}, dir);
  record_time("link lib" + exercise.library + ".so", step, {{"variant", variant}});
  b.log += r.out + r.err;
  diag.compiling.clear();
  if (!r.exited || r.exit_code != 0) {
    b.failure = "linking lib" + exercise.library + ".so failed (the linker " + r.describe() + ")";
    read_errors(r.out + r.err);
    b.log = tail_lines(b.log, 40);
    return b;
  }
  if (std::string undefined = undefined_cxx_references(r.out + r.err); !undefined.empty()) {
    b.failure = "linking lib" + exercise.library +
                ".so failed (a C++ function or object it uses is defined in no library)";
    read_errors(undefined);
    b.log = tail_lines(b.log, 40);
    return b;
  }
  b.ok = true;
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

void Session::start_server(const fs::path& build_dir) {
  if (server_off_ || server_) return;
  if (const char* v = getenv("COURSE_WORKER_SERVER"); v && std::string(v) == "off") server_off_ = true;
  if (++server_starts_ > 3) server_off_ = true;  // one that keeps dying (or timing out) is not worth restarting
  if (server_off_) return;
  server_mounts_ = {build_dir};
  for (auto& p : strings(toolchain, "worker_read_only"))
    if (fs::is_directory(p)) server_mounts_.push_back(p);
  fs::path script = fs::path(toolchain.at("worker").get<std::string>()).parent_path() / "worker_server.py";
  // it serves no GPU group: neither it nor a request it forks sees the GPU
  std::map<std::string, std::string> env{{"PYTHONDONTWRITEBYTECODE", "1"}, {"PYTHONUNBUFFERED", "1"},
                                         {"CUDA_VISIBLE_DEVICES", ""}};
  fs::path live = cfg.work_dir / "live";
  ProcessSpec spec{{toolchain.at("python").get<std::string>(), script.string()}, env, live.string(),
                   cfg.worker_timeout_s, 0};
  auto server = std::make_unique<ServerProcess>();
  if (!Sandbox::get().start_server(*server, spec, live, server_mounts_)) {
    server_off_ = true;
    return;
  }
  server_ = std::move(server);
}

namespace {

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
    cleanup_note = "removed " + mib_text(removed_bytes) + " that the worker runs wrote to their folders (what the "
                   "submission wrote there; the reports, the build logs and the workers' answers are kept)";
}

bool Session::run_on_server(GroupResult& g, const fs::path& dir, double timeout_s,
                            const std::map<std::string, std::string>& env) {
  json line = {{"seq", ++server_seq_}, {"request", (dir / "request.json").string()}, {"cwd", dir.string()},
               {"env", Sandbox::get().server_folder(dir, env)}};
  std::string answer;
  const long oom_kills = Sandbox::get().server_oom_kills();
  ProcessResult r = server_->request(line.dump(), timeout_s, 64 * 1024, answer, Sandbox::get().disk_watch(dir));
  r.memory_limit = Sandbox::get().server_oom_kills() > oom_kills;
  Sandbox::get().after_server_request();
  if (r.timed_out || !r.stopped.empty()) {  // as a fresh worker would have been: stopped; the next group gets a new server
    Sandbox::get().stop_server(*server_);
    server_.reset();
    g.process = r;
    return true;
  }
  std::istringstream in(answer);
  std::string done, how;
  long seq = -1;
  int code = -1;
  in >> done >> seq >> how >> code;
  if (done != "done" || seq != server_seq_ || (how != "exit" && how != "signal") || in.fail()) {
    // It ended without answering (or never became ready): this group goes to a fresh sandbox, the next one to a new
    // server (start_server gives up after a few).
    server_note_ = "the worker server did not answer (" + (answer.empty() ? "no answer" : answer.substr(0, 80)) +
                   "): run in a fresh sandbox; its output: " + tail_lines(r.err.empty() ? r.out : r.err, 6);
    Sandbox::get().stop_server(*server_);
    server_.reset();
    return false;
  }
  if (how == "exit") {
    r.exited = true;
    r.exit_code = code;
  } else {
    r.term_signal = code;
  }
  g.process = r;
  if (!server_->running()) server_.reset();  // it answered, then left (something of that child stayed): a new one next
  return true;
}

const GroupResult& Session::group(const std::string& name, const json& args,
                                  const std::map<std::string, Tensor>& inputs, const std::string& variant) {
  const GroupResult& g = run_group(name, args, inputs, variant);
  // every row that reads a run the machine spoiled is not graded (report.cpp), whatever it made of the run
  if (current && current->machine_fault.empty()) current->machine_fault = g.not_graded;
  if (current && !g.retry_note.empty() && current->retry_note.empty()) current->retry_note = "its worker run '" + name + "' " + g.retry_note;
  return g;
}

const GroupResult& Session::run_group(const std::string& name, const json& args,
                                      const std::map<std::string, Tensor>& inputs, const std::string& variant) {
  test_fault_point();
  // Same group with other args (e.g. the contract per device) is another run: a hang on one side costs only its rows.
  // Keys starting with "judge_" are for the judge alone and never shown to the worker: judge_tag tells runs apart
  // (chapter 7's runs differ only in the operator's bytes, which sit at one path for all of them); judge_gpu marks a
  // run that uses the GPU; judge_wrapper is a command the worker runs under (compute-sanitizer); judge_env adds to
  // its environment; judge_timeout_s replaces the worker timeout.
  std::string key = variant + "/" + name + "/" + args.dump();
  json worker_args = json::object();
  for (auto& [k, v] : args.items())
    if (k.rfind("judge_", 0) != 0) worker_args[k] = v;
  auto found = groups_.find(key);
  if (found != groups_.end()) return found->second;
  GroupResult& g = groups_[key];
  const BuildResult& b = build(variant);
  if (!b.ok) {
    g.failure = "not run: the submission did not build (" + b.failure + ")";
    return g;
  }
  const bool gpu = args.value("judge_gpu", false);
  if (gpu && !gpu_stopped_.empty()) {  // a kernel that never ends costs one timeout, not one per GPU row
    g.failure = "not run: " + gpu_stopped_;
    return g;
  }
  // args["library"] names another library to load instead of the submission's (the course's operator, or a planted
  // bug target of chapter 7); "" loads none. The submission's Python sources are importable from sources_dir.
  fs::path library = args.contains("library") ? fs::path(args["library"].get<std::string>()) : b.library;
  // The worker reads the library, and course-built helpers it imports (chapter 1's pybind11 twin).
  std::vector<fs::path> readable{b.dir};
  if (!library.empty()) readable.push_back(library.parent_path());
  for (auto& p : args.value("read_only", json::array())) readable.push_back(p.get<std::string>());
  for (auto& p : strings(toolchain, "worker_read_only"))
    if (fs::is_directory(p)) readable.push_back(p);
  std::map<std::string, std::string> env;  // on top of the sandbox's allowlist (Sandbox::run)
  env["PYTHONDONTWRITEBYTECODE"] = "1";
  env["PYTHONUNBUFFERED"] = "1";
  // Only a GPU group sees the GPU (and it takes the GPU turn): no other run can take a neighbour's GPU memory.
  if (args.value("hide_cuda", false) || !gpu) env["CUDA_VISIBLE_DEVICES"] = "";
  const json extra_env = args.value("judge_env", json::object());  // (a named value: items() of a temporary dangles)
  for (auto& [k, v] : extra_env.items()) {
    if (!host_variable_allowed(k) && !judge_variable_allowed(k))  // it would be dropped, silently: a course bug
      throw std::logic_error("judge_env names " + k + ", which the sandbox's environment allowlist drops");
    env[k] = v.get<std::string>();
  }
  const double timeout_s = args.value("judge_timeout_s", cfg.worker_timeout_s);

  // One run of the group into g. `alone`: the retry after a sign of the machine's fault, in a fresh sandbox (never on
  // the worker server) and holding the GPU turn whatever the group, so no other grade of this machine is on the GPU.
  MachineFault sign = MachineFault::None;
  GpuMemory before_retry;
  auto attempt = [&](bool alone) {
    g = GroupResult{};
    // Neither the folder nor the nonce says how many runs came before: code under test must not learn which run
    // (and so which planted operator, in doctest's fixed order) it is in.
    const fs::path dir = cfg.work_dir / ("run-" + random_token(8) + "-" + name);
    const std::string nonce = random_token(16);
    g.nonce = nonce;
    auto prepare = [&](const fs::path& at) {  // the run's folder, its request and its inputs
      fs::remove_all(at);
      fs::create_directories(at);
      json request = {{"nonce", nonce}, {"group", name}, {"library", library.string()},
                      {"sources_dir", (b.dir / "src").string()}, {"exercise", exercise.id},
                      {"out_dir", at.string()}, {"args", worker_args}};
      if (!inputs.empty()) {
        write_safetensors((at / "inputs.safetensors").string(), inputs);
        request["inputs"] = (at / "inputs.safetensors").string();
      }
      std::ofstream(at / "request.json") << request.dump(2);
    };

    // The worker server serves a group that needs nothing it was not started with: the default build, no wrapper, no
    // extra environment, nothing to read beyond what it mounts, no GPU (fork after torch's import has not been shown
    // on a GPU yet: those groups keep a fresh sandbox each). Anything else, or a server that cannot answer, runs as
    // before: a fresh sandbox per group.
    bool served = false;
    auto step = std::chrono::steady_clock::now();
    auto mounted = [&](const fs::path& p) {
      return std::any_of(server_mounts_.begin(), server_mounts_.end(),
                         [&](const fs::path& m) { return p.lexically_relative(m).string().rfind("..", 0) != 0 &&
                                                         !p.lexically_relative(m).empty(); });
    };
    if (!alone && variant == "default" && !gpu && !args.contains("judge_wrapper") && !args.contains("judge_env") &&
        std::all_of(readable.begin(), readable.end(), mounted)) {
      fs::path live = cfg.work_dir / "live" / dir.filename();
      if (!server_off_ && (server_ || (start_server(b.dir), server_ != nullptr))) {
        prepare(live);
        served = run_on_server(g, live, timeout_s, env);
        std::error_code ec;
        if (served) {
          Sandbox::remove_odd_files(live);
          fs::rename(live, dir, ec);
          served = !ec;
        }
        if (!served) fs::remove_all(live, ec);
      }
    }
    // GPU work of every grade on this machine takes turns (a batch's, a watch's, the test suite's): a neighbour that
    // holds all of the GPU's memory, or its compute, for as long as its run lasts cannot make another grade's rows fail.
    // CPU groups run side by side.
    std::optional<GpuTurn> gpu_turn;
    if (!served && (gpu || alone)) {
      auto waited = std::chrono::steady_clock::now();
      gpu_turn.emplace();
      record_time("wait for the GPU (other grades' GPU runs)", waited);
      if (alone && sign != MachineFault::HostMemory) before_retry = gpu_memory();  // no grade of ours on the GPU now
      step = std::chrono::steady_clock::now();
    }
    if (!served) {
      std::vector<std::string> argv;
      for (auto& w : args.value("judge_wrapper", json::array())) argv.push_back(w.get<std::string>());
      argv.insert(argv.end(), {toolchain.at("python").get<std::string>(), toolchain.at("worker").get<std::string>(),
                               (dir / "request.json").string()});
      prepare(dir);
      g.process = Sandbox::get().run(ProcessSpec{argv, env, dir.string(), timeout_s, 64 * 1024}, dir, readable);
    }
    g.dir = dir;
    const auto& p = g.process;
    const fs::path response = dir / "response.json";
    json r;  // the worker's answer, read once (bounded); trusted only after the checks below
    std::string unreadable;
    if (fs::exists(response)) {
      try {
        r = read_json_bounded(response);
      } catch (const std::exception& e) {
        unreadable = std::string(" (") + e.what() + ")";
      }
    }
    {
      // the worker's own account of its phases (import, load, probes): shares a process with the submission, so it
      // is only ever printed by the bench, never read for a verdict
      json phases = json::object();
      if (r.is_object() && r.contains("timing") && r["timing"].is_object())
        for (auto& [k, v] : r["timing"].items())
          if (v.is_number() && phases.size() < 8 && k.size() < 32) phases[k] = v;
      json entry = {{"variant", variant}, {"worker", phases}, {"forked", served}};
      if (!server_note_.empty()) entry["server"] = std::exchange(server_note_, std::string());
      record_time("worker " + name, step, entry);
    }
    auto output_tail = [&] {
      std::string t = tail_lines(p.err.empty() ? p.out : p.err, 8);
      return t.empty() ? std::string() : "\nlast output:\n" + t;
    };
    if (p.timed_out) {
      g.failure = "the worker running your operator was stopped after " + std::to_string(int(timeout_s)) +
                  " s: it did not finish (an infinite loop, or a kernel that never ends?)";
      if (gpu)
        gpu_stopped_ = "an earlier run on the GPU was stopped after " + std::to_string(int(timeout_s)) +
                       " s (an infinite loop, or a kernel that never ends?): the GPU rows after it are not run";
      return;
    }
    if (!p.stopped.empty()) {  // a bound of the sandbox, watched while it ran
      g.failure = "the process that loaded your library was stopped: " + p.stopped + output_tail();
      return;
    }
    if (p.memory_limit) {  // its own cgroup's OOM kill: nothing of a neighbour's, and no retry
      g.failure = "the process that loaded your library used more than the " +
                  std::to_string(Sandbox::get().worker_memory_mb()) +
                  " MiB of host memory a worker run may use, and the kernel stopped it (" + p.describe() +
                  "): a leak, or an allocation far larger than the inputs need?" + output_tail();
      return;
    }
    if (!fs::exists(response)) {
      g.failure = "the process that loaded your library " + p.describe() +
                  " before it could answer (a crash, abort(), or exit() inside the operator or its initialisers)" +
                  output_tail();
      return;
    }
    if (!unreadable.empty() || !r.is_object() || !r.contains("nonce") || r["nonce"] != nonce || !r.contains("group") ||
        r["group"] != name) {
      g.failure = "the worker's answer was missing, malformed or not for this request; nothing from it is trusted" +
                  unreadable;
      return;
    }
    if (!p.exited || p.exit_code != 0) {
      g.failure = "the process that loaded your library " + p.describe() + " after answering" + output_tail();
      return;
    }
    if (!r.contains("status") || r["status"] != "ok") {
      std::string error = r.contains("error") && r["error"].is_string() ? r["error"].get<std::string>() : "(no reason given)";
      bool in_submission = r.contains("error_in_submission") && r["error_in_submission"] == true;
      g.failure = in_submission ? error : "the worker could not run the request: " + error;
      return;
    }
    fs::path tensors = dir / "outputs.safetensors";
    if (fs::exists(tensors)) {
      try {
        g.tensors = read_safetensors(tensors.string());
      } catch (const std::exception& e) {
        g.failure = std::string("the worker returned unreadable tensors: ") + e.what();
        return;
      }
    }
    g.report = r;
    g.ok = true;
  };
  auto sign_of = [&](const GroupResult& r, long oom_kills) {
    if (r.process.timed_out) return MachineFault::None;  // a hang costs one timeout (gpu_stopped_), never two
    // the worker's output and answer (bounded reads): text, so only a reason to look again
    std::string text = r.failure + "\n" + r.process.out + "\n" + r.process.err;
    if (r.ok) text += r.report.dump();
    MachineFault f = fault_sign_in(text);
    if (f != MachineFault::None) return f;
    // (an OOM kill in the run's own memory cgroup is the submission's: the limit is its own)
    return host_memory_sign(!r.process.exited && r.process.term_signal == SIGKILL && !r.process.memory_limit,
                            oom_kills, oom_kill_count());
  };
  // What a run's folder holds counts against the grade's disk budget; a run stopped for writing too much is emptied
  // at once (its rows fail: nothing in it is read), so the next run has the disk it needs.
  auto account = [&] {
    Sandbox::get().count_run_bytes(g.dir);
    if (!g.process.stopped.empty()) removed_bytes += prune_run_folder(g.dir);
  };
  long oom_kills = oom_kill_count();
  attempt(false);
  account();
  sign = sign_of(g, oom_kills);
  if (sign == MachineFault::None) return g;
  // A sign of the machine's fault: once more, alone. The same sign again is the machine's fault only on evidence the
  // submission cannot make up (machine_fault_reason); otherwise the second run's verdicts stand as the submission's.
  const std::string first = describe(sign);
  record_time("sign of the machine's fault (" + first + "): retried alone", std::chrono::steady_clock::now());
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a neighbour's spike may pass
  oom_kills = oom_kill_count();
  attempt(true);
  account();
  const MachineFault again = sign_of(g, oom_kills);
  if (again == MachineFault::None) {
    g.retry_note = "was retried alone after " + first + ": these verdicts are the retry's";
  } else if (std::string why = machine_fault_reason(again, before_retry); !why.empty()) {
    g.not_graded = why;
  } else {
    g.retry_note = "failed with " + describe(again) + " again when retried alone, with " +
                   (before_retry.seen ? std::to_string(long(before_retry.total_mib - before_retry.used_mib)) + " of " +
                                            std::to_string(long(before_retry.total_mib)) + " MiB of GPU memory free"
                                      : "no GPU to be seen (" + before_retry.error + ")") +
                   ": the operator's own doing, graded as such";
  }
  return g;
}

const GroupResult& Session::require(const std::string& name, const json& args,
                                    const std::map<std::string, Tensor>& inputs, const std::string& variant) {
  const GroupResult& g = group(name, args, inputs, variant);
  if (!g.ok) throw NotRun(g.failure);
  return g;
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
                   env, cfg.work_dir.string(), 120, 16 * 1024};
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
    bool valid = r.exited && r.exit_code == 0 && j.is_object() && j.contains("count") && j["count"].is_number_integer() &&
                 j.contains("name") && j["name"].is_string();
    cuda_probe_ = valid ? j : json{{"count", 0}, {"name", ""}};
  }
  return (*cuda_probe_)["count"].get<int>() > 0;
}

int Session::cuda_device_count() { return cuda_available() ? (*cuda_probe_)["count"].get<int>() : 0; }

std::string Session::cuda_device_name() {
  return cuda_available() ? (*cuda_probe_)["name"].get<std::string>() : "";
}

fs::path trusted_evidence(const GroupResult& g, const std::string& name) {
  const std::string marker = "course-evidence " + g.nonce + " " + name + " ";
  std::size_t at = g.process.out.find(marker);
  if (g.nonce.empty() || at == std::string::npos || (at > 0 && g.process.out[at - 1] != '\n'))
    throw std::runtime_error("the worker did not announce " + name + " before running your code: it is not trusted");
  std::size_t end = g.process.out.find('\n', at);
  std::string announced = g.process.out.substr(at + marker.size(), end == std::string::npos ? end : end - at - marker.size());
  fs::path file = g.dir / name;
  if (sha256_file(file) != announced)
    throw std::runtime_error(name + " was changed after the worker announced it (before your code ran): not trusted");
  return file;
}

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
      r.detail = "not graded: this row needs the CUDA toolkit, the course here has none (COURSE_CUDA=off), and the "
                 "grade was run with --require-cuda";
      r.expected = "the CUDA toolkit (--require-cuda)";
      r.seen = "no nvcc in toolchain.json";
    } else {
      r.status = Status::Skip;
      r.detail = "no CUDA toolkit: install it for the CUDA rows (the course is set up with COURSE_CUDA=off): not run, "
                 "not passed";
    }
    s.rows.push_back(r);
  }
}

bool skip_without_cuda() {
  auto& s = Session::get();
  if (s.cuda_available()) return false;
  if (s.cfg.require_cuda) {
    fail("not graded: this row needs a CUDA device, none is visible to torch here, and the grade was run with "
         "--require-cuda (grade it on a machine with a GPU)",
         "a CUDA device (--require-cuda)", "none visible (CUDA_VISIBLE_DEVICES or no GPU)");
    if (Row* r = s.current) r->not_graded = kNeedsCuda;
    return true;
  }
  skip("no CUDA device visible to torch here (CUDA_VISIBLE_DEVICES or no GPU): not run, not passed", kNeedsCuda);
  return true;
}

}  // namespace judge
