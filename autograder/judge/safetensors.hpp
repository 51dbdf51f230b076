// Reading and writing the safetensors format (an 8-byte little-endian header length, a JSON header, raw data),
// the only way tensors cross between the worker and the judge. Everything read is validated: a worker is untrusted.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace judge {

struct Tensor {
  std::string dtype;  // safetensors name: F16, F32, F64, I64, BOOL
  std::vector<int64_t> shape;
  std::vector<double> values;  // row-major, converted to double (exact for every dtype above but large I64)
  int64_t numel() const;
};

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bounded: the file's size, the number of tensors, the values decoded in all; tensors whose data overlap are refused.
constexpr std::size_t kMaxEntries = 4096;
std::map<std::string, Tensor> read_safetensors(const std::string& path, std::size_t max_bytes = 128u << 20,
                                               std::size_t max_values = 16u << 20);
void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors);

// IEEE half precision conversions (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace judge
