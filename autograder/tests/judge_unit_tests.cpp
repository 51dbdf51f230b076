// Unit tests of the judge's own machinery: the tensor format it reads from untrusted workers, and the process
// runner that must contain them.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "../judge/process.hpp"
#include "../judge/safetensors.hpp"

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
  CHECK(float_to_half(1.0f + 1.0f / 2048) == 0x3c00);       // a tie rounds to even
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
  auto r = run_process({{"/bin/sh", "-c", "head -c 5000000 /dev/zero; echo done >&2"}, current_environment(), "", 30, 4096});
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
