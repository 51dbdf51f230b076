// Unit tests of the judge's own machinery: the tensor format and the JSON it reads from untrusted workers (with a
// fuzz test of both readers), the one comparator, the process runner that must contain workers, the environment
// submission code gets, and the pieces of the reports (quoting, gencode flags, scores, the points not graded, the
// rows of a judge that crashed) that the end-to-end tests reach only indirectly.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "../judge/compare.hpp"
#include "../judge/diagnostics.hpp"
#include "../judge/grading.hpp"
#include "../judge/json.hpp"
#include "../judge/json_schema.hpp"
#include "../judge/machine_faults.hpp"
#include "../judge/memory_cgroup.hpp"
#include "../judge/phase.hpp"
#include "../judge/process.hpp"
#include "../judge/report.hpp"
#include "../judge/safetensors.hpp"
#include "../judge/sandbox.hpp"
#include "../judge/session_internal.hpp"
#include "../judge/sha256.hpp"
#include "../judge/submission_files.hpp"

using namespace judge;

namespace {
std::string temp_path(const char* name) { return std::string("/tmp/judge_unit_") + std::to_string(getpid()) + name; }
void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
std::string header_file(const std::string& header, const std::string& data) {
  std::string s(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(n >> (8 * i));
  return s + header + data;
}
}  // namespace

TEST_CASE("half precision conversions are exact where they must be") {
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(1e6f) == 0x7c00);
  CHECK(float_to_half(5.960464477539063e-08f) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(1.0f + 1.0f / 2048) == 0x3c00);      // a tie rounds to even
  for (uint16_t h = 0; h < 0x7c00; ++h) CHECK(float_to_half(half_to_float(h)) == h);
}

TEST_CASE("safetensors round trip keeps dtype, shape and values") {
  std::map<std::string, Tensor> in{{"a", {"F16", {2, 3}, {1, -2, 0.5, 0.25, 3, -0.125}}},
                                   {"b", {"F64", {1}, {3.141592653589793}}},
                                   {"c", {"I64", {2}, {-7, 1 << 20}}}};
  auto path = temp_path("rt.safetensors");
  write_safetensors(path, in);
  auto out = read_safetensors(path);
  REQUIRE(out.size() == 3);
  for (auto& [k, t] : in) {
    CHECK(out[k].dtype == t.dtype);
    CHECK(out[k].shape == t.shape);
    CHECK(out[k].values == t.values);
  }
  std::remove(path.c_str());
}

TEST_CASE("malformed tensor files from a worker are rejected, never trusted") {
  auto path = temp_path("bad.safetensors");
  write_bytes(path, "abc");
  CHECK_THROWS_AS(read_safetensors(path), FormatError);
  write_bytes(path, header_file(std::string(100, ' '), ""));  // header runs past the end
  CHECK_THROWS_AS(read_safetensors(path.substr(0, path.size())), FormatError);
  write_bytes(path, header_file(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}})", std::string(8, '\0')));
  CHECK_THROWS_AS(read_safetensors(path), FormatError);  // 4 floats need 16 bytes
  write_bytes(path, header_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,800]}})", std::string(8, '\0')));
  CHECK_THROWS_AS(read_safetensors(path), FormatError);  // offsets past the data
  write_bytes(path, header_file(R"({"x":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0')));
  CHECK_THROWS_AS(read_safetensors(path), FormatError);
  write_bytes(path, header_file("not json", ""));
  CHECK_THROWS_AS(read_safetensors(path), FormatError);
  std::remove(path.c_str());
}

TEST_CASE("a process past its wall-clock limit is killed") {
  auto r = run_process({{"/bin/sleep", "30"}, current_environment(), "", 0.5, 1024});
  CHECK(r.timed_out);
  CHECK_FALSE(r.exited);
  CHECK(r.seconds < 5);
}

TEST_CASE("processes left running in the background die with the child") {
  auto r = run_process({{"/bin/sh", "-c", "sleep 30 & echo started"}, current_environment(), "", 10, 1024});
  CHECK(r.exited);
  CHECK(r.out == "started\n");
  CHECK(r.seconds < 5);
  // no process of its group is left (allowing init a moment to reap the killed one)
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = kill(-r.pid, 0) == -1 && errno == ESRCH;
    if (!gone) usleep(10000);
  }
  CHECK(gone);
}

TEST_CASE("output beyond the cap is dropped, and the child still finishes") {
  auto r =
      run_process({{"/bin/sh", "-c", "head -c 5000000 /dev/zero; echo done >&2"}, current_environment(), "", 30, 4096});
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out.size() == 4096);
  CHECK(r.out_truncated);
  CHECK(r.err == "done\n");
}

TEST_CASE("exit status and signals are told apart") {
  auto r = run_process({{"/bin/sh", "-c", "exit 3"}, current_environment(), "", 10, 1024});
  CHECK((r.exited && r.exit_code == 3));
  r = run_process({{"/bin/sh", "-c", "kill -SEGV $$"}, current_environment(), "", 10, 1024});
  CHECK_FALSE(r.exited);
  CHECK(r.term_signal == SIGSEGV);
  CHECK(r.describe().find("signal 11") != std::string::npos);
}

// ---- the server protocol (ServerProcess: worker_server.py's judge side) --------------------------------------------
namespace {
// A shell stand-in for the worker server: "ready" on fd 3, then per request line: output on stdout and stderr, the
// answer on fd 3. "hang" never answers; "quit" ends without answering.
const char* kShellServer =
    "echo ready >&3; while read -r line; do case $line in "
    "hang) sleep 30 ;; quit) exit 0 ;; "
    "*) echo \"out of $line\"; echo \"err of $line\" >&2; echo \"done $line\" >&3 ;; esac; done";
}  // namespace

TEST_CASE("a server's requests: each gets its own output and answer") {
  ServerProcess server;
  REQUIRE(server.start({{"/bin/sh", "-c", kShellServer}, current_environment(), "", 10, 0}));
  std::string answer;
  auto r = server.request("one", 10, 1024, answer);
  CHECK(answer == "done one");
  CHECK(r.out == "out of one\n");
  CHECK(r.err == "err of one\n");
  r = server.request("two", 10, 1024, answer);
  CHECK(answer == "done two");
  CHECK(r.out == "out of two\n");  // nothing of the first request's
  CHECK(server.running());
}

TEST_CASE("a server that does not answer in time is stopped; one that ends answers nothing") {
  ServerProcess server;
  REQUIRE(server.start({{"/bin/sh", "-c", kShellServer}, current_environment(), "", 10, 0}));
  std::string answer;
  auto r = server.request("hang", 0.5, 1024, answer);
  CHECK(r.timed_out);
  CHECK(answer.empty());
  CHECK_FALSE(server.running());
  REQUIRE(server.start({{"/bin/sh", "-c", kShellServer}, current_environment(), "", 10, 0}));
  r = server.request("quit", 10, 1024, answer);
  CHECK_FALSE(r.timed_out);
  CHECK(answer.empty());
  CHECK_FALSE(server.running());
  r = server.request("after", 10, 1024, answer);  // to a stopped server: never sent
  CHECK_FALSE(r.started);
}

// ---- the one comparator ---------------------------------------------------------------------------------------
namespace {
Tensor t32(std::vector<int64_t> shape, std::vector<double> v) { return Tensor{"F32", std::move(shape), std::move(v)}; }
Expected want(std::vector<int64_t> shape, std::vector<double> v) {
  return Expected{std::move(shape), std::move(v), "", ""};
}
const double kNan = std::nan(""), kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("a child that closes its output before it exits is waited for, not killed") {
  // coreutils close stdout and stderr at exit: the pipes end before the process does
  auto r = run_process({{"/bin/sh", "-c", "exec >&- 2>&-; sleep 0.3; exit 3"}, current_environment(), "", 10, 1024});
  CHECK(r.exited);
  CHECK(r.exit_code == 3);
  CHECK(!r.timed_out);
  // ... and the wall-clock limit still holds for one that runs on without output
  r = run_process({{"/bin/sh", "-c", "exec >&- 2>&-; sleep 30"}, current_environment(), "", 0.5, 1024});
  CHECK(r.timed_out);
  CHECK(r.seconds < 10);
}

TEST_CASE("comparator: a NaN or an infinity where the reference is finite is wrong, wherever it is") {
  auto seen = t32({2, 2}, {1, kNan, 3, 4});
  auto c = compare(&seen, want({2, 2}, {1, 2, 3, 4}), {1e-3, 1e-3});
  CHECK_FALSE(c.ok);
  CHECK(c.wrong == 1);
  CHECK(c.detail.find("worst at [0, 1]: got nan, reference 2") != std::string::npos);
  seen = t32({2, 2}, {kNan, kNan, kNan, kNan});  // every element NaN: the error that `err > worst` never sees
  c = compare(&seen, want({2, 2}, {1, 2, 3, 4}), {1e-3, 1e-3});
  CHECK_FALSE(c.ok);
  CHECK(c.wrong == 4);
  seen = t32({1, 2}, {kInf, -kInf});
  CHECK(compare(&seen, want({1, 2}, {1e30, -1e30}), {1, 1}).wrong == 2);
}

TEST_CASE("comparator: a non-finite reference must be matched exactly") {
  auto seen = t32({3}, {kNan, kInf, -kInf});
  CHECK(compare(&seen, want({3}, {kNan, kInf, -kInf}), {0, 0}).ok);
  seen = t32({3}, {0, kInf, kInf});
  auto c = compare(&seen, want({3}, {kNan, kInf, -kInf}), {1e9, 1e9});
  CHECK(c.wrong == 2);
}

TEST_CASE("comparator: signed zeros are equal, the tolerance edge passes, just past it fails") {
  auto seen = t32({2}, {-0.0, 0.0});
  CHECK(compare(&seen, want({2}, {0.0, -0.0}), {0, 0}).ok);
  seen = t32({1}, {1.5});  // |1.5 - 1| = 0.5 = atol + rtol * 1 (0.25 + 0.25): passes
  CHECK(compare(&seen, want({1}, {1.0}), {0.25, 0.25}).ok);
  seen = t32({1}, {1.5000001});
  CHECK_FALSE(compare(&seen, want({1}, {1.0}), {0.25, 0.25}).ok);
  seen = t32({1}, {-3.0});  // rtol scales with |reference|, not with the seen value
  CHECK(compare(&seen, want({1}, {-2.0}), {0, 0.5}).ok);
  CHECK_FALSE(compare(&seen, want({1}, {-2.0}), {0, 0.49}).ok);
}

TEST_CASE("comparator: shape, dtype and device are checked before any value") {
  auto seen = t32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto c = compare(&seen, want({3, 2}, {1, 2, 3, 4, 5, 6}), {1, 1});
  CHECK_FALSE(c.ok);
  CHECK(c.detail == "shape [2, 3] instead of [3, 2]");
  c = compare(&seen, Expected{{2, 3}, {1, 2, 3, 4, 5, 6}, "F64", ""}, {1, 1});
  CHECK(c.detail == "dtype float32 instead of float64");
  c = compare(&seen, Expected{{2, 3}, {1, 2, 3, 4, 5, 6}, "F32", "cuda:0"}, {1, 1}, "cpu");
  CHECK(c.detail == "device cpu instead of cuda:0");
  CHECK_FALSE(compare(nullptr, want({1}, {1}), {1, 1}).ok);
}

TEST_CASE("comparator: empty tensors match an empty reference of the same shape") {
  auto seen = t32({0, 5}, {});
  CHECK(compare(&seen, want({0, 5}, {}), {0, 0}).ok);
  CHECK_FALSE(compare(&seen, want({5, 0}, {}), {0, 0}).ok);
}

// ---- bounded readers, and their fuzz test --------------------------------------------------------------------
TEST_CASE("JSON from a worker is bounded in size and depth before it is parsed") {
  CHECK(parse_bounded(R"({"a": [1, {"b": "[[[["}]})", "t").is_object());  // brackets inside strings do not count
  CHECK_THROWS_WITH_AS(parse_bounded(std::string(100, '[') + std::string(100, ']'), "t"),
                       "t is nested more than 64 levels deep: refused", std::runtime_error);
  CHECK_THROWS_AS(parse_bounded(std::string(2000000, '['), "t"), std::runtime_error);  // deep, and never parsed
  CHECK_THROWS_AS(parse_bounded("{\"a\": 1", "t"), std::runtime_error);
  CHECK_THROWS_AS(parse_bounded("[1]", "t", JsonLimits{2, 64}), std::runtime_error);
  const json j = parse_bounded(R"({"a": 1})", "t");
  CHECK_THROWS_AS((void)j["missing"], std::out_of_range);  // undefined behaviour in nlohmann, an exception here
}

TEST_CASE("tensor files: overlapping entries and too many values are refused") {
  auto path = temp_path("alias.safetensors");
  write_bytes(path, header_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                R"("y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                std::string(16, '\0')));
  CHECK_THROWS_WITH_AS(read_safetensors(path), "tensor file has tensors whose data overlap", FormatError);
  write_bytes(path, header_file(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(16, '\0')));
  CHECK_THROWS_AS(read_safetensors(path, 1 << 20, 3), FormatError);
  CHECK(read_safetensors(path, 1 << 20, 4).at("x").values.size() == 4);
  std::remove(path.c_str());
}

TEST_CASE("fuzz: the judge's readers never crash on mutated input (bounded in time)") {
  std::mt19937_64 rng(20261204);
  const std::vector<std::string> seeds = {
      R"({"nonce": "abc", "group": "g", "status": "ok", "calls": [{"label": "x", "raised": true}], "n": 1.5e300})",
      header_file(
          R"({"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"I64","shape":[1],"data_offsets":[8,16]}})",
          std::string(16, '\1'))};
  auto path = temp_path("fuzz.bin");
  auto t0 = std::chrono::steady_clock::now();
  int runs = 0;
  // 3,000 mutated inputs, or 10 seconds on a busy machine, whichever comes first
  while (runs < 3000 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    std::string s = seeds[rng() % seeds.size()];
    for (int m = 0, n = 1 + rng() % 8; m < n && !s.empty(); ++m) {
      std::size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[at] = static_cast<char>(rng());
          break;  // flip a byte
        case 1:
          s.insert(at, std::string(1 + rng() % 64, "[{\"]}:,0-e"[rng() % 10]));
          break;  // insert structure
        case 2:
          s.erase(at, 1 + rng() % 8);
          break;  // cut
        default:
          s.insert(at, s.substr(rng() % s.size(), 1 + rng() % 32));  // duplicate a piece
      }
    }
    try {
      json j = parse_bounded(s, "fuzz");
      (void)j.dump();
    } catch (const std::exception&) {
    }
    write_bytes(path, s);
    try {
      (void)read_safetensors(path);
    } catch (const std::exception&) {
    }
    ++runs;
  }
  std::remove(path.c_str());
  MESSAGE("fuzzed both readers with " << runs << " inputs");
  CHECK(runs >= 200);
}

// ---- what comes out ----------------------------------------------------------------------------------------
TEST_CASE("quoted submission text cannot pass for a line of the judge's report") {
  std::string q = judge::quoted("all good\nscore 8/8: 5 passed\r\x1b[2Kscore 8/8");
  CHECK(q.find("\nscore") == std::string::npos);  // every further line is indented behind "    | "
  CHECK(q.find("\n    | score 8/8: 5 passed??[2Kscore 8/8") != std::string::npos);
  CHECK(q.find('\x1b') == std::string::npos);
  std::string flood(10000, 'x');
  CHECK(judge::quoted(flood).size() < 4200);
  CHECK(judge::quoted(flood).find("6000 more characters not shown") != std::string::npos);
}

TEST_CASE("gencode flags from CMake's architecture syntax") {
  CHECK(gencode_flags("75;90-real") == std::vector<std::string>{"-gencode=arch=compute_75,code=[sm_75,compute_75]",
                                                                "-gencode=arch=compute_90,code=sm_90"});
  CHECK(gencode_flags("75-virtual") == std::vector<std::string>{"-gencode=arch=compute_75,code=compute_75"});
  CHECK(gencode_flags(";90a-real;") == std::vector<std::string>{"-gencode=arch=compute_90a,code=sm_90a"});
  CHECK(gencode_flags("").empty());
}

TEST_CASE("the score counts passed rows; a skipped row counts for neither side; a missing row fails") {
  auto& s = Session::get();
  s.exercise.checks = {
      {"a", "A", "", 2, false}, {"b", "B", "", 3, false}, {"c", "C", "", 1, true}, {"d", "D", "", 4, false}};
  Row a{"a", "A", "", Status::Pass, 2, 2, true, "", "", ""};
  Row b{"b", "B", "", Status::Fail, 0, 3, true, "", "", ""};
  Row c{"c", "C", "", Status::Skip, 0, 1, true, "", "", ""};
  Row stray{"zz", "zz", "", Status::Fail, 0, 0, true, "not listed", "", ""};
  s.rows = {c, b, a, stray};  // in the order they ran; "d" never ran
  auto rows = final_rows(s);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].id == "a");  // the exercise's order, then rows it does not know
  CHECK(rows[3].id == "d");
  CHECK(rows[3].status == Status::Fail);
  CHECK(rows[3].detail.find("no result") != std::string::npos);
  CHECK(rows[4].id == "zz");
  auto sum = summarize(rows);
  CHECK(sum.score == 2);
  CHECK(sum.max_score == 9);  // 2 + 3 + 4: the skipped row's point is not in the total
  CHECK(sum.passed == 1);
  CHECK(sum.failed == 3);
  CHECK(sum.skipped == 1);
  s.rows.clear();
  s.exercise.checks.clear();
}

TEST_CASE("SHA-256 of evidence files: the standard's test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000, 'a')) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST_CASE("the points not graded are counted by reason, never dropped from the totals") {
  Row pass_cpu{"a", "A", "", Status::Pass, 2, 2, true, "", "", ""};
  Row skip_cuda{"b", "B", "", Status::Skip, 0, 3, true, "no device", "", "", kNeedsCuda};
  Row skip_cuda2{"c", "C", "", Status::Skip, 0, 4, true, "no device", "", "", kNeedsCuda};
  Row skip_other{"d", "D", "", Status::Skip, 0, 1, true, "one GPU", "", "", "needs two CUDA devices"};
  auto sum = summarize({pass_cpu, skip_cuda, skip_cuda2, skip_other});
  CHECK(sum.score == 2);
  CHECK(sum.max_score == 2);
  CHECK(sum.all_points == 10);
  CHECK(sum.not_graded == 8);
  CHECK(sum.not_graded_why.at(kNeedsCuda) == 7);
  CHECK(sum.not_graded_why.at("needs two CUDA devices") == 1);
  CHECK(not_graded_text(sum) ==
        "2 of 10 points graded: 7 not graded (needs a CUDA device), 1 not graded (needs two CUDA devices)");
  // --require-cuda: the same rows FAIL, still as not graded; now they count against the score
  Row req{"b", "B", "", Status::Fail, 0, 3, true, "not graded", "", "", kNeedsCuda};
  auto strict = summarize({pass_cpu, req});
  CHECK(strict.max_score == 5);
  CHECK(strict.failed == 1);
  CHECK(not_graded_text(strict) ==
        "2 of 5 points graded: 3 not graded (needs a CUDA device), counted as failed "
        "(--require-cuda)");
  CHECK(not_graded_text(summarize({pass_cpu})).empty());
}

TEST_CASE("a judge that crashed: its decided rows stand, the row it was deciding and every later one FAIL") {
  auto& s = Session::get();
  s.exercise.checks = {{"a", "A", "fix a", 1, false},
                       {"b", "B", "fix b", 2, false},
                       {"c", "C", "fix c", 3, false},
                       {"d", "D", "fix d", 4, true}};
  Row a{"a", "A", "fix a", Status::Pass, 1, 1, true, "fine", "", ""};
  Row d{"d", "D", "", Status::Skip, 0, 4, true, "no device", "", "", kNeedsCuda};
  json progress = {{"final", false},
                   {"deciding", "b"},
                   {"undecided", {"b", "c"}},
                   {"rows",
                    {row_json(a),
                     row_json(d),
                     // as write_progress records an undecided row: FAIL, never a pass it did not earn
                     {{"id", "b"}, {"status", "PASS"}, {"max_points", 2}}}}};
  auto rows = rows_after_crash(s, progress, "crashed deciding", "not decided");
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].status == Status::Pass);
  CHECK(rows[0].points == 1);
  CHECK(rows[1].status == Status::Fail);
  CHECK(rows[1].detail == "crashed deciding");
  CHECK(rows[1].hint.empty());  // not the student's to fix
  CHECK(rows[2].status == Status::Fail);
  CHECK(rows[2].detail == "not decided");
  CHECK(rows[3].status == Status::Skip);
  CHECK(rows[3].not_graded == kNeedsCuda);
  auto sum = summarize(rows);
  CHECK(sum.score == 1);
  CHECK(sum.failed == 2);
  // nothing readable recorded: nothing was decided
  auto none = rows_after_crash(s, json(), "crashed deciding", "not decided");
  REQUIRE(none.size() == 4);
  for (auto& r : none) CHECK((r.status == Status::Fail && r.detail == "not decided"));
  s.exercise.checks.clear();
}

TEST_CASE("submission code gets an allowlist of the host's environment, never the rest of it") {
  setenv("COURSE_TEST_HOST_SECRET", "host-secret-value", 1);
  setenv("NVCC_APPEND_FLAGS", "-DPLANTED", 1);
  setenv("LD_PRELOAD", "/nonexistent/planted.so", 1);
  auto env = submission_environment();
  CHECK(env.count("COURSE_TEST_HOST_SECRET") == 0);
  CHECK(env.count("NVCC_APPEND_FLAGS") == 0);
  CHECK(env.count("LD_PRELOAD") == 0);
  if (getenv("PATH")) CHECK(env.at("PATH") == getenv("PATH"));
  // what the process sees: the caller's settings only where allowed, HOME and the caches the run's own
  std::string scratch = temp_path("envdir");
  fs::create_directories(scratch);
  auto r = Sandbox::get().run(
      {{"/usr/bin/env"}, {{"PYTHONUNBUFFERED", "1"}, {"COURSE_TEST_HOST_SECRET", "again"}}, scratch, 10, 64 * 1024},
      scratch);
  INFO(r.describe() << ": " << r.err);
  CHECK(r.exited);
  CHECK(r.out.find("host-secret-value") == std::string::npos);
  CHECK(r.out.find("COURSE_TEST_HOST_SECRET") == std::string::npos);
  CHECK(r.out.find("NVCC_APPEND_FLAGS") == std::string::npos);
  CHECK(r.out.find("LD_PRELOAD") == std::string::npos);
  CHECK(r.out.find("PYTHONUNBUFFERED=1\n") != std::string::npos);
  CHECK(r.out.find("HOME=" + scratch + "\n") != std::string::npos);
  CHECK(r.out.find("USER=grader\n") != std::string::npos);
  CHECK(r.out.find("TORCHINDUCTOR_CACHE_DIR=" + scratch + "/.cache/torchinductor\n") != std::string::npos);
  fs::remove_all(scratch);
  unsetenv("COURSE_TEST_HOST_SECRET");
  unsetenv("NVCC_APPEND_FLAGS");
  unsetenv("LD_PRELOAD");
}

// ---- compiler errors read for a student (diagnostics.hpp). The outputs are g++ 12's and nvcc 13's, captured with the
// judge's flags (LC_ALL=C, -include of the precompiled header), their absolute paths shortened.
namespace {
DiagnosticsContext diag_context(std::map<std::string, std::string> files, const std::string& compiling) {
  DiagnosticsContext c;
  c.student_files = std::move(files);
  c.build_dir = "/out/work/build-default";
  c.include_dirs = {"/venv/site-packages/torch/include", "/venv/site-packages/torch/include/torch/csrc/api/include"};
  c.compiling = compiling;
  return c;
}
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
std::string nth_line(const std::string& s, int n) {
  std::size_t start = 0;
  for (int i = 0; i < n && start != std::string::npos; ++i) start = s.find('\n', start) + 1;
  return (start == std::string::npos || (start == 0 && n > 0)) ? "" : s.substr(start, s.find('\n', start) - start);
}
std::string lines_of(int n, const std::string& line) {
  std::string s;
  for (int i = 0; i < n; ++i) s += line + "\n";
  return s;
}
}  // namespace

TEST_CASE("compiler errors: g++'s error in AT_DISPATCH's lambda, through the precompiled header, repeated per dtype") {
  const std::string out =
      R"GCC(In file included from /venv/site-packages/torch/include/torch/headeronly/core/Dispatch_v2.h:3,
                 from /venv/site-packages/torch/include/c10/core/Scalar.h:25,
                 from /venv/site-packages/torch/include/ATen/core/TensorBody.h:17,
                 from /venv/site-packages/torch/include/ATen/core/jit_type.h:6,
                 from /venv/site-packages/torch/include/ATen/core/function_schema.h:6,
                 from /venv/site-packages/torch/include/ATen/core/op_registration/infer_schema.h:9,
                 from /venv/site-packages/torch/include/torch/library.h:62,
                 from /course/build/pch/course_pch.h:5:
src/mm16_cpu.cpp: In lambda function:
src/mm16_cpu.cpp:51:50: error: 'k' was not declared in this scope
   51 |           sum += static_cast<acc_t>(pa[i * sa0 + k * sa1]) * static_cast<acc_t>(pb[k * sb0 + j * sb1]);
      |                                                  ^
src/mm16_cpu.cpp: In lambda function:
src/mm16_cpu.cpp:51:50: error: 'k' was not declared in this scope
   51 |           sum += static_cast<acc_t>(pa[i * sa0 + k * sa1]) * static_cast<acc_t>(pb[k * sb0 + j * sb1]);
      |                                                  ^
src/mm16_cpu.cpp: In lambda function:
src/mm16_cpu.cpp:51:50: error: 'k' was not declared in this scope
   51 |           sum += static_cast<acc_t>(pa[i * sa0 + k * sa1]) * static_cast<acc_t>(pb[k * sb0 + j * sb1]);
      |                                                  ^
)GCC";
  std::string src =
      lines_of(50, "//") +
      "          sum += static_cast<acc_t>(pa[i * sa0 + k * sa1]) * static_cast<acc_t>(pb[k * sb0 + j * sb1]);\n";
  CompilerErrors e = read_compiler_errors(out, diag_context({{"mm16_cpu.cpp", src}}, "mm16_cpu.cpp"));
  REQUIRE(e.found);
  CHECK(e.first == "mm16_cpu.cpp:51:50: 'k' was not declared in this scope");
  CHECK(e.more == 0);  // the same error three times (float, double, half) is one error
  CHECK(first_line(e.text) == "mm16_cpu.cpp:51:50: error: 'k' was not declared in this scope");
  CHECK(nth_line(e.text, 1).find("   51 |           sum += ") == 0);
  CHECK(nth_line(e.text, 2) == "      |                                                  ^");
  CHECK(e.text.find("In file included from") == std::string::npos);
  CHECK(e.text.find("course_pch.h") == std::string::npos);
  CHECK(e.text.find("/venv") == std::string::npos);
}

TEST_CASE("compiler errors: an error in a library header leads with the student's line that required it") {
  const std::string out = R"GCC(In file included from /venv/site-packages/torch/include/ATen/core/function_schema.h:4,
                 from /venv/site-packages/torch/include/ATen/core/op_registration/infer_schema.h:9,
                 from /venv/site-packages/torch/include/torch/library.h:62,
                 from /course/build/pch/course_pch.h:5:
/venv/site-packages/torch/include/c10/util/StringUtil.h: In instantiation of 'std::ostream& c10::detail::_str(std::ostream&, const T&) [with T = Opaque; std::ostream = std::basic_ostream<char>]':
/venv/site-packages/torch/include/c10/util/StringUtil.h:97:14:   required from 'std::ostream& c10::detail::_str(std::ostream&, const T&, const Args& ...) [with T = const char*; Args = {Opaque}; std::ostream = std::basic_ostream<char>]'
/venv/site-packages/torch/include/c10/util/StringUtil.h:104:9:   required from 'static std::string c10::detail::_str_wrapper<Args>::call(const Args& ...) [with Args = {const char*, const Opaque&}; std::string = std::__cxx11::basic_string<char>]'
/venv/site-packages/torch/include/c10/util/StringUtil.h:141:66:   required from 'auto c10::str(const Args& ...) [with Args = {char [6], Opaque}]'
/venv/site-packages/torch/include/c10/util/Exception.h:512:20:   required from 'auto c10::detail::torchCheckMsgImpl(const char*, const Args& ...) [with Args = {char [6], Opaque}]'
src/b.cpp:5:3:   required from here
/venv/site-packages/torch/include/c10/util/StringUtil.h:70:8: error: no match for 'operator<<' (operand types are 'std::ostream' {aka 'std::basic_ostream<char>'} and 'const Opaque')
   70 |     ss << t;
      |     ~~~^~~~
In file included from /venv/site-packages/torch/include/c10/util/StringUtil.h:10:
/usr/include/c++/12/ostream:108:7: note: candidate: 'std::basic_ostream<_CharT, _Traits>::__ostream_type& std::basic_ostream<_CharT, _Traits>::operator<<(__ostream_type& (*)(__ostream_type&)) [with _CharT = char; _Traits = std::char_traits<char>; __ostream_type = std::basic_ostream<char>]'
  108 |       operator<<(__ostream_type& (*__pf)(__ostream_type&))
      |       ^~~~~~~~
/usr/include/c++/12/ostream:108:36: note:   no known conversion for argument 1 from 'const Opaque' to 'std::basic_ostream<char>::__ostream_type& (*)(std::basic_ostream<char>::__ostream_type&)' {aka 'std::basic_ostream<char>& (*)(std::basic_ostream<char>&)'}
  108 |       operator<<(__ostream_type& (*__pf)(__ostream_type&))
      |                  ~~~~~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~~~~~
/usr/include/c++/12/ostream:117:7: note: candidate: 'std::basic_ostream<_CharT, _Traits>::__ostream_type& std::basic_ostream<_CharT, _Traits>::operator<<(__ios_type& (*)(__ios_type&)) [with _CharT = char; _Traits = std::char_traits<char>; __ostream_type = std::basic_ostream<char>; __ios_type = std::basic_ios<char>]'
  117 |       operator<<(__ios_type& (*__pf)(__ios_type&))
      |       ^~~~~~~~
/usr/include/c++/12/ostream:117:32: note:   no known conversion for argument 1 from 'const Opaque' to 'std::basic_ostream<char>::__ios_type& (*)(std::basic_ostream<char>::__ios_type&)' {aka 'std::basic_ios<char>& (*)(std::basic_ios<char>&)'}
  117 |       operator<<(__ios_type& (*__pf)(__ios_type&))
      |                  ~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~
/usr/include/c++/12/ostream:127:7: note: candidate: 'std::basic_ostream<_CharT, _Traits>::__ostream_type& std::basic_ostream<_CharT, _Traits>::operator<<(std::ios_base& (*)(std::ios_base&)) [with _CharT = char; _Traits = std::char_traits<char>; __ostream_type = std::basic_ostream<char>]'
  127 |       operator<<(ios_base& (*__pf) (ios_base&))
      |       ^~~~~~~~
/usr/include/c++/12/ostream:127:30: note:   no known conversion for argument 1 from 'const Opaque' to 'std::ios_base& (*)(std::ios_base&)'
  127 |       operator<<(ios_base& (*__pf) (ios_base&))
      |                  ~~~~~~~~~~~~^~~~~~~~~~~~~~~~~
/usr/include/c++/12/ostream:166:7: note: candidate: 'std::basic_ostream<_CharT, _Traits>::__ostream_type& std::basic_ostream<_CharT, _Traits>::operator<<(long int) [with _CharT = char; _Traits = std::char_traits<char>; __ostream_type = std::basic_ostream<char>]'
  166 |       operator<<(long __n)
)GCC";
  const std::string src =
      "#include <ATen/core/Tensor.h>\nstruct Opaque { int x; };\nvoid f(const at::Tensor& a) {\n  Opaque o{1};\n"
      "  TORCH_CHECK(a.dim() == 2, \"bad: \", o);\n}\n";
  CompilerErrors e = read_compiler_errors(out, diag_context({{"b.cpp", src}}, "b.cpp"));
  REQUIRE(e.found);
  const std::string msg =
      "no match for 'operator<<' (operand types are 'std::ostream' {aka 'std::basic_ostream<char>'} "
      "and 'const Opaque')";
  CHECK(e.first == "b.cpp:5:3: " + msg);
  CHECK(first_line(e.text) == "b.cpp:5:3: error: " + msg);
  CHECK(nth_line(e.text, 1) == "    5 |   TORCH_CHECK(a.dim() == 2, \"bad: \", o);");  // from the student's file
  CHECK(nth_line(e.text, 2) == "      |   ^");
  CHECK(nth_line(e.text, 3) == "c10/util/StringUtil.h:70:8: error: " + msg);  // shown relative to torch's include dir
  CHECK(nth_line(e.text, 4) == "   70 |     ss << t;");
  CHECK(e.text.find("In file included from") == std::string::npos);
  // the notes into library headers: one line each, the first four, then how many more
  CHECK(e.text.find("/usr/include/c++/12/ostream:108:7: note: candidate:") != std::string::npos);
  CHECK(e.text.find("  108 |") == std::string::npos);
  CHECK(e.text.find("(3 more notes of the compiler on this error, in library headers, not shown)") !=
        std::string::npos);
}

TEST_CASE("compiler errors: an error in the student's own header keeps the student's include chain") {
  const std::string out = R"GCC(In file included from src/mm16_cuda.cpp:10:
src/mm16_kernel.h:10:67: error: 'int64_tt' has not been declared
   10 | void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_tt M, int64_t N, int64_t K,
      |                                                                   ^~~~~~~~
)GCC";
  CompilerErrors e =
      read_compiler_errors(out, diag_context({{"mm16_cuda.cpp", ""}, {"mm16_kernel.h", ""}}, "mm16_cuda.cpp"));
  REQUIRE(e.found);
  CHECK(e.first == "mm16_kernel.h:10:67: 'int64_tt' has not been declared");
  CHECK(first_line(e.text) == "mm16_kernel.h:10:67: error: 'int64_tt' has not been declared");
  CHECK(e.text.find("In file included from mm16_cuda.cpp:10:") != std::string::npos);
}

TEST_CASE("compiler errors: nvcc's device-code errors keep their form; the column comes from the caret") {
  const std::string out = R"EDG(src/mm16_kernel.cu(28): error: identifier "col0" is undefined
        const int64_t ar = row0 + r, ak = k0 + q, bk = k0 + r, bc = col0 + q;
                                                                    ^

src/mm16_kernel.cu(30): error: ambiguous "?" operation: second operand of type "<error-type>" can be converted to third operand type "__half", and vice versa
        sb[e] = (bk < K && bc < N) ? b[bk * N + bc] : __float2half(0.0f);
                                                    ^

src/mm16_kernel.cu(43): error: identifier "col0" is undefined
      const int64_t r = row0 + e / kTile, q = col0 + e % kTile;
                                              ^

3 errors detected in the compilation of "src/mm16_kernel.cu".
)EDG";
  std::string src =
      lines_of(27, "//") + "      const int64_t ar = row0 + r, ak = k0 + q, bk = k0 + r, bc = col0 + q;\n";
  CompilerErrors e = read_compiler_errors(out, diag_context({{"mm16_kernel.cu", src}}, "mm16_kernel.cu"));
  REQUIRE(e.found);
  CHECK(e.first == "mm16_kernel.cu:28:67: identifier \"col0\" is undefined");
  CHECK(e.more == 2);
  CHECK(first_line(e.text) == "mm16_kernel.cu(28): error: identifier \"col0\" is undefined");
  CHECK(e.text.find("errors detected in the compilation") == std::string::npos);
  // where EDG printed the line otherwise than the file has it (rebuilt from macros), no column is made up
  e = read_compiler_errors(out, diag_context({{"mm16_kernel.cu", lines_of(30, "// other")}}, "mm16_kernel.cu"));
  CHECK(e.first == "mm16_kernel.cu:28: identifier \"col0\" is undefined");
  const std::string instantiated =
      "src/k.cu(60): error: expression must have class type but it has type \"float\"\n"
      "                                  T twice(T x) { return x.twice(); }\n"
      "                                                        ^\n"
      "          detected during instantiation of \"T twice(T) [with T=float]\" at line 61\n\n"
      "1 error detected in the compilation of \"src/k.cu\".\n";
  e = read_compiler_errors(instantiated, diag_context({{"k.cu", ""}}, "k.cu"));
  CHECK(e.first == "k.cu:60: expression must have class type but it has type \"float\"");
  CHECK(e.text.find("detected during instantiation") != std::string::npos);
}

TEST_CASE("compiler errors: the linker's undefined reference names the student's file and the symbol") {
  const std::string out =
      "/usr/bin/ld: /out/work/build-default/mm16_cuda.cpp.o: in function `mm16_cuda(at::Tensor const&, at::Tensor "
      "const&)':\n"
      "mm16_cuda.cpp:(.text+0x137d): undefined reference to `mm16_wmma_launch(__half const*, __half const*, float*, "
      "long, long, long, CUstream_st*)'\n"
      "/usr/bin/ld: mm16_cuda.cpp:(.text+0x1400): undefined reference to `mm16_wmma_launch(__half const*, __half "
      "const*, float*, long, long, long, CUstream_st*)'\n"
      "/usr/bin/ld: mm16_cuda.cpp:(.text+0x1500): undefined reference to `helper()'\n"
      "collect2: error: ld returned 1 exit status\n";
  CompilerErrors e = read_compiler_errors(out, diag_context({{"mm16_cuda.cpp", ""}, {"mm16_kernel.cu", ""}}, ""));
  REQUIRE(e.found);
  CHECK(e.first ==
        "mm16_cuda.cpp: undefined reference to `mm16_wmma_launch(__half const*, __half const*, float*, long, "
        "long, long, CUstream_st*)'");
  CHECK(e.more == 1);  // the same symbol from another place counts once; helper() is the other
  CHECK(first_line(e.text) == "mm16_cuda.cpp.o: in function `mm16_cuda(at::Tensor const&, at::Tensor const&)':");
  CHECK(e.text.find("/out/work") == std::string::npos);
  CHECK(e.text.find("collect2") == std::string::npos);
}

TEST_CASE("compiler errors: output with no error the judge can read is left to the raw log") {
  CHECK_FALSE(read_compiler_errors("", diag_context({}, "a.cpp")).found);
  CHECK_FALSE(read_compiler_errors("Killed\n", diag_context({}, "a.cpp")).found);
  CompilerErrors e = read_compiler_errors(
      "c++: fatal error: Killed signal terminated program cc1plus\n"
      "compilation terminated.\n",
      diag_context({{"a.cpp", ""}}, "a.cpp"));
  CHECK(e.first == "a.cpp: Killed signal terminated program cc1plus");  // no place: the source being compiled
}

TEST_CASE("compiler errors: hostile output (long lines, odd bytes, a flood) is read without a crash, bounded") {
  std::mt19937 rng(7);
  std::string flood;
  for (int i = 0; i < 5000; ++i)
    flood += "src/a.cpp:" + std::to_string(i + 1) + ":1: error: e" + std::to_string(i) + "\n";
  CompilerErrors e = read_compiler_errors(flood, diag_context({{"a.cpp", "x\n"}}, "a.cpp"));
  CHECK(e.first == "a.cpp:1:1: e0");
  CHECK(e.more == 4999);
  CHECK(std::count(e.text.begin(), e.text.end(), '\n') <= 61);
  std::string noise(1 << 20, 'x');
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int j = 0, n = rng() % 400; j < n; ++j) s += "(:) \n|^0a9#`'/"[rng() % 14];
    read_compiler_errors(s, diag_context({{"a.cpp", s}}, "a.cpp"));
  }
  read_compiler_errors(noise + ": error: " + noise, diag_context({{"a.cpp", ""}}, "a.cpp"));
}

TEST_CASE("compiler errors: of the link's undefined references, a C++ one is an error and a C one left to the loader") {
  // ld -z defs --warn-unresolved-symbols, captured: OpenMP (libgomp, loaded with libtorch_cpu), Python's C API (the
  // worker process), cuBLAS (loaded with libtorch_cuda), and a C++ function declared and defined nowhere
  const std::string out =
      "/usr/bin/ld: /out/work/build-default/a.cpp.o: in function `f()':\n"
      "a.cpp:(.text+0x6918): warning: undefined reference to `omp_get_thread_num'\n"
      "/usr/bin/ld: a.cpp:(.text+0x691f): warning: undefined reference to `PyGILState_Ensure'\n"
      "/usr/bin/ld: /out/work/build-default/a.cpp.o: in function `g()':\n"
      "a.cpp:(.text+0x6935): warning: undefined reference to `declared_only(long)'\n"
      "/usr/bin/ld: /out/work/build-default/a.cpp.o: in function `h(cublasContext*)':\n"
      "a.cpp:(.text+0x6950): warning: undefined reference to `cublasDestroy_v2'\n";
  const std::string cxx = undefined_cxx_references(out);
  CHECK(cxx ==
        "/usr/bin/ld: /out/work/build-default/a.cpp.o: in function `g()':\n"
        "a.cpp:(.text+0x6935): undefined reference to `declared_only(long)'\n");
  CompilerErrors e = read_compiler_errors(cxx, diag_context({{"a.cpp", ""}}, ""));
  CHECK(e.first == "a.cpp: undefined reference to `declared_only(long)'");
  CHECK(undefined_cxx_references(
            out.substr(0, out.find("/usr/bin/ld: /out/work/build-default/a.cpp.o: in function `g"))) == "");
  CHECK(undefined_cxx_references("x.cpp:(.text+0x1): warning: undefined reference to `vtable for Shape'\n") ==
        "x.cpp:(.text+0x1): undefined reference to `vtable for Shape'\n");
  CHECK(undefined_cxx_references("x.cpp:(.text+0x1): warning: undefined reference to `ns::counter'\n") != "");
  CHECK(undefined_cxx_references("") == "");
}

TEST_CASE("machine faults: a sign in text buys a retry; 'not graded' needs evidence the submission cannot make up") {
  CHECK(fault_sign_in("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB") ==
        MachineFault::GpuMemory);
  CHECK(fault_sign_in("AcceleratorError: CUDA error: out of memory") == MachineFault::GpuMemory);
  CHECK(fault_sign_in("CUDA error: CUDA-capable device(s) is/are busy or unavailable") == MachineFault::GpuLost);
  CHECK(fault_sign_in("mm16: out of range") == MachineFault::None);
  CHECK(fault_sign_in("std::bad_alloc") == MachineFault::None);  // host allocations fail inside the RLIMIT: the code's
  CHECK(host_memory_sign(true, 3, 4) == MachineFault::HostMemory);
  CHECK(host_memory_sign(true, 3, 3) == MachineFault::None);   // SIGKILL without an OOM kill: not the machine's
  CHECK(host_memory_sign(false, 3, 4) == MachineFault::None);  // another process was the victim
  CHECK(host_memory_sign(true, -1, 4) == MachineFault::None);  // the count could not be read before
  GpuMemory busy = parse_gpu_memory("140000, 143771\n");
  REQUIRE(busy.seen);
  CHECK(busy.used_mib == 140000);
  CHECK(!parse_gpu_memory("[N/A], [N/A]").seen);
  CHECK(!parse_gpu_memory("").seen);
  CHECK(machine_fault_reason(MachineFault::GpuMemory, busy).find("held 136.7 of 140.4 GiB") != std::string::npos);
  CHECK(machine_fault_reason(MachineFault::GpuMemory, parse_gpu_memory("600, 143771")) == "");  // free: its own doing
  GpuMemory none;
  none.error = "nvidia-smi is not on this machine's PATH";
  CHECK(machine_fault_reason(MachineFault::GpuMemory, none) == "");  // no GPU to be seen: the words were its own
  CHECK(machine_fault_reason(MachineFault::GpuLost, none) == "");
  GpuMemory lost;
  lost.error = "nvidia-smi exited with status 15: Unable to determine the device handle for GPU0: GPU is lost";
  CHECK(machine_fault_reason(MachineFault::GpuLost, lost).find("lost or unavailable") != std::string::npos);
  CHECK(machine_fault_reason(MachineFault::GpuLost, busy) == "");  // nvidia-smi sees it: the code's own error
  CHECK(!machine_fault_reason(MachineFault::HostMemory, none).empty());
}

TEST_CASE("machine faults: a GPU that admits one process, held by another, is the machine's") {
  GpuMemory held = parse_gpu_memory("600, 143771, Exclusive_Process");
  REQUIRE(held.seen);
  CHECK(held.compute_mode == "Exclusive_Process");
  CHECK(machine_fault_reason(MachineFault::GpuLost, held) == "");  // nobody else on it: the code's own error
  held.processes = 1;
  CHECK(machine_fault_reason(MachineFault::GpuLost, held).find("one process at a time") != std::string::npos);
  GpuMemory shared = parse_gpu_memory("600, 143771, Default");
  shared.processes = 3;
  CHECK(machine_fault_reason(MachineFault::GpuLost, shared) == "");  // a shared GPU: others do not make it busy
}

TEST_CASE("memory cgroups: a killed judge's are removed by the next one; a live judge's, or one in use, are kept") {
  // plain folders stand in for the cgroup tree: rmdir behaves alike (a folder with something in it stays)
  std::string tree = temp_path("cgroups");
  for (const char* d : {"course-judge-111/run-3", "course-judge-222/run-0", "course-judge-333/run-1",
                        "course-judge-444", "course-judge-x1", "other-cgroup"})
    fs::create_directories(tree + "/" + d);
  std::ofstream(tree + "/course-judge-333/run-1/cgroup.procs") << "4242\n";  // a process still in it: not removable
  auto alive = [](pid_t pid) { return pid == 222; };
  CHECK(remove_stale_judge_cgroups(tree, alive) == 2);  // 111 (with its run) and 444
  CHECK(!fs::exists(tree + "/course-judge-111"));
  CHECK(!fs::exists(tree + "/course-judge-444"));
  CHECK(fs::exists(tree + "/course-judge-222/run-0"));  // its judge is running
  CHECK(fs::exists(tree + "/course-judge-333/run-1"));  // not empty
  CHECK(fs::exists(tree + "/course-judge-x1"));         // not a judge's name
  CHECK(fs::exists(tree + "/other-cgroup"));
  CHECK(remove_stale_judge_cgroups(tree + "/missing", alive) == 0);
  fs::remove_all(tree);
  // a killed judge not yet reaped is a zombie: gone for this purpose
  pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  for (int i = 0; i < 200 && process_alive(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(!process_alive(child));
  CHECK(::kill(child, 0) == 0);  // what kill() alone would have called alive
  waitpid(child, nullptr, 0);
  CHECK(process_alive(getpid()));
}

TEST_CASE("phase.json: the judge says where a grade is, atomically, in the form its schema declares") {
  const fs::path out = temp_path("_phase");
  fs::remove_all(out);
  fs::create_directories(out);
  const json schema = read_json_bounded(fs::path(COURSE_SOURCE_DIR) / "autograder" / "schemas" / "phase.schema.json");
  auto phase = [&] { return read_json_bounded(out / "phase.json"); };
  write_phase(out, "compiling", "compiling mm16_cpu.cpp (1/3)");
  CHECK(phase() == json{{"phase", "compiling"}, {"text", "compiling mm16_cpu.cpp (1/3)"}});
  CHECK(schema_mismatch(schema, phase()) == "");
  CHECK_FALSE(fs::exists(out / "phase.json.tmp"));  // renamed over phase.json, never left beside it
  write_phase(out, "checks", "running checks (mm16)");
  CHECK(phase()["text"] == "running checks (mm16)");
  // the session's end writes "done" (Session::finish, whatever ran before it)
  auto& s = Session::get();
  const Config saved = s.cfg;
  s.cfg.out_dir = out;
  s.cfg.work_dir = out / "work";
  s.finish();
  s.cfg = saved;
  CHECK(phase() == json{{"phase", "done"}, {"text", "done"}});
  CHECK(schema_mismatch(schema, phase()) == "");
  CHECK(schema_mismatch(schema, json{{"phase", "linking"}}) != "");                // text is required
  CHECK(schema_mismatch(schema, json{{"phase", "running"}, {"text", ""}}) != "");  // one of the five phases
  write_phase(out / "missing", "done", "done");  // no folder: nothing written, nothing thrown
  CHECK_FALSE(fs::exists(out / "missing"));
  fs::remove_all(out);
}

TEST_CASE("JSON Schema subset: each keyword the schema files use, and the first mismatch with its path") {
  const json schema = json::parse(R"({
    "type": "object", "additionalProperties": false, "required": ["n", "list"],
    "properties": {
      "n": {"type": "integer", "minimum": 0, "maximum": 10},
      "list": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"$ref": "#/$defs/item"}},
      "kind": {"enum": ["a", "b"]}, "ok": {"const": true}, "name": {"type": "string", "minLength": 1, "maxLength": 3},
      "either": {"type": ["array", "object"], "items": {"type": "string"}, "additionalProperties": false,
                 "properties": {"error": {"type": "string"}}},
      "map": {"type": "object", "additionalProperties": {"type": "number"}}
    },
    "$defs": {"item": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}
  })");
  const json good = json::parse(R"({"n": 3, "list": [{"id": "x", "more": 1}], "kind": "b", "ok": true, "name": "ab",
                                    "either": ["f"], "map": {"t": 0.5}})");
  CHECK(schema_mismatch(schema, good) == "");
  auto with = [&](const std::string& key, json value) {
    json j = good;
    j[key] = std::move(value);
    return schema_mismatch(schema, j);
  };
  CHECK(with("n", 3.0) == "");  // an integer is a number without a fractional part
  CHECK(with("n", 3.5) == "at $.n: expected integer, found number");
  CHECK(with("n", true) == "at $.n: expected integer, found boolean");
  CHECK(with("n", 11) == "at $.n: 11 is above the maximum 10");
  CHECK(with("n", -1) == "at $.n: -1 is below the minimum 0");
  CHECK(with("list", json::array()) == "at $.list: fewer than 1 items");
  CHECK(with("list", json::parse(R"([{"id": "x"}, {"id": 2}])")) == "at $.list[1].id: expected string, found integer");
  CHECK(with("list", json::parse(R"([{}])")) == "at $.list[0]: the key 'id' is missing");
  CHECK(with("kind", "c") == "at $.kind: \"c\" is not one of [\"a\",\"b\"]");
  CHECK(with("ok", false) == "at $.ok: expected true, found false");
  CHECK(with("name", "") == "at $.name: a string shorter than 1 characters");
  CHECK(with("either", json{{"error", "raised"}}) == "");
  CHECK(with("either", json{{"flags", 1}}) == "at $.either: the key 'flags' is not declared");
  CHECK(with("either", "x") == "at $.either: expected [\"array\",\"object\"], found string");
  CHECK(with("map", json{{"t", "slow"}}) == "at $.map.t: expected number, found string");
  CHECK(with("extra", 1) == "at $: the key 'extra' is not declared");
  json missing = good;
  missing.erase("n");
  CHECK(schema_mismatch(schema, missing) == "at $: the key 'n' is missing");
  // a keyword outside the subset is a course bug, never silently ignored
  CHECK_THROWS_AS(schema_mismatch(json{{"oneOf", json::array()}}, good), std::logic_error);
  CHECK_THROWS_AS(schema_mismatch(json{{"$ref", "other.json"}}, good), std::logic_error);
}

TEST_CASE("a worker's answer is held to its group's schema: the envelope always, the report when it says ok") {
  const fs::path root = COURSE_SOURCE_DIR;
  json answer = json::parse(R"({"nonce": "abc", "group": "harness", "status": "ok", "timing": {"import": 0.5},
                                "tests": [{"id": "T.test_a", "outcome": "passed"},
                                          {"id": "T.test_b", "outcome": "failed", "message": "AssertionError"}]})");
  CHECK(answer_mismatch(root, "harness", answer) == "");
  json error = {{"nonce", "abc"},
                {"group", "harness"},
                {"status", "error"},
                {"error", "ImportError: x"},
                {"error_in_submission", true}};
  CHECK(answer_mismatch(root, "harness", error) == "");  // an error answer has no report to hold
  json odd = answer;
  odd["tests"][1]["outcome"] = "passed, honestly";
  CHECK(answer_mismatch(root, "harness", odd) ==
        "the worker's answer does not match autograder/schemas/worker/harness.schema.json: at $.tests[1].outcome: "
        "\"passed, honestly\" is not one of [\"passed\",\"failed\",\"error\",\"skipped\"]; nothing from it is trusted");
  json no_status = answer;
  no_status.erase("status");
  CHECK(answer_mismatch(root, "harness", no_status) ==
        "the worker's answer does not match autograder/schemas/worker/response.schema.json: at $: the key 'status' is "
        "missing; nothing from it is trusted");
  json partial = {{"nonce", "abc"}, {"group", "profile"}, {"status", "ok"}, {"trace", "trace.json"}};
  CHECK(answer_mismatch(root, "profile", partial).find("profile.schema.json: at $: the key 'answers' is missing") !=
        std::string::npos);
  CHECK(answer_mismatch(root, "no_such_group", json{{"nonce", "a"}, {"group", "no_such_group"}, {"status", "ok"}})
            .find("the judge has no declaration of the group 'no_such_group'") != std::string::npos);
}

TEST_CASE("a stable-ABI package's PACKAGE/NAME.py is read from that one folder, never through a link") {
  namespace fs = std::filesystem;
  const fs::path dir = temp_path("_submission");
  fs::remove_all(dir);
  fs::create_directories(dir / "pkg");
  write_bytes((dir / "op.cpp").string(), "int x;\n");
  write_bytes((dir / "pkg" / "__init__.py").string(), "from . import _C\n");
  auto none = [](const std::string&) { return false; };
  SubmissionRead r = read_submission(dir, {"op.cpp", "pkg/__init__.py"}, none);
  REQUIRE(r.ok);
  REQUIRE(r.files.size() == 2);
  CHECK(r.files[1].name == "pkg/__init__.py");
  CHECK(r.files[1].content == "from . import _C\n");
  // the folder a link to another: refused by name, nothing read through it
  fs::rename(dir / "pkg", dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", dir / "pkg");
  r = read_submission(dir, {"op.cpp", "pkg/__init__.py"}, none);
  CHECK_FALSE(r.ok);
  CHECK(r.failure.find("pkg is a symbolic link, not a folder") != std::string::npos);
  // the file in it a link: refused as any source is
  fs::remove(dir / "pkg");
  fs::create_directories(dir / "pkg");
  fs::create_symlink(dir / "elsewhere" / "__init__.py", dir / "pkg" / "__init__.py");
  r = read_submission(dir, {"op.cpp", "pkg/__init__.py"}, none);
  CHECK_FALSE(r.ok);
  CHECK(r.failure.find("pkg/__init__.py is a symbolic link") != std::string::npos);
  // missing: named with its folder
  fs::remove(dir / "pkg" / "__init__.py");
  r = read_submission(dir, {"op.cpp", "pkg/__init__.py"}, none);
  CHECK(r.failure.find("has no pkg/__init__.py") != std::string::npos);
  // two folders down is not a package file: a course bug, refused
  r = read_submission(dir, {"op.cpp", "pkg/sub/x.py"}, none);
  CHECK(r.failure.find("invalid source file") != std::string::npos);
  fs::remove_all(dir);
}
