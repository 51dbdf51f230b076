#include "safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include "json.hpp"

namespace judge {

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

namespace {
std::size_t element_size(const std::string& dtype) {
  if (dtype == "F16") return 2;
  if (dtype == "F32") return 4;
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "BOOL") return 1;
  throw FormatError("unsupported dtype '" + dtype + "'");
}
}  // namespace

float half_to_float(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (x >> 16) & 0x8000;
  if (std::isnan(f)) return sign | 0x7e00;  // not a value comparison: float32 -> float16 encoding
  float a = std::fabs(f);                   // not a value comparison: the magnitude to encode
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -25)) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1 + 15;
  if (exp <= 0) {  // subnormal: units of 2^-24
    float q = std::nearbyint(std::ldexp(a, 24));
    return sign | static_cast<uint16_t>(q);
  }
  float q = std::nearbyint(std::ldexp(a, 10 - (e - 1)));  // 1024..2048
  uint32_t m = static_cast<uint32_t>(q);
  if (m == 2048) {
    m = 1024;
    ++exp;
  }
  if (exp >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(exp << 10) | static_cast<uint16_t>(m - 1024);
}

namespace {

// One stored value of `dtype` (a dtype element_size() accepted) at `q`, as a double.
double decode_value(const std::string& dtype, const unsigned char* q) {
  if (dtype == "F16") {
    uint16_t h;
    std::memcpy(&h, q, 2);
    return half_to_float(h);
  }
  if (dtype == "F32") {
    float f;
    std::memcpy(&f, q, 4);
    return f;
  }
  if (dtype == "F64") {
    double d;
    std::memcpy(&d, q, 8);
    return d;
  }
  if (dtype == "I64") {
    int64_t v;
    std::memcpy(&v, q, 8);
    return static_cast<double>(v);
  }
  return *q ? 1.0 : 0.0;
}

}  // namespace

std::map<std::string, Tensor> read_safetensors(const std::string& path, std::size_t max_bytes, std::size_t max_values) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("cannot open " + path);
  in.seekg(0, std::ios::end);
  std::size_t file_size = static_cast<std::size_t>(in.tellg());
  in.seekg(0);
  if (file_size > max_bytes) throw FormatError("tensor file is larger than the limit");
  if (file_size < 8) throw FormatError("tensor file is too short");
  uint64_t header_len = 0;
  unsigned char lenbuf[8];
  in.read(reinterpret_cast<char*>(lenbuf), 8);
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | lenbuf[i];
  if (header_len > file_size - 8) throw FormatError("tensor file header length is out of range");
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  std::size_t data_size = file_size - 8 - header_len;
  std::vector<unsigned char> data(data_size);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data_size));
  if (!in) throw FormatError("tensor file is truncated");

  json j;
  try {
    j = parse_bounded(header, "the tensor file's header", JsonLimits{header.size(), 8});
  } catch (const std::exception& e) {
    throw FormatError(e.what());
  }
  if (!j.is_object()) throw FormatError("tensor file header is not a JSON object");
  if (j.size() > kMaxEntries)
    throw FormatError("tensor file has more than " + std::to_string(kMaxEntries) + " tensors");
  std::map<std::string, Tensor> out;
  // Each tensor's bytes are its own: ranges that overlap (many names over one large range) would multiply what the
  // judge decodes, so they are refused, and the decoded total is bounded.
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::size_t decoded = 0;
  for (auto& [name, meta] : j.items()) {
    if (name == "__metadata__") continue;
    if (!meta.is_object() || !meta.contains("dtype") || !meta.contains("shape") || !meta.contains("data_offsets"))
      throw FormatError("tensor '" + name + "' has an incomplete header entry");
    Tensor t;
    t.dtype = meta["dtype"].get<std::string>();
    std::size_t es = element_size(t.dtype);
    int64_t numel = 1;
    for (auto& d : meta["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (1 << 28))
        throw FormatError("tensor '" + name + "' has an invalid shape");
      t.shape.push_back(d.get<int64_t>());
      numel *= t.shape.back();
      if (numel > (int64_t{1} << 28)) throw FormatError("tensor '" + name + "' is too large");
    }
    auto& off = meta["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw FormatError("tensor '" + name + "' has invalid data offsets");
    std::size_t b = off[0].get<std::size_t>(), e = off[1].get<std::size_t>();
    if (b > e || e > data_size || e - b != static_cast<std::size_t>(numel) * es)
      throw FormatError("tensor '" + name + "' data offsets do not match its dtype and shape");
    decoded += static_cast<std::size_t>(numel);
    if (decoded > max_values)
      throw FormatError("tensor file holds more than " + std::to_string(max_values) + " values in all");
    if (e > b) ranges.push_back({b, e});
    const unsigned char* p = data.data() + b;
    t.values.resize(static_cast<std::size_t>(numel));
    for (int64_t i = 0; i < numel; ++i) t.values[i] = decode_value(t.dtype, p + i * es);
    out.emplace(name, std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) throw FormatError("tensor file has tensors whose data overlap");
  return out;
}

void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors) {
  json header = json::object();
  std::vector<unsigned char> data;
  for (auto& [name, t] : tensors) {
    std::size_t es = element_size(t.dtype);
    if (static_cast<int64_t>(t.values.size()) != t.numel())
      throw FormatError("tensor '" + name + "' shape/value mismatch");
    std::size_t begin = data.size();
    data.resize(begin + t.values.size() * es);
    unsigned char* p = data.data() + begin;
    for (std::size_t i = 0; i < t.values.size(); ++i) {
      double v = t.values[i];
      if (t.dtype == "F16") {
        uint16_t h = float_to_half(static_cast<float>(v));
        std::memcpy(p + i * 2, &h, 2);
      } else if (t.dtype == "F32") {
        float f = static_cast<float>(v);
        std::memcpy(p + i * 4, &f, 4);
      } else if (t.dtype == "F64")
        std::memcpy(p + i * 8, &v, 8);
      else if (t.dtype == "I64") {
        int64_t x = static_cast<int64_t>(v);
        std::memcpy(p + i * 8, &x, 8);
      } else
        p[i] = v != 0;
    }
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  while ((h.size() + 8) % 8) h.push_back(' ');  // the format pads the header so data starts aligned
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  unsigned char lenbuf[8];
  uint64_t len = h.size();
  for (int i = 0; i < 8; ++i) lenbuf[i] = static_cast<unsigned char>(len >> (8 * i));
  out.write(reinterpret_cast<char*>(lenbuf), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) throw FormatError("cannot write " + path);
}

}  // namespace judge
