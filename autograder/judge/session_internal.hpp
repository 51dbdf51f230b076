// What the judge's session files (grading.cpp, build.cpp, worker_run.cpp, worker_answer.cpp) share and nothing
// else includes: the test hook's fault point, the output tails of the failure messages, and the run plan of one
// worker group.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "grading.hpp"

namespace judge {

// TEST HOOK (judge --test-fault CHECK[:KIND]): faults on purpose when the current check is CHECK (grading.cpp).
void test_fault_point();
// The last `max_lines` lines of `s` (all of it when it has fewer).
std::string tail_lines(const std::string& s, std::size_t max_lines);
// The strings of the list `key` of `j` (none when it is missing).
std::vector<std::string> strings(const json& j, const char* key);
// Letters from the OS's random source: never derived from the grade's seed, which the judge prints.
std::string random_token(int n);
// Empties a run's folder but for what a person reads to debug; the bytes removed.
unsigned long long prune_run_folder(const fs::path& dir);

// One worker group's run as the judge plans it before any attempt (Session::run_group): what the worker is asked,
// what it may read, its environment and limits. The same plan serves the first attempt and the retry.
struct RunPlan {
  std::string name, variant;
  const json& args;  // the check's, "judge_" keys included
  json worker_args;  // what the worker sees: args without the "judge_" keys
  const std::map<std::string, Tensor>& inputs;
  const BuildResult& build;
  fs::path library;  // loaded by the worker; empty: none
  std::vector<fs::path> readable;
  std::map<std::string, std::string> env;  // on top of the sandbox's allowlist (Sandbox::run)
  double timeout_s = 0;
  bool gpu = false;
};

// The worker's answer (response.json), read once and bounded; null when there is none, and `unreadable` says why
// when it could not be parsed (" (...)"). Trusted only after Session::validate_answer.
json read_answer(const fs::path& response, std::string& unreadable);
// Where a worker's answer (nonce and group already checked) breaks the declaration of its envelope
// (autograder/schemas/worker/response.schema.json) or, when it says "ok", of its group's report (GROUP.schema.json):
// the failure line naming the file and the first mismatch; "" when it matches.
std::string answer_mismatch(const fs::path& course_root, const std::string& group, const json& answer);

}  // namespace judge
