// One worker run (Session::run_group): planned from the check's arguments, its folder prepared (the request and
// the inputs), run on the grade's worker server or in a fresh sandbox, its answer validated (worker_answer.cpp),
// and run once more, alone, after a sign of the machine's fault (machine_faults.hpp).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "phase.hpp"
#include "sandbox.hpp"
#include "session_internal.hpp"

namespace judge {

namespace {

// The run's folder, its request and its inputs.
void prepare_run_folder(const fs::path& at, const RunPlan& p, const std::string& nonce, const std::string& exercise) {
  fs::remove_all(at);
  fs::create_directories(at);
  json request = {{"nonce", nonce},
                  {"group", p.name},
                  {"library", p.library.string()},
                  {"sources_dir", (p.build.dir / "src").string()},
                  {"exercise", exercise},
                  {"out_dir", at.string()},
                  {"args", p.worker_args}};
  if (!p.inputs.empty()) {
    write_safetensors((at / "inputs.safetensors").string(), p.inputs);
    request["inputs"] = (at / "inputs.safetensors").string();
  }
  std::ofstream(at / "request.json") << request.dump(2);
}

// A sign of the machine's fault in a finished run, or None.
MachineFault sign_of(const GroupResult& r, long oom_kills) {
  if (r.process.timed_out) return MachineFault::None;  // a hang costs one timeout (gpu_stopped_), never two
  // the worker's output and answer (bounded reads): text, so only a reason to look again
  std::string text = r.failure + "\n" + r.process.out + "\n" + r.process.err;
  if (r.ok) text += r.report.dump();
  MachineFault f = fault_sign_in(text);
  if (f != MachineFault::None) return f;
  // (an OOM kill in the run's own memory cgroup is the submission's: the limit is its own)
  return host_memory_sign(!r.process.exited && r.process.term_signal == SIGKILL && !r.process.memory_limit, oom_kills,
                          oom_kill_count());
}

}  // namespace

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
  std::map<std::string, std::string> env{
      {"PYTHONDONTWRITEBYTECODE", "1"}, {"PYTHONUNBUFFERED", "1"}, {"CUDA_VISIBLE_DEVICES", ""}};
  // Triton reads it when triton.language is first imported, which the warm-up does: it is the server's from the start
  if (exercise.python_abi()) env["TRITON_INTERPRET"] = "1";
  fs::path live = cfg.work_dir / "live";
  ProcessSpec spec{
      {toolchain.at("python").get<std::string>(), script.string()}, env, live.string(), cfg.worker_timeout_s, 0};
  // an exercise whose runs call opcheck, torch.compile or a harness: the server pays their first call once
  if (std::any_of(exercise.checks.begin(), exercise.checks.end(), [](const CheckSpec& c) { return c.warms_worker; }))
    spec.argv.push_back("--warm");
  auto server = std::make_unique<ServerProcess>();
  if (!Sandbox::get().start_server(*server, spec, live, server_mounts_)) {
    server_off_ = true;
    return;
  }
  server_ = std::move(server);
}

bool Session::run_on_server(GroupResult& g, const fs::path& dir, double timeout_s,
                            const std::map<std::string, std::string>& env) {
  json line = {{"seq", ++server_seq_},
               {"request", (dir / "request.json").string()},
               {"cwd", dir.string()},
               {"env", Sandbox::get().server_folder(dir, env)}};
  std::string answer;
  const long oom_kills = Sandbox::get().server_oom_kills();
  ProcessResult r = server_->request(line.dump(), timeout_s, 64 * 1024, answer, Sandbox::get().disk_watch(dir));
  r.memory_limit = Sandbox::get().server_oom_kills() > oom_kills;
  Sandbox::get().after_server_request();
  if (r.timed_out ||
      !r.stopped.empty()) {  // as a fresh worker would have been: stopped; the next group gets a new server
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
  if (current && !g.retry_note.empty() && current->retry_note.empty())
    current->retry_note = "its worker run '" + name + "' " + g.retry_note;
  return g;
}

const GroupResult& Session::require(const std::string& name, const json& args,
                                    const std::map<std::string, Tensor>& inputs, const std::string& variant) {
  const GroupResult& g = group(name, args, inputs, variant);
  if (!g.ok) throw NotRun(g.failure);
  return g;
}

RunPlan Session::plan_run(const std::string& name, const json& args, const std::map<std::string, Tensor>& inputs,
                          const std::string& variant, const BuildResult& b) const {
  RunPlan p{name, variant, args, json::object(), inputs, b, {}, {}, {}, cfg.worker_timeout_s, false};
  for (auto& [k, v] : args.items())
    if (k.rfind("judge_", 0) != 0) p.worker_args[k] = v;
  p.gpu = args.value("judge_gpu", false);
  // args["library"] names another library to load instead of the submission's (the course's operator, or a planted
  // bug target of chapter 7); "" loads none. The submission's Python sources are importable from sources_dir.
  p.library = args.contains("library") ? fs::path(args["library"].get<std::string>()) : b.library;
  // The worker reads the library, and course-built helpers it imports (chapter 1's pybind11 twin).
  p.readable.push_back(b.dir);
  if (!p.library.empty()) p.readable.push_back(p.library.parent_path());
  for (auto& r : args.value("read_only", json::array())) p.readable.push_back(r.get<std::string>());
  for (auto& r : strings(toolchain, "worker_read_only"))
    if (fs::is_directory(r)) p.readable.push_back(r);
  p.env["PYTHONDONTWRITEBYTECODE"] = "1";
  p.env["PYTHONUNBUFFERED"] = "1";
  // Only a GPU group sees the GPU (and it takes the GPU turn): no other run can take a neighbour's GPU memory.
  if (args.value("hide_cuda", false) || !p.gpu) p.env["CUDA_VISIBLE_DEVICES"] = "";
  // A Python-defined exercise's Triton kernels: on the CPU through Triton's interpreter, on the GPU compiled
  if (exercise.python_abi() && !p.gpu) p.env["TRITON_INTERPRET"] = "1";
  const json extra_env = args.value("judge_env", json::object());  // (a named value: items() of a temporary dangles)
  for (auto& [k, v] : extra_env.items()) {
    if (!host_variable_allowed(k) && !judge_variable_allowed(k))  // it would be dropped, silently: a course bug
      throw std::logic_error("judge_env names " + k + ", which the sandbox's environment allowlist drops");
    p.env[k] = v.get<std::string>();
  }
  p.timeout_s = args.value("judge_timeout_s", cfg.worker_timeout_s);
  return p;
}

// The worker server serves a group that needs nothing it was not started with: the default build, no wrapper, no
// extra environment, the worker's own python, nothing to read beyond what it mounts, no GPU (fork after torch's import has not been shown on a
// GPU yet: those groups keep a fresh sandbox each). Anything else, or a server that cannot answer, runs as before: a
// fresh sandbox per group.
bool Session::server_can_serve(const RunPlan& p) const {
  auto mounted = [&](const fs::path& path) {
    return std::any_of(server_mounts_.begin(), server_mounts_.end(), [&](const fs::path& m) {
      return path.lexically_relative(m).string().rfind("..", 0) != 0 && !path.lexically_relative(m).empty();
    });
  };
  return p.variant == "default" && !p.gpu && !p.args.contains("judge_wrapper") && !p.args.contains("judge_env") &&
         !p.args.contains("judge_python") && std::all_of(p.readable.begin(), p.readable.end(), mounted);
}

// The run on the worker server, prepared in its live folder and moved to `dir` once answered; false: not served
// (no server, or one that could not answer), nothing decided.
bool Session::run_served(GroupResult& g, const RunPlan& p, const fs::path& dir, const std::string& nonce) {
  fs::path live = cfg.work_dir / "live" / dir.filename();
  if (server_off_ || !(server_ || (start_server(p.build.dir), server_ != nullptr))) return false;
  prepare_run_folder(live, p, nonce, exercise.id);
  bool served = run_on_server(g, live, p.timeout_s, p.env);
  std::error_code ec;
  if (served) {
    Sandbox::remove_odd_files(live);
    fs::rename(live, dir, ec);
    served = !ec;
  }
  if (!served) fs::remove_all(live, ec);
  return served;
}

// One run of the group into g. `alone`: the retry after a sign of the machine's fault, in a fresh sandbox (never on
// the worker server) and holding the GPU turn whatever the group, so no other grade of this machine is on the GPU.
void Session::attempt_run(GroupResult& g, const RunPlan& p, bool alone, MachineFault sign, GpuMemory& before_retry) {
  g = GroupResult{};
  // Neither the folder nor the nonce says how many runs came before: code under test must not learn which run
  // (and so which planted operator, in doctest's fixed order) it is in.
  const fs::path dir = cfg.work_dir / ("run-" + random_token(8) + "-" + p.name);
  const std::string nonce = random_token(16);
  g.nonce = nonce;
  write_phase(cfg.out_dir, "checks", "running checks (" + p.name + ")");
  auto step = std::chrono::steady_clock::now();
  const bool served = !alone && server_can_serve(p) && run_served(g, p, dir, nonce);
  // GPU work of every grade on this machine takes turns (a batch's, a watch's, the test suite's): a neighbour that
  // holds all of the GPU's memory, or its compute, for as long as its run lasts cannot make another grade's rows fail.
  // CPU groups run side by side.
  std::optional<GpuTurn> gpu_turn;
  if (!served && (p.gpu || alone)) {
    auto waited = std::chrono::steady_clock::now();
    gpu_turn.emplace();
    record_time("wait for the GPU (other grades' GPU runs)", waited);
    if (alone && sign != MachineFault::HostMemory) before_retry = gpu_memory();  // no grade of ours on the GPU now
    step = std::chrono::steady_clock::now();
  }
  if (!served) {
    std::vector<std::string> argv;
    for (auto& w : p.args.value("judge_wrapper", json::array())) argv.push_back(w.get<std::string>());
    // args["judge_python"] names another python of toolchain.json ("older_torch_python": abi.cross_version)
    const std::string python = toolchain.value(p.args.value("judge_python", std::string("python")), "");
    argv.insert(argv.end(), {python, toolchain.at("worker").get<std::string>(), (dir / "request.json").string()});
    prepare_run_folder(dir, p, nonce, exercise.id);
    g.process = Sandbox::get().run(ProcessSpec{argv, p.env, dir.string(), p.timeout_s, 64 * 1024}, dir, p.readable);
  }
  g.dir = dir;
  std::string unreadable;
  const json answer = read_answer(dir / "response.json", unreadable);
  record_worker_time(p, step, answer, served);
  validate_answer(g, p, answer, unreadable);
}

// What a run's folder holds counts against the grade's disk budget; a run stopped for writing too much is emptied at
// once (its rows fail: nothing in it is read), so the next run has the disk it needs.
void Session::account_run(GroupResult& g) {
  Sandbox::get().count_run_bytes(g.dir);
  if (!g.process.stopped.empty()) removed_bytes += prune_run_folder(g.dir);
}

// A sign of the machine's fault: once more, alone. The same sign again is the machine's fault only on evidence the
// submission cannot make up (machine_fault_reason); otherwise the second run's verdicts stand as the submission's.
void Session::retry_alone(GroupResult& g, const RunPlan& p, MachineFault sign) {
  const std::string first = describe(sign);
  record_time("sign of the machine's fault (" + first + "): retried alone", std::chrono::steady_clock::now());
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a neighbour's spike may pass
  const long oom_kills = oom_kill_count();
  GpuMemory before_retry;
  attempt_run(g, p, true, sign, before_retry);
  account_run(g);
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
  auto found = groups_.find(key);
  if (found != groups_.end()) return found->second;
  GroupResult& g = groups_[key];
  const BuildResult& b = build(variant);
  if (!b.ok) {
    g.failure = "not run: the submission did not build (" + b.failure + ")";
    return g;
  }
  if (args.value("judge_gpu", false) && !gpu_stopped_.empty()) {  // a kernel that never ends costs one timeout
    g.failure = "not run: " + gpu_stopped_;
    return g;
  }
  const RunPlan plan = plan_run(name, args, inputs, variant, b);
  const long oom_kills = oom_kill_count();
  GpuMemory unused;  // (measured only before a retry)
  attempt_run(g, plan, false, MachineFault::None, unused);
  account_run(g);
  const MachineFault sign = sign_of(g, oom_kills);
  if (sign != MachineFault::None) retry_alone(g, plan, sign);
  return g;
}

}  // namespace judge
