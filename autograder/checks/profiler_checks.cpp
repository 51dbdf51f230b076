// Chapter 8: the student's profile_rows.py answers questions about a torch.profiler run of the course's operator
// (groups_profiler.py). The right answers come from the run's Chrome trace, read here: the operator's framework rows
// are its cpu_op events, counted once per call (the profiler records an op again when its autograd kernel
// re-dispatches below autograd: an event nested in a same-named one is the same call, as in key_averages()), and its
// kernels are the GPU kernel events whose correlation id matches a CUDA launch made inside one of its calls.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "../judge/compare.hpp"
#include "../judge/grading.hpp"

using namespace judge;

namespace {

// The operators the student's functions are asked about: the two the workload calls, and one it never calls (its
// answers are 0 calls, 0.0 us and no kernels, not whatever a lookup that found nothing falls back to).
const char* kOps[] = {"course::mm16", "course::mm16_scaled", "course::mm16_transposed"};

struct OpTruth {
  int calls = 0;
  double cpu_time_us = 0;
  std::set<std::string> kernels;
};

struct ProfileRun {
  const GroupResult* group = nullptr;
  std::string not_run;  // why there is no run to judge (every row that needs it fails with this)
  std::map<std::string, OpTruth> truth;
};

struct Span {
  double begin, end;
  long tid;
};

void read_profile_run(const std::string& device, ProfileRun& run);

// The profile of one device, run once: the worker group, then the truth read from its trace.
const ProfileRun& profile_run(const std::string& device) {
  static std::map<std::string, ProfileRun> runs;
  auto found = runs.find(device);
  if (found == runs.end()) {
    found = runs.emplace(device, ProfileRun{}).first;
    try {
      read_profile_run(device, found->second);
    } catch (const std::exception& e) {  // remembered: the next row of this device fails the same way
      found->second.not_run = e.what();
    }
  }
  if (!found->second.not_run.empty()) throw NotRun(found->second.not_run);
  return found->second;
}

void read_profile_run(const std::string& device, ProfileRun& run) {
  auto& s = Session::get();
  std::string op = s.toolchain.value("course_operator", "");
  if (op.empty())
    throw NotRun(
        "this grader was built without the course's operator (solutions/06_autograd and CUDA): chapter 8 "
        "cannot be graded here");
  // How many calls of each kind the workload makes, drawn per grade: counts learnt from one grade (or from chapter 8)
  // are wrong in the next. mm16_scaled runs 3 or 4 times, never the chapter's 2.
  auto rng = rng_for("profile workload");
  const json drawn_calls = {{"direct", 1 + static_cast<int>(rng() % 3)},
                            {"transposed", 1 + static_cast<int>(rng() % 2)},
                            {"scaled", 3 + static_cast<int>(rng() % 2)}};
  run.group = &s.require("profile", {{"device", device},
                                     {"library", op},
                                     {"seed", s.cfg.seed % 100000},
                                     {"calls", drawn_calls},
                                     {"judge_gpu", device == "cuda"},
                                     {"ops", std::vector<std::string>(std::begin(kOps), std::end(kOps))}});
  json trace;
  try {
    trace = read_json_bounded(trusted_evidence(*run.group, "trace.json"));
  } catch (const std::exception& e) {
    throw NotRun(std::string("the profiler's trace could not be read: ") + e.what());
  }
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    throw NotRun("the profiler's trace could not be read (the worker's trace.json has no traceEvents)");
  std::map<std::string, std::vector<Span>> calls;
  std::vector<std::pair<Span, long>> launches;  // (when, correlation id)
  std::map<long, std::string> kernels;          // correlation id -> kernel name
  for (auto& e : trace["traceEvents"]) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    std::string cat = e.value("cat", ""), name = e.value("name", "");
    double ts = e.value("ts", 0.0), dur = e.value("dur", 0.0);
    long tid = e.contains("tid") && e["tid"].is_number() ? e["tid"].get<long>() : 0;
    long corr = e.contains("args") && e["args"].contains("correlation") ? e["args"]["correlation"].get<long>() : -1;
    if (cat == "cpu_op")
      calls[name].push_back({ts, ts + dur, tid});
    else if ((cat == "cuda_runtime" || cat == "cuda_driver") && corr >= 0)
      launches.push_back({{ts, ts + dur, tid}, corr});
    // torch's FunctionEvent.kernels holds every device activity of a launch: kernels, and memcpy/memset too
    else if ((cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") && corr >= 0)
      kernels[corr] = name;
  }
  for (const char* name : kOps) {
    OpTruth& t = run.truth[name];
    auto& spans = calls[name];
    for (auto& sp : spans) {
      bool nested = false;  // inside another event of the same name on the same thread: the same call
      for (auto& outer : spans)
        if (&outer != &sp && outer.tid == sp.tid && outer.begin <= sp.begin && sp.end <= outer.end &&
            (outer.begin < sp.begin || sp.end < outer.end))
          nested = true;
      if (nested) continue;
      ++t.calls;
      t.cpu_time_us += sp.end - sp.begin;
      for (auto& [when, corr] : launches)
        if (when.tid == sp.tid && sp.begin <= when.begin && when.begin <= sp.end && kernels.count(corr))
          t.kernels.insert(kernels[corr]);
    }
  }
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

// The student's answer to `fn` for each op: present (no exception) and accepted by `same`.
template <class Same, class Show>
void compare(const std::string& device, const std::string& fn, Same same, Show show_truth) {
  const ProfileRun& run = profile_run(device);
  std::string wrong, right, expected_all;
  for (const char* name : kOps) {
    const json& answers = run.group->report.value("answers", json::object());
    const json answer = answers.is_object() ? answers.value(name, json::object()) : json::object();
    const OpTruth& truth = run.truth.at(name);
    std::string expected = show_truth(truth);
    expected_all += std::string(expected_all.empty() ? "" : "; ") + name + ": " + expected;
    if (answer.contains(fn + "_error")) {
      wrong += std::string("\n  ") + fn + "(prof, \"" + name + "\") raised " + answer[fn + "_error"].get<std::string>();
      continue;
    }
    if (!answer.contains(fn)) {
      wrong += std::string("\n  ") + fn + "(prof, \"" + name + "\") returned nothing";
      continue;
    }
    if (!same(answer[fn], truth))
      wrong += std::string("\n  ") + name + ": expected " + expected + ", got " + answer[fn].dump();
    else
      right += std::string(right.empty() ? "" : "; ") + name + ": " + expected;
  }
  if (!wrong.empty()) return fail(fn + " disagrees with the profiler's trace", expected_all, wrong);
  pass(right);
}

void calls_row(const std::string& device) {
  compare(
      device, "op_calls",
      [](const json& a, const OpTruth& t) { return a.is_number_integer() && a.get<int>() == t.calls; },
      [](const OpTruth& t) { return std::to_string(t.calls) + " call(s)"; });
}

}  // namespace

TEST_SUITE("profiler") {
  TEST_CASE("profile.calls.cpu") { calls_row("cpu"); }

  TEST_CASE("profile.cpu_time.cpu") {
    compare(
        "cpu", "op_cpu_time_us",
        [](const json& a, const OpTruth& t) {
          if (!a.is_number()) return false;
          if (t.calls == 0) return a.get<double>() == 0.0;  // not in the profile: no time at all
          Tensor seen{"F64", {1}, {a.get<double>()}};       // the one comparator: within 5 % (and 2 us)
          return compare(&seen, Expected{{1}, {t.cpu_time_us}, "", ""}, Tolerance{2.0, 0.05}).ok;
        },
        [](const OpTruth& t) {
          if (t.calls == 0) return std::string("0.0 us (not in the profile)");
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.1f us (within 5%%)", t.cpu_time_us);
          return std::string(buf);
        });
  }

  TEST_CASE("profile.calls.cuda") {
    if (skip_without_cuda()) return;
    calls_row("cuda");
  }

  TEST_CASE("profile.kernels.cuda") {
    if (skip_without_cuda()) return;
    const ProfileRun& run = profile_run("cuda");
    if (run.truth.at("course::mm16").kernels.empty())
      return fail("the trace shows no kernel launched inside course::mm16: the profiler recorded no CUDA activity",
                  "at least the operator's own kernel", "none");
    compare(
        "cuda", "op_kernels",
        [](const json& a, const OpTruth& t) {
          std::set<std::string> got;
          for (auto& k : a) got.insert(k.get<std::string>());
          return got == t.kernels && a.size() == got.size();
        },
        [](const OpTruth& t) { return "[" + join(t.kernels) + "]"; });
  }
}
