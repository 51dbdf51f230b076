// The build of a submission (Session::build): its files copied from the submission folder, each source compiled in
// the sandbox (with the submission's own compiler cache and the precompiled torch headers), and the objects linked
// into the library the workers load. A failed step is read for its first error (diagnostics.hpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "diagnostics.hpp"
#include "phase.hpp"
#include "sandbox.hpp"
#include "session_internal.hpp"
#include "submission_files.hpp"

namespace judge {

namespace {

// What every compile and the link of one build share: the toolchain, the folder, the environment, the cache.
struct BuildSteps {
  const json& tc;
  fs::path dir;
  // The compiler's settings on top of the sandbox's allowlisted environment (Sandbox::run): nothing else of the
  // grading host's environment reaches the compiler (no NVCC_APPEND_FLAGS, CCACHE_PREFIX or CPATH of the host's).
  std::map<std::string, std::string> env;
  std::string ccache, pch;
  fs::path own_cache;
  std::optional<FileLock> cache_lock;
  std::vector<std::string> common;  // the definitions and include folders of every compile
  // What a failed compile or link is read with: the student's files (as copied), where they were compiled.
  DiagnosticsContext diag;
};

// Only the files the exercise names (and headers beside them) are taken from the submission: regular files, read
// without following links (submission_files.hpp). A refusal is the build's failure. False: the build failed.
bool copy_submission(const Session& s, BuildResult& b, BuildSteps& steps) {
  auto is_header = [](const std::string& name) {
    auto ext = fs::path(name).extension().string();
    return ext == ".h" || ext == ".hpp" || ext == ".cuh";
  };
  SubmissionRead read = read_submission(s.cfg.submission, s.exercise.sources, is_header);
  if (!read.ok) {
    b.failure = read.failure;
    b.refused = true;
    return false;
  }
  for (auto& f : read.files) {
    fs::create_directories((b.dir / "src" / f.name).parent_path());  // a package's PACKAGE/NAME.py
    std::ofstream out(b.dir / "src" / f.name, std::ios::binary);
    out.write(f.content.data(), static_cast<std::streamsize>(f.content.size()));
    if (!out) {
      b.failure = "the judge could not write its copy of " + f.name + " into " + (b.dir / "src").string();
      return false;
    }
  }
  for (auto& f : read.files) steps.diag.student_files[f.name] = f.content;
  return true;
}

// Each submission folder gets a compiler cache of its own: a regrade recompiles only the sources that changed, and
// no submission can plant objects in another's cache.
void use_own_cache(BuildSteps& steps, const fs::path& submission) {
  if (steps.ccache.empty()) return;
  std::string base = steps.tc.value("ccache_dir", "");
  if (base.empty() && getenv("CCACHE_DIR")) base = getenv("CCACHE_DIR");
  if (base.empty()) base = (fs::path(getenv("HOME") ? getenv("HOME") : "/tmp") / ".cache" / "ccache").string();
  char key[32];
  std::snprintf(key, sizeof key, "%016zx", std::hash<std::string>{}(fs::weakly_canonical(submission).string()));
  steps.own_cache = fs::path(base) / "submissions" / key;
  std::error_code mk;
  fs::create_directories(steps.own_cache, mk);
  if (mk)
    steps.own_cache.clear();
  else
    steps.env["CCACHE_DIR"] = steps.own_cache.string();
  // Two judges grading the same folder at once (a class batch and a student's watch, or the test suite) would hand
  // the cache to two sandbox uids in turn, and one compiler would find its folders owned by the other: builds of one
  // submission take turns. The lock file sits beside the cache, outside what the sandbox mounts.
  if (!steps.own_cache.empty()) {
    steps.cache_lock.emplace(steps.own_cache.string() + ".lock", 0600);
    if (!steps.cache_lock->held()) {
      steps.own_cache.clear();  // no lock, no shared cache: this build compiles without ccache
      steps.env.erase("CCACHE_DIR");
    }
  }
  // Every grade builds in a new folder: compile with paths relative to it (and tell ccache to rewrite any absolute
  // path under it), so an unchanged source hits the cache whichever folder it is graded in.
  steps.env["CCACHE_BASEDIR"] = steps.dir.string();
  steps.env["CCACHE_NOHASHDIR"] = "1";
  steps.env["CCACHE_SLOPPINESS"] = "pch_defines,time_macros,include_file_mtime,include_file_ctime";
}

// TORCH_TARGET_VERSION for "2.10": major in bits 56-63, minor in 48-55 (torch/csrc/stable/version.h's encoding).
std::string torch_target_definition(const std::string& target) {
  const std::size_t dot = target.find('.');
  char hex[19];
  std::snprintf(hex, sizeof hex, "0x%02X%02X000000000000", std::stoi(target.substr(0, dot)),
                std::stoi(target.substr(dot + 1)));
  return std::string("-DTORCH_TARGET_VERSION=") + hex;
}

// A stable-ABI exercise: no precompiled header (it would put ATen into every translation unit and its symbols into
// the library), the target version, and what toolchain.json's "stable" adds (CPython's headers for the limited-API
// module, USE_CUDA for the shim's CUDA entry points).
void set_up_stable(BuildSteps& steps, const Exercise& ex) {
  steps.pch.clear();
  steps.common.push_back(torch_target_definition(ex.torch_target));
  const json stable = steps.tc.value("stable", json::object());
  for (auto& d : strings(stable, "definitions")) steps.common.push_back("-D" + d);
  // first, before torch's own: a stable build may name the headers of another torch (the GPU machine's run of
  // exercise 10 compiles against the course's torch's stable headers and loads in the machine's older torch)
  std::vector<std::string> first;
  for (auto& i : strings(stable, "include_dirs")) first.insert(first.end(), {"-isystem", i});
  steps.common.insert(steps.common.begin(), first.begin(), first.end());
}

void set_up_steps(BuildSteps& steps, const fs::path& submission) {
  const json& tc = steps.tc;
  // The compiler's messages in the C locale: plain ASCII quotes ('k', not the UTF-8 ones), the same on every
  // machine, as diagnostics.cpp reads them. (Sources stay UTF-8: g++ and nvcc read them so in any locale.)
  steps.env["LC_ALL"] = "C";
  steps.diag.build_dir = steps.dir;
  steps.diag.include_dirs = strings(tc, "include_dirs");
  steps.ccache = tc.value("ccache", "");
  use_own_cache(steps, submission);
  // The torch headers precompiled by CMake with these very flags (toolchain.json "pch_include"), if built.
  steps.pch = tc.value("pch_include", "");
  if (!steps.pch.empty() && !fs::is_regular_file(steps.pch + ".gch")) steps.pch.clear();
  if (const char* p = getenv("COURSE_PCH"); p && std::string(p) == "off") steps.pch.clear();
  for (auto& d : strings(tc, "definitions")) steps.common.push_back("-D" + d);
  for (auto& i : strings(tc, "include_dirs")) {
    steps.common.push_back("-isystem");
    steps.common.push_back(i);
  }
}

// The first error of a failed step, placed in the student's files where it can be (none found: the raw log stands).
void read_errors(BuildResult& b, const std::string& output, const DiagnosticsContext& diag) {
  CompilerErrors e = read_compiler_errors(output, diag);
  if (!e.found) return;
  b.first_error = e.first;
  b.more_errors = e.more;
  b.errors = e.text;
}

std::vector<std::string> compile_argv(const BuildSteps& steps, const fs::path& in, const fs::path& obj,
                                      const std::string& arch) {
  const json& tc = steps.tc;
  std::vector<std::string> argv;
  if (!steps.ccache.empty()) argv.push_back(steps.ccache);
  if (in.extension() == ".cu") {
    argv.push_back(tc.at("nvcc").get<std::string>());
    argv.insert(argv.end(), {"-ccbin", tc.at("cxx").get<std::string>()});
    for (auto& f : tc.at("cuda_flags")) argv.push_back(f.get<std::string>());  // CMakeLists.txt's, only there
    for (auto& g : gencode_flags(arch)) argv.push_back(g);
  } else {
    argv.push_back(tc.at("cxx").get<std::string>());
    for (auto& f : tc.at("cxx_flags")) argv.push_back(f.get<std::string>());  // those the PCH was built with
    if (!steps.pch.empty()) argv.insert(argv.end(), {"-include", steps.pch});
  }
  argv.insert(argv.end(), steps.common.begin(), steps.common.end());
  argv.insert(argv.end(), {"-c", fs::relative(in, steps.dir).string(), "-o", fs::relative(obj, steps.dir).string()});
  return argv;
}

// "compiling SRC failed (...)", with the compile's memory bound when the compiler said it ran out of memory.
std::string compile_failure(const std::string& src, const ProcessResult& r) {
  const std::string said = r.out + r.err;
  // what g++, its precompiled header, nvcc's front ends and ccache say when an allocation fails
  bool no_memory = false;
  for (const char* says : {"out of memory allocating", "virtual memory exhausted", "std::bad_alloc",
                           "PCH allocation failure", "Cannot allocate memory", "out of memory"})
    no_memory = no_memory || said.find(says) != std::string::npos;
  return "compiling " + src + " failed (the compiler " + r.describe() + ")" +
         (no_memory
              ? ": it ran out of the memory a compile may use (" + std::to_string(Sandbox::get().compile_memory_mb()) +
                    " MiB of address space; an instructor sets COURSE_SANDBOX_COMPILE_MEMORY_MB)"
              : "");
}

// Compiles every source the build takes into objects; false when one failed (b says why). has_cuda: one was a .cu.
bool compile_sources(Session& s, BuildResult& b, BuildSteps& steps, const std::string& variant,
                     std::vector<std::string>& objects, bool& has_cuda) {
  const Exercise& ex = s.exercise;
  std::string arch = variant == "ptx" ? "75-virtual" : steps.tc.value("cuda_architectures", "75;90-real");
  for (std::size_t i = 0; i < ex.sources.size(); ++i) {
    const std::string& src = ex.sources[i];
    fs::path in = steps.dir / "src" / src, obj = steps.dir / (src + ".o");
    if (in.extension() == ".py") continue;  // Python sources are imported by the worker, never compiled
    if (!s.toolkit_available() &&
        std::find(ex.cuda_sources.begin(), ex.cuda_sources.end(), src) != ex.cuda_sources.end()) {
      b.left_out.push_back(src);  // the library gets its CPU kernels only; the toolkit's rows are SKIPPED
      continue;
    }
    has_cuda = has_cuda || in.extension() == ".cu";
    if (variant == "default")
      write_phase(s.cfg.out_dir, "compiling",
                  "compiling " + src + " (" + std::to_string(i + 1) + "/" + std::to_string(ex.sources.size()) + ")");
    std::vector<std::string> argv = compile_argv(steps, in, obj, arch);
    ProcessSpec spec{argv, steps.env, steps.dir.string(), s.cfg.build_timeout_s, 256 * 1024, /*compiler=*/true};
    auto step = std::chrono::steady_clock::now();
    auto r = Sandbox::get().run(spec, steps.dir, {}, steps.own_cache);
    s.record_time("compile " + src, step, {{"variant", variant}, {"argv", argv}, {"cwd", steps.dir.string()}});
    b.log += r.out + r.err;
    if (!r.exited || r.exit_code != 0) {
      b.failure = compile_failure(src, r);
      steps.diag.compiling = src;
      read_errors(b, r.out + r.err, steps.diag);
      b.log = tail_lines(b.log, 40);
      return false;
    }
    objects.push_back(obj.string());
  }
  return true;
}

// Links the objects into b.library; false when the link failed (b says why).
bool link_library(Session& s, BuildResult& b, BuildSteps& steps, const std::string& variant,
                  const std::vector<std::string>& objects, bool has_cuda) {
  const json& tc = steps.tc;
  // A stable-ABI library is a Python package's extension module, as its wheel holds it: LIBRARY/_C.abi3.so beside the
  // package's .py files (package_python), imported by the worker (`import LIBRARY`).
  const bool package = s.exercise.stable_abi();
  const std::string lib = package ? s.exercise.library + "/_C.abi3.so" : "lib" + s.exercise.library + ".so";
  b.library = steps.dir / (package ? "pkg" : "") / lib;
  fs::create_directories(b.library.parent_path());
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
  if (variant == "default") write_phase(s.cfg.out_dir, "linking", "linking " + lib);
  auto step = std::chrono::steady_clock::now();
  auto r = Sandbox::get().run(ProcessSpec{link, steps.env, steps.dir.string(), s.cfg.build_timeout_s, 256 * 1024, true},
                              steps.dir);
  s.record_time("link " + lib, step, {{"variant", variant}});
  b.log += r.out + r.err;
  steps.diag.compiling.clear();
  if (!r.exited || r.exit_code != 0) {
    b.failure = "linking " + lib + " failed (the linker " + r.describe() + ")";
    read_errors(b, r.out + r.err, steps.diag);
    b.log = tail_lines(b.log, 40);
    return false;
  }
  if (std::string undefined = undefined_cxx_references(r.out + r.err); !undefined.empty()) {
    b.failure = "linking " + lib + " failed (a C++ function or object it uses is defined in no library)";
    read_errors(b, undefined, steps.diag);
    b.log = tail_lines(b.log, 40);
    return false;
  }
  if (variant == "default") write_phase(s.cfg.out_dir, "checks", "linked; starting the checks");
  return true;
}

// The package's Python files (LIBRARY/NAME.py of the sources) beside its extension module, as the wheel lays them out.
bool package_python(Session& s, BuildResult& b, const BuildSteps& steps) {
  for (const std::string& src : s.exercise.sources) {
    if (src.find('/') == std::string::npos) continue;
    std::error_code ec;
    fs::copy_file(steps.dir / "src" / src, b.library.parent_path() / fs::path(src).filename(),
                  fs::copy_options::overwrite_existing, ec);
    if (ec) {
      b.failure = "the judge could not copy " + src + " into its package folder: " + ec.message();
      return false;
    }
  }
  return true;
}

}  // namespace

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
  BuildSteps steps{toolchain, dir, {}, {}, {}, {}, {}, {}, {}};
  if (!copy_submission(*this, b, steps)) return b;
  set_up_steps(steps, cfg.submission);
  if (exercise.stable_abi()) set_up_stable(steps, exercise);
  std::vector<std::string> objects;
  bool has_cuda = false;
  if (!compile_sources(*this, b, steps, variant, objects, has_cuda)) return b;
  // nothing to link when nothing was compiled: the exercise is Python only
  if (!objects.empty() && !link_library(*this, b, steps, variant, objects, has_cuda)) return b;
  if (exercise.stable_abi() && !package_python(*this, b, steps)) return b;
  if (exercise.python_abi()) b.library = dir / "src" / (exercise.library + ".py");  // what the worker imports
  b.ok = true;
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

}  // namespace judge
