// A worker run's answer, read and validated before anything in it is trusted (Session::validate_answer): how the
// run ended (a timeout, a bound of the sandbox, a crash before or after answering), the answer's nonce and group,
// its status, its shape against the group's declaration (autograder/schemas/worker/) and the tensors it returned.
// Evidence files a run wrote are trusted only as the worker announced them.
#include <map>
#include <utility>

#include "compiler_output.hpp"
#include "json_schema.hpp"
#include "sandbox.hpp"
#include "session_internal.hpp"
#include "sha256.hpp"

namespace judge {

namespace {

// The output without the frames of a c10 backtrace ("frame #12: ..."): since torch 2.15 an exception that escapes
// a library's initialisers prints its message first and some 40 frames after it, which would fill the tail.
std::string without_backtrace(const std::string& text) {
  std::string kept;
  for (const std::string& line : compiler_output::split_lines(text))
    if (!compiler_output::starts_with(line, "frame #") && line != "<omitting python frames>") kept += line + "\n";
  return kept;
}

// The end of the worker's output, for a failure message ("" when it printed nothing).
std::string output_tail(const ProcessResult& p) {
  std::string t = tail_lines(without_backtrace(p.err.empty() ? p.out : p.err), 8);
  return t.empty() ? std::string() : "\nlast output:\n" + t;
}

// How the run ended, before its answer is read: a failure line, or "" when it may have answered.
std::string ending_failure(const ProcessResult& p) {
  if (!p.stopped.empty())  // a bound of the sandbox, watched while it ran
    return "the process that loaded your library was stopped: " + p.stopped + output_tail(p);
  if (p.memory_limit)  // its own cgroup's OOM kill: nothing of a neighbour's, and no retry
    return "the process that loaded your library used more than the " +
           std::to_string(Sandbox::get().worker_memory_mb()) +
           " MiB of host memory a worker run may use, and the kernel stopped it (" + p.describe() +
           "): a leak, or an allocation far larger than the inputs need?" + output_tail(p);
  return "";
}

// A schema file of the course, read once per grade.
const json& schema_file(const fs::path& path) {
  static std::map<fs::path, json> read;
  auto found = read.find(path);
  if (found == read.end()) found = read.emplace(path, read_json_bounded(path)).first;
  return found->second;
}

}  // namespace

std::string answer_mismatch(const fs::path& course_root, const std::string& group, const json& answer) {
  const fs::path folder = fs::path("autograder") / "schemas" / "worker";
  const fs::path envelope_file = folder / "response.schema.json", report_file = folder / (group + ".schema.json");
  auto mismatch = [&](const fs::path& file, const std::string& why) {
    return "the worker's answer does not match " + file.string() + ": " + why + "; nothing from it is trusted";
  };
  const json& envelope = schema_file(course_root / envelope_file);
  if (std::string why = schema_mismatch(envelope, answer); !why.empty()) return mismatch(envelope_file, why);
  if (answer["status"] != "ok") return "";  // an error answer carries no report
  if (!fs::exists(course_root / report_file))
    return mismatch(report_file, "the judge has no declaration of the group '" + group + "'");
  json report = answer;  // what the group added to the envelope (worker.py: response.update(report))
  for (auto& [key, _] : envelope.at("properties").items()) report.erase(key);
  if (std::string why = schema_mismatch(schema_file(course_root / report_file), report); !why.empty())
    return mismatch(report_file, why);
  return "";
}

json read_answer(const fs::path& response, std::string& unreadable) {
  json r;
  if (fs::exists(response)) {
    try {
      r = read_json_bounded(response);
    } catch (const std::exception& e) {
      unreadable = std::string(" (") + e.what() + ")";
    }
  }
  return r;
}

// The worker's own account of its phases (import, load, probes): it shares a process with the submission, so it is
// only ever printed by the bench, never read for a verdict.
void Session::record_worker_time(const RunPlan& p, std::chrono::steady_clock::time_point step, const json& answer,
                                 bool served) {
  json phases = json::object();
  if (answer.is_object() && answer.contains("timing") && answer["timing"].is_object())
    for (auto& [k, v] : answer["timing"].items())
      if (v.is_number() && phases.size() < 8 && k.size() < 32) phases[k] = v;
  json entry = {{"variant", p.variant}, {"worker", phases}, {"forked", served}};
  if (!server_note_.empty()) entry["server"] = std::exchange(server_note_, std::string());
  record_time("worker " + p.name, step, entry);
}

void Session::validate_answer(GroupResult& g, const RunPlan& p, const json& r, const std::string& unreadable) {
  const ProcessResult& proc = g.process;
  if (proc.timed_out) {
    g.failure = "the worker running your operator was stopped after " + std::to_string(int(p.timeout_s)) +
                " s: it did not finish (an infinite loop, or a kernel that never ends?)";
    if (p.gpu)
      gpu_stopped_ = "an earlier run on the GPU was stopped after " + std::to_string(int(p.timeout_s)) +
                     " s (an infinite loop, or a kernel that never ends?): the GPU rows after it are not run";
    return;
  }
  if (g.failure = ending_failure(proc); !g.failure.empty()) return;
  if (!fs::exists(g.dir / "response.json")) {
    g.failure = "the process that loaded your library " + proc.describe() +
                " before it could answer (a crash, abort(), or exit() inside the operator or its initialisers)" +
                output_tail(proc);
    return;
  }
  if (!unreadable.empty() || !r.is_object() || !r.contains("nonce") || r["nonce"] != g.nonce || !r.contains("group") ||
      r["group"] != p.name) {
    g.failure =
        "the worker's answer was missing, malformed or not for this request; nothing from it is trusted" + unreadable;
    return;
  }
  if (!proc.exited || proc.exit_code != 0) {
    g.failure = "the process that loaded your library " + proc.describe() + " after answering" + output_tail(proc);
    return;
  }
  if (g.failure = answer_mismatch(cfg.course_root, p.name, r); !g.failure.empty()) return;
  if (!r.contains("status") || r["status"] != "ok") {
    std::string error =
        r.contains("error") && r["error"].is_string() ? r["error"].get<std::string>() : "(no reason given)";
    bool in_submission = r.contains("error_in_submission") && r["error_in_submission"] == true;
    g.failure = in_submission ? error : "the worker could not run the request: " + error;
    return;
  }
  fs::path tensors = g.dir / "outputs.safetensors";
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
}

fs::path trusted_evidence(const GroupResult& g, const std::string& name) {
  const std::string marker = "course-evidence " + g.nonce + " " + name + " ";
  std::size_t at = g.process.out.find(marker);
  if (g.nonce.empty() || at == std::string::npos || (at > 0 && g.process.out[at - 1] != '\n'))
    throw std::runtime_error("the worker did not announce " + name + " before running your code: it is not trusted");
  std::size_t end = g.process.out.find('\n', at);
  std::string announced =
      g.process.out.substr(at + marker.size(), end == std::string::npos ? end : end - at - marker.size());
  fs::path file = g.dir / name;
  if (sha256_file(file) != announced)
    throw std::runtime_error(name + " was changed after the worker announced it (before your code ran): not trusted");
  return file;
}

}  // namespace judge
