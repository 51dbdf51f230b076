// Chapter 9: the student's inspect_targets.py reads cuobjdump listings (embedded_targets) and turns CMake's
// CUDA_ARCHITECTURES syntax into nvcc flags (gencode_flags). The judge runs cuobjdump itself on libraries CMake built
// for known target sets (cmake/OperatorsUnderTest.cmake), so it knows every answer; it then builds a probe kernel
// with the student's flags for "75-virtual" (PTX only) and, on a GPU, runs it: the driver must JIT that PTX.
#include <algorithm>
#include <doctest/doctest.h>

#include <regex>
#include <sstream>
#include <set>

#include "../judge/grading.hpp"
#include "../judge/sandbox.hpp"
#include "cuobjdump.hpp"

using namespace judge;

namespace {

const char* kVariants[] = {"cubin_and_ptx", "cubin_only", "ptx_only", "newer_ptx", "no_device"};
const std::vector<std::string> kArchLists = {"75", "75;90-real", "75-virtual", "80-real;90", "75-real;86-real"};
constexpr const char* kDrawn = "drawn";  // the listing the judge writes per grade (not a built library)

// The lists gencode_flags is asked about: the five above, and two the seed draws (two and three architectures, each
// plain, -real or -virtual), so a function that knows the fixed five by heart is still wrong.
const std::vector<std::string>& arch_lists() {
  static const std::vector<std::string> lists = [] {
    std::vector<std::string> out = kArchLists;
    auto rng = rng_for("gencode arch lists");
    const char* kinds[] = {"", "-real", "-virtual"};
    for (std::size_t n : {2u, 3u}) {
      std::vector<int> archs{70, 72, 75, 80, 86, 87, 89, 90, 100, 120};
      std::shuffle(archs.begin(), archs.end(), rng);
      std::string list;
      for (std::size_t i = 0; i < n; ++i) list += (i ? ";" : "") + std::to_string(archs[i]) + kinds[rng() % 3];
      out.push_back(list);
    }
    return out;
  }();
  return lists;
}

struct Targets {
  std::set<int> cubin, ptx;
};

std::string cuobjdump_listing(const fs::path& lib) {
  auto c = run_cuobjdump(lib, {"--list-elf", "--list-ptx"}, 1 << 20);
  if (!c.ran) throw NotRun(c.why);
  return c.text;  // a library with no device code: a message and status 255, which is an answer too
}

// "PTX file    1: libprobe.1.sm_75.ptx" / "ELF file    2: libprobe.2.sm_90.cubin"
Targets parse_listing(const std::string& text) {
  static const std::regex line(R"((PTX|ELF) file\s+\d+:\s+\S*\.sm_(\d+)[a-z]?\.(ptx|cubin))");
  Targets t;
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it)
    ((*it)[1] == "PTX" ? t.ptx : t.cubin).insert(std::stoi((*it)[2]));
  return t;
}

std::string show(const std::set<int>& s) {
  std::string out = "[";
  for (int x : s) out += (out.size() > 1 ? ", " : "") + std::to_string(x);
  return out + "]";
}

struct TargetsRun {
  const GroupResult* group = nullptr;
  std::string not_run;  // why there is no run to judge (every row that needs it fails with this)
  std::map<std::string, std::string> listings;
  std::map<std::string, Targets> truth;
};

void read_targets_run(TargetsRun& run);

// The student's functions asked about every listing and arch list, once.
const TargetsRun& targets_run() {
  static TargetsRun run;
  static bool done = false;
  if (!done) {
    done = true;
    try {
      read_targets_run(run);
    } catch (const std::exception& e) {  // remembered: the next row fails the same way
      run.not_run = e.what();
    }
  }
  if (!run.not_run.empty()) throw NotRun(run.not_run);
  return run;
}

void read_targets_run(TargetsRun& run) {
  auto& s = Session::get();
  std::string dir = s.toolchain.value("portability_dir", "");
  if (dir.empty()) throw NotRun("this grader was built without CUDA: chapter 9's libraries do not exist");
  json listings = json::object();
  for (const char* v : kVariants) {
    run.listings[v] = cuobjdump_listing(fs::path(dir) / v / "libprobe.so");
    run.truth[v] = parse_listing(run.listings[v]);
    listings[v] = run.listings[v];
  }
  // One listing more, written by the judge in cuobjdump's format from numbers the seed draws: a three-digit SM as
  // machine code and PTX, sm_90a machine code (a feature suffix), and two two-digit SMs of either kind, in a drawn
  // order. embedded_targets must read the lines, not recognise the course's five libraries or assume two digits.
  auto rng = rng_for("cuobjdump listing");
  const int three[] = {100, 101, 103, 120};
  std::vector<int> two{50, 52, 60, 61, 70, 72, 75, 80, 86, 87, 89};
  std::shuffle(two.begin(), two.end(), rng);
  const int big = three[rng() % 4];
  std::vector<std::pair<bool, std::string>> images{
      {false, std::to_string(big)}, {true, std::to_string(big)}, {false, "90a"}};
  for (int k = 0; k < 2; ++k) images.push_back({rng() % 2 == 0, std::to_string(two[k])});
  std::shuffle(images.begin(), images.end(), rng);
  std::string drawn;
  int elf = 0, ptx = 0;
  for (auto& [is_ptx, sm] : images) {
    const std::string n = std::to_string(is_ptx ? ++ptx : ++elf);
    drawn += std::string(is_ptx ? "PTX" : "ELF") + " file    " + n + ": libdrawn." + n + ".sm_" + sm +
             (is_ptx ? ".ptx\n" : ".cubin\n");
    (is_ptx ? run.truth[kDrawn].ptx : run.truth[kDrawn].cubin).insert(std::stoi(sm));
  }
  run.listings[kDrawn] = drawn;
  listings[kDrawn] = drawn;
  run.group = &s.require("targets", {{"library", ""}, {"listings", listings}, {"arch_lists", arch_lists()}});
}

void listing_row(const std::vector<std::string>& kinds, const std::vector<std::string>& variants) {
  const TargetsRun& run = targets_run();
  std::string wrong, right;
  for (auto& v : variants) {
    const json& all = run.group->report.value("listings", json::object());
    const json answer = all.is_object() ? all.value(v, json::object()) : json::object();
    if (answer.contains("error")) {
      wrong += "\n  " + v + ": embedded_targets raised " + answer["error"].get<std::string>();
      continue;
    }
    for (auto& kind : kinds) {
      const std::set<int>& want = kind == "cubin" ? run.truth.at(v).cubin : run.truth.at(v).ptx;
      // The answer as the student's function returned it (the worker converts nothing): a list of ints, in
      // ascending order, each once, as embedded_targets' docstring promises.
      const json entry = answer.value(kind, json::object());
      const std::string type = entry.is_object() ? entry.value("type", std::string("missing")) : "missing";
      const json items = entry.is_object() ? entry.value("items", json::array()) : json::array();
      std::string got_text, problem;
      std::vector<long long> got;
      for (auto& x : items.is_array() ? items : json::array()) {
        got_text += std::string(got_text.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
        if (x.is_number_integer())
          got.push_back(x.get<long long>());
        else
          problem = "an item that is not an int (" + (x.is_string() ? x.get<std::string>() : x.dump()) + ")";
      }
      got_text = type + " [" + got_text + "]";
      const std::vector<long long> want_list(want.begin(), want.end());
      if (type == "missing")
        problem = "no '" + kind + "' key";
      else if (type != "list")
        problem = "a " + type + ", not a list";
      else if (problem.empty() && got != want_list) {
        std::vector<long long> sorted_got = got;
        std::sort(sorted_got.begin(), sorted_got.end());
        sorted_got.erase(std::unique(sorted_got.begin(), sorted_got.end()), sorted_got.end());
        problem = sorted_got == want_list ? "the right numbers, but not sorted ascending, each once" : "other numbers";
      }
      if (!problem.empty())
        wrong += "\n  " + v + ": expected " + kind + " " + show(want) + " (a sorted list of ints), got " + got_text +
                 ": " + problem + "\n    listing: " + run.listings.at(v);
      else
        right += (right.empty() ? "" : "; ") + v + " " + kind + " " + show(want);
    }
  }
  if (!wrong.empty())
    return fail("embedded_targets reads some listings wrongly",
                "the SM numbers of the ELF (.cubin) and PTX (.ptx) lines, empty lists for no device code", wrong);
  pass(right);
}

// A gencode flag set, normalised to (virtual arch, code) pairs: "-gencode=arch=compute_75,code=[sm_75,compute_75]"
// gives (75, sm_75) and (75, compute_75). Anything else is returned in `bad`.
std::set<std::pair<std::string, std::string>> pairs(const std::vector<std::string>& flags, std::string& bad) {
  static const std::regex flag(R"(-gencode[= ]arch=compute_(\d+[a-z]?),code=(\[[a-z_0-9,]+\]|[a-z_0-9]+))");
  std::set<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    std::string f = flags[i];
    if (f == "-gencode" && i + 1 < flags.size()) f += " " + flags[++i];
    std::smatch m;
    if (!std::regex_match(f, m, flag)) {
      bad += (bad.empty() ? "" : ", ") + f;
      continue;
    }
    std::string codes = m[2];
    if (codes.front() == '[') codes = codes.substr(1, codes.size() - 2);
    std::stringstream ss(codes);
    for (std::string c; std::getline(ss, c, ',');) out.insert({m[1], c});
  }
  return out;
}

std::string show(const std::set<std::pair<std::string, std::string>>& s) {
  std::string out;
  for (auto& [arch, code] : s) out += (out.empty() ? "" : " ") + ("compute_" + arch + "->" + code);
  return out.empty() ? "(none)" : out;
}

std::vector<std::string> student_flags(const json& answer) {
  std::vector<std::string> v;
  if (answer.is_array())
    for (auto& f : answer) v.push_back(f.get<std::string>());
  return v;
}

struct ProbeBuild {
  bool ok = false;
  std::string why, listing;
  fs::path lib;
  Targets targets;
};

// The probe kernel built with the student's flags for "75-virtual": PTX only, so a GPU must JIT it.
const ProbeBuild& ptx_only_probe() {
  static ProbeBuild b;
  static bool done = false;
  if (done) return b;
  done = true;
  auto& s = Session::get();
  const json& all = targets_run().group->report.value("flags", json::object());
  const json answer = all.is_object() ? all.value("75-virtual", json()) : json();
  if (answer.is_object()) {
    b.why = "gencode_flags(\"75-virtual\") raised " + answer.value("error", std::string("?"));
    return b;
  }
  std::vector<std::string> flags = student_flags(answer);
  std::string bad;
  pairs(flags, bad);  // only well-formed -gencode flags reach nvcc's command line
  if (!bad.empty() || flags.empty()) {
    b.why = "gencode_flags(\"75-virtual\") returned " +
            (flags.empty() ? std::string("no flags") : "flags nvcc is not given: " + bad);
    return b;
  }
  fs::path dir = s.cfg.work_dir / "probe-75-virtual";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(s.toolchain.value("probe_kernel", ""), dir / "probe_kernel.cu");
  std::vector<std::string> argv{
      s.toolchain.value("nvcc", ""), "-ccbin", s.toolchain.value("cxx", ""), "-shared", "-Xcompiler", "-fPIC"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"probe_kernel.cu", "-o", "libprobe.so"});
  // nvcc's environment: the sandbox's allowlist only (Sandbox::run), as for the submission's own build
  auto r = Sandbox::get().run(ProcessSpec{argv, {}, dir.string(), s.cfg.build_timeout_s, 64 * 1024}, dir);
  if (!r.exited || r.exit_code != 0) {
    b.why = "nvcc with your flags " + r.describe() + ": " + (r.err.empty() ? r.out : r.err).substr(0, 600);
    return b;
  }
  b.lib = dir / "libprobe.so";
  b.listing = cuobjdump_listing(b.lib);
  b.targets = parse_listing(b.listing);
  b.ok = true;
  return b;
}

}  // namespace

TEST_SUITE("portability") {
  TEST_CASE("targets.cubin") {
    listing_row({"cubin"}, {"cubin_and_ptx", "cubin_only", "ptx_only", "newer_ptx", kDrawn});
  }
  TEST_CASE("targets.ptx") { listing_row({"ptx"}, {"cubin_and_ptx", "cubin_only", "ptx_only", "newer_ptx", kDrawn}); }
  TEST_CASE("targets.no_device") { listing_row({"cubin", "ptx"}, {"no_device"}); }

  TEST_CASE("gencode.flags") {
    const TargetsRun& run = targets_run();
    std::string wrong, right;
    for (auto& list : arch_lists()) {
      const json& answer = run.group->report["flags"].value(list, json());
      if (answer.is_object()) {
        wrong += "\n  \"" + list + "\": gencode_flags raised " + answer.value("error", std::string("?"));
        continue;
      }
      std::string bad, ignored;
      auto got = pairs(student_flags(answer), bad), want = pairs(gencode_flags(list), ignored);
      if (!bad.empty())
        wrong += "\n  \"" + list + "\": not a -gencode=arch=compute_XX,code=... flag: " + bad;
      else if (got != want)
        wrong += "\n  \"" + list + "\": expected " + show(want) + ", got " + show(got);
      else
        right += (right.empty() ? "" : "; ") + list;
    }
    if (!wrong.empty())
      return fail("gencode_flags gives other targets than nvcc needs for some lists",
                  "XX -> sm_XX and compute_XX; XX-real -> sm_XX; XX-virtual -> compute_XX", wrong);
    pass("the right targets for " + right);
  }

  TEST_CASE("targets.ptx_only") {
    const ProbeBuild& b = ptx_only_probe();
    if (!b.ok)
      return fail("the probe kernel could not be built with gencode_flags(\"75-virtual\")", "nvcc builds it", b.why);
    if (!b.targets.cubin.empty() || b.targets.ptx != std::set<int>{75})
      return fail("the build with gencode_flags(\"75-virtual\") is not PTX-only compute_75",
                  "PTX [75] and no machine code (cubin [])",
                  "PTX " + show(b.targets.ptx) + ", cubin " + show(b.targets.cubin) + "\n    listing: " + b.listing);
    pass("nvcc with your flags embeds compute_75 PTX and no machine code: " +
         b.listing.substr(0, b.listing.find('\n')));
  }

  TEST_CASE("ptx_jit.cuda") {
    if (skip_without_cuda()) return;
    const ProbeBuild& b = ptx_only_probe();
    if (!b.ok || !b.targets.cubin.empty())
      return fail("no PTX-only probe to run (see targets.ptx_only)", "a PTX-only build", b.ok ? b.listing : b.why);
    const GroupResult& g = Session::get().require("probe", {{"library", ""},
                                                            {"probe", b.lib.string()},
                                                            {"read_only", json::array({b.lib.parent_path().string()})},
                                                            {"judge_gpu", true}});
    int code = g.report.value("code", -1);
    if (code != 0)
      return fail("the PTX-only probe did not run on " + Session::get().cuda_device_name() + ": " +
                      g.report.value("error", std::string("?")),
                  "the driver JIT-compiles the compute_75 PTX and the kernel runs",
                  "CUDA error " + std::to_string(code));
    auto values = g.report.value("values", json::array());
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i].get<double>() != 0.5 * double(i) + 1.0)
        return fail("the PTX-only probe ran but wrote wrong values", "out[i] = 0.5 i + 1",
                    "out[" + std::to_string(i) + "] = " + values[i].dump());
    pass("the driver JIT-compiled the compute_75 PTX on " + Session::get().cuda_device_name() +
         " and the kernel ran (" + std::to_string(values.size()) + " values right)");
  }
}
