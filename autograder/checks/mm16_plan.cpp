// The judge's side of the protocol with the mm16 worker: a plan's calls go into the request as stored tensors and
// views, the worker runs the plan's probes (as is, or under compute-sanitizer), and every answer is held to
// mm16_protocol.json before a row reads it. The plans themselves are drawn in mm16_plan_inputs.cpp; what a call's
// answer must equal is in mm16_expected.cpp.
#include "mm16_plan.hpp"

#include <limits>
#include <stdexcept>

namespace judge::mm16 {

namespace {

// --- the request: each operand is stored so that its view (mm16_protocol.json "views") is the matrix the judge chose
Tensor stored(const Matrix& m, View v, const std::string& dtype) {
  constexpr double kJunk = 64;  // what a kernel that ignores the view reads instead (exact in float16)
  Tensor t;
  t.dtype = dtype;
  switch (v) {
    case View::Contiguous:
      t.shape = {m.rows, m.cols};
      t.values = m.v;
      break;
    case View::Transposed: {
      Matrix mt = transpose(m);
      t.shape = {mt.rows, mt.cols};
      t.values = mt.v;
      break;
    }
    case View::ColumnSliced:
      t.shape = {m.rows, 2 * m.cols};
      t.values.assign(static_cast<std::size_t>(m.rows * 2 * m.cols), kJunk);
      for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t j = 0; j < m.cols; ++j) t.values[static_cast<std::size_t>(i * 2 * m.cols + 2 * j)] = m.at(i, j);
      break;
    case View::Offset:
      t.shape = {m.rows + 1, m.cols};
      t.values.assign(static_cast<std::size_t>(m.cols), kJunk);
      t.values.insert(t.values.end(), m.v.begin(), m.v.end());
      break;
    case View::InNanBuffer: {
      const int64_t cols = m.cols + kNanMargin;
      t.shape = {m.rows + kNanMargin, cols};
      t.values.assign(static_cast<std::size_t>(t.shape[0] * cols), std::numeric_limits<double>::quiet_NaN());
      for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t j = 0; j < m.cols; ++j) t.values[static_cast<std::size_t>(i * cols + j)] = m.at(i, j);
      break;
    }
  }
  return t;
}

json operand(const std::string& tensor_name, View v) { return {{"tensor", tensor_name}, {"view", view_name(v)}}; }

// --- mm16_protocol.json: what each probe's answer may hold ---------------------------------------------------------
const json& protocol() {
  static json p =
      read_json_bounded(Session::get().cfg.course_root / "autograder" / "schemas" / "worker" / "mm16_protocol.json");
  return p;
}

std::string field_problem(const json& v, std::string type) {
  if (type == "bool") return v.is_boolean() ? "" : "is not a bool";
  if (type == "string") return v.is_string() ? "" : "is not a string";
  if (type == "int") return v.is_number_integer() ? "" : "is not an integer";
  if (type == "object") return v.is_object() ? "" : "is not an object";
  const char* item = type == "ints" ? "int" : type == "bools" ? "bool" : type == "strings" ? "string" : nullptr;
  if (!item) return "has an undeclared type " + type;
  if (!v.is_array()) return "is not a list";
  for (auto& x : v)
    if (!field_problem(x, item).empty()) return "holds an item that is not " + std::string(item);
  return "";
}

}  // namespace

const char* view_name(View v) {
  switch (v) {
    case View::Contiguous:
      return "contiguous";
    case View::Transposed:
      return "transposed";
    case View::ColumnSliced:
      return "column_sliced";
    case View::Offset:
      return "offset";
    case View::InNanBuffer:
      return "in_nan_buffer";
  }
  return "?";
}

const Call& Plan::call(const std::string& name) const {
  for (auto& c : calls)
    if (c.name == name) return c;
  throw std::logic_error("the plan has no call " + name + " (a grader bug)");
}

std::vector<const Call*> Plan::with_role(Role r) const {
  std::vector<const Call*> out;
  for (auto& c : calls)
    if (c.role == r) out.push_back(&c);
  return out;
}

const Call& Plan::add(Call c) {
  inputs[c.name + ".a"] = stored(c.a, c.view_a, c.dtype);
  inputs[c.name + ".b"] = stored(c.b, c.view_b, c.dtype);
  json p = {{"kind", "call"},
            {"name", c.name},
            {"device", c.device},
            {"a", operand(c.name + ".a", c.view_a)},
            {"b", operand(c.name + ".b", c.view_b)}};
  if (!c.same_tensors_as.empty()) p["same_tensors_as"] = c.same_tensors_as;
  probes.push_back(p);
  calls.push_back(std::move(c));
  return calls.back();
}

const GroupResult& run(const Plan& plan, const std::string& variant) {
  json args = plan.request_args();
  if (plan.gpu) args["judge_gpu"] = true;
  return Session::get().group("mm16", args, plan.inputs, variant);
}

const GroupResult& run_in(const Plan& plan, const std::string& python) {
  json args = plan.request_args();
  if (plan.gpu) args["judge_gpu"] = true;
  args["judge_python"] = python;
  return Session::get().group("mm16", args, plan.inputs);
}

const GroupResult& run_sanitized(const Plan& plan, const std::string& tool) {
  auto& s = Session::get();
  json args = plan.request_args();
  args["judge_gpu"] = true;
  args["judge_wrapper"] = {s.toolchain.value("compute_sanitizer", ""),
                           "--tool",
                           tool,
                           "--error-exitcode",
                           std::to_string(kSanitizerFoundErrors),
                           "--print-limit",
                           "20",
                           "--log-file",
                           tool + ".log"};
  // Without torch's caching allocator every tensor is its own allocation, so a read one element past an input
  // leaves it and the tool sees it (inside a cached block it would not).
  args["judge_env"] = {{"PYTORCH_NO_CUDA_MEMORY_CACHING", "1"}};
  args["judge_timeout_s"] = 4 * s.cfg.worker_timeout_s;  // the tool slows every kernel and torch's start
  return s.group("mm16", args, plan.inputs);
}

json answer(const GroupResult& g, const std::string& name, const std::string& kind, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return json();
  };
  if (!g.ok) return fail(g.failure);
  if (!g.report.contains(name)) return fail(name + ": no answer (missing)");
  const json& a = g.report[name];
  if (!a.is_object()) return fail(name + ": the answer is not an object");
  const json& probes = protocol().at("probes");
  if (!probes.contains(kind)) throw std::logic_error("mm16_protocol.json declares no probe " + kind);
  json fields = probes[kind].at("report");
  if (fields.is_string()) fields = protocol().at(fields.get<std::string>());
  for (auto& [key, value] : a.items())
    if (!fields.contains(key)) return fail(name + ": undeclared field '" + key + "' (see mm16_protocol.json)");
  for (auto& [key, type] : fields.items()) {
    std::string t = type.get<std::string>();
    bool optional = !t.empty() && t.back() == '?';
    if (optional) t.pop_back();
    if (!a.contains(key)) {
      if (!optional) return fail(name + ": field '" + key + "' is missing");
      continue;
    }
    std::string p = field_problem(a[key], t);
    if (!p.empty()) return fail(name + ": field '" + key + "' " + p);
  }
  return a;
}

const Tensor* tensor(const GroupResult& g, const std::string& name) {
  auto it = g.tensors.find(name);
  return it == g.tensors.end() ? nullptr : &it->second;
}

std::string raised_text(const json& e) {
  std::string msg =
      e.is_object() && e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
  auto nl = msg.find('\n');
  if (nl != std::string::npos) msg = msg.substr(0, nl);
  if (msg.size() > 300) msg = msg.substr(0, 300) + "...";
  std::string type =
      e.is_object() && e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "an exception";
  return "raised " + type + ": " + msg;
}

}  // namespace judge::mm16
