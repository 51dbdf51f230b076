// The verdicts several course::mm16 rows share (mm16_rows.hpp): products against the judge's float64 product, the
// views' layout, the contract's invalid calls, opcheck's answers, cuobjdump's listings.
#include "mm16_rows.hpp"

#include <cctype>
#include <set>

#include "cuobjdump.hpp"

namespace judge::mm16 {

namespace {

// Why the output the caller holds changed after the call returned ("" when it did not): an op that returns a buffer
// it keeps (one per shape, to save an allocation) overwrites its earlier results with its later ones.
std::string output_kept_problem(const GroupResult& g, const Call& c) {
  const Tensor* then = tensor(g, c.name);
  if (!then) return "";  // no output: call_problem said so
  Comparison cmp =
      compare(tensor(g, c.name + ".at_end"), Expected{then->shape, then->values, then->dtype, ""}, Tolerance{0, 0});
  return cmp.ok ? ""
                : c.text() +
                      ": the output changed after the call returned (read again after the later calls: " + cmp.detail +
                      "); the op writes a later result into a tensor it returned before";
}

// The facts of `arrived` (groups of spellings, case ignored) that `message` names in no spelling, e.g.
// "5 and 4"; "" when it names all.
std::string unnamed(const std::string& message, const json& arrived) {
  auto lower = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  const std::string text = lower(message);
  std::vector<std::string> missing;
  for (const auto& group : arrived) {
    bool named = false;
    for (const auto& spelling : group)
      named = named || text.find(lower(spelling.get<std::string>())) != std::string::npos;
    std::string spellings = group[0].get<std::string>();  // Half (float16)
    for (std::size_t i = 1; i < group.size(); ++i)
      spellings += (i == 1 ? " (" : "/") + group[i].get<std::string>() + (i + 1 == group.size() ? ")" : "");
    if (!named) missing.push_back(spellings);
  }
  std::string out;
  for (std::size_t i = 0; i < missing.size(); ++i)
    out += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  return out;
}

// --- views: the operands were laid out as the call says -----------------------------------------------------------
std::vector<int64_t> view_strides(const Matrix& m, View v) {
  switch (v) {
    case View::Contiguous:
      return {m.cols, 1};
    case View::Transposed:
      return {1, m.rows};
    case View::ColumnSliced:
      return {2 * m.cols, 2};
    case View::Offset:
      return {m.cols, 1};
    case View::InNanBuffer:
      return {m.cols + kNanMargin, 1};
  }
  return {};
}

// The layout the worker reported for the call's operands, against its views: evidence that they were not contiguous.
std::string layout_problem(const GroupResult& g, const Plan& plan, const Call& c) {
  std::string why;
  json o = answer(g, c.name, "call", &why);
  if (o.is_null()) return why;
  if (!c.same_tensors_as.empty()) {  // the tensors of an earlier call, as that call left them
    const Call& before = plan.call(c.same_tensors_as);
    if (!inputs_problem(g, before).empty())
      return c.text() + ": not run as asked: the op's earlier call changed these tensors (" + before.text() + ")";
  }
  if (o["raised"] == true && !o.contains("operand_strides"))
    return "";  // the worker could not make the call: call_problem says why
  if (!o.contains("operand_strides") || !o.contains("operand_offsets"))
    return c.name + ": the operands' layout was not reported";
  auto sa = view_strides(c.a, c.view_a), sb = view_strides(c.b, c.view_b);
  std::vector<int64_t> want{sa[0], sa[1], sb[0], sb[1]};
  std::vector<int64_t> offsets{c.view_a == View::Offset ? c.K() : 0, c.view_b == View::Offset ? c.N() : 0};
  if (o["operand_strides"].get<std::vector<int64_t>>() != want ||
      o["operand_offsets"].get<std::vector<int64_t>>() != offsets)
    return c.name + ": the operands reached the op as strides " + o["operand_strides"].dump() + ", offsets " +
           o["operand_offsets"].dump() + ", not the views asked for";
  return "";
}

}  // namespace

std::string lines(const std::vector<std::string>& items, std::size_t at_most) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < at_most; ++i) out += "\n    " + items[i];
  if (items.size() > at_most) out += "\n    ... and " + std::to_string(items.size() - at_most) + " more";
  return out;
}

std::string shapes_of(const std::vector<const Call*>& calls) {
  std::set<std::string> seen;
  std::string out;
  for (auto* c : calls) {
    std::string s = shape_text({c->M(), c->K()}) + "@" + shape_text({c->K(), c->N()});
    if (seen.insert(s).second) out += (out.empty() ? "" : ", ") + s;
  }
  return out;
}

bool answered(const GroupResult& g) {
  if (g.ok) return true;
  fail(g.failure, "the worker runs your operator on the judge's inputs and answers");
  return false;
}

std::string call_problem(const GroupResult& g, const Call& c) {
  std::string why;
  json o = answer(g, c.name, "call", &why);
  if (o.is_null()) return c.text() + ": " + why;
  if (o["raised"] == true) return c.text() + ": " + raised_text(o);
  Comparison cmp = compare(tensor(g, c.name), c.expected(), c.tolerance());
  return cmp.ok ? "" : c.text() + ": " + cmp.detail;
}

// Why the op left an operand other than it found it ("" when it did not): a and b are inputs, not outputs. In C++ a
// Tensor is a handle, so an in-place op through `const at::Tensor&` (a.mul_(), b.t_()) reaches the caller's tensor.
std::string inputs_problem(const GroupResult& g, const Call& c) {
  std::string out;
  for (auto [label, m] : {std::pair<const char*, const Matrix*>{"a", &c.a}, {"b", &c.b}}) {
    Comparison cmp = compare(tensor(g, c.name + "." + label + "_after"),
                             Expected{{m->rows, m->cols}, m->v, c.dtype, ""}, Tolerance{0, 0});
    if (!cmp.ok) out += std::string(out.empty() ? "" : "; ") + "the op changed its input " + label + ": " + cmp.detail;
  }
  return out.empty() ? out : c.text() + ": " + out;
}

std::string doubled_problem(const GroupResult& g, const std::string& name, const Call& c) {
  Expected ref = c.expected();
  for (auto& v : ref.values) v *= 2;
  const Tolerance tol = c.tolerance();
  Comparison cmp = compare(tensor(g, name), ref, {2 * tol.atol, tol.rtol});
  return cmp.ok ? "" : "2 * (" + c.text() + "): " + cmp.detail;
}

void products_row(const GroupResult& g, const std::vector<const Call*>& calls, const std::string& what,
                  const std::string& expected) {
  if (!answered(g)) return;
  std::vector<std::string> problems;
  std::set<std::string> raised;  // the distinct exceptions: a stub raises the same one for every call
  for (auto* c : calls) {
    std::string p = call_problem(g, *c), why;
    json o = answer(g, c->name, "call", &why);
    if (!o.is_null() && o["raised"] == true) raised.insert(raised_text(o));
    if (p.empty()) p = inputs_problem(g, *c);
    if (p.empty()) p = output_kept_problem(g, *c);
    if (!p.empty()) problems.push_back(p);
  }
  if (problems.empty()) return pass(std::to_string(calls.size()) + " " + what + " right: " + shapes_of(calls));
  if (raised.size() == 1 && problems.size() == calls.size())
    return fail("all " + std::to_string(calls.size()) + " " + what + " " + *raised.begin(), expected,
                "every call (" + shapes_of(calls) + ") " + *raised.begin());
  fail(std::to_string(problems.size()) + " of " + std::to_string(calls.size()) + " " + what + " wrong", expected,
       lines(problems));
}

std::string tolerance_text() {
  return "within atol = rtol = 1e-3 * max(1, sqrt(K/16)) for float16 inputs (1e-5 float32, 1e-9 float64)";
}

ContractOutcome contract_outcome(const std::string& device) {
  ContractOutcome out;
  const Plan& plan = contract_plan(device);
  const GroupResult& g = run(plan);
  if (!g.ok) {
    out.not_run = "the invalid calls did not leave the process running: " + g.failure;
    return out;
  }
  if (g.report.value("survived", false) != true) {
    out.not_run = "the worker did not report that it survived the calls";
    return out;
  }
  for (auto& p : plan.probes) {
    std::string label = p["label"].get<std::string>(), why;
    json o = answer(g, p["name"].get<std::string>(), "invalid", &why);
    if (o.is_null()) {
      out.problems.push_back(label + ": " + why);
      continue;
    }
    bool raised = o["raised"] == true;
    if (p["valid"] == true) {
      if (raised)
        out.problems.push_back(label + ": " + raised_text(o) + " (an operator that always raises proves nothing)");
      continue;
    }
    ++out.invalid;
    if (!raised)
      out.problems.push_back(label + ": returned " +
                             (o.contains("shape") ? "a " + o.value("dtype", std::string("?")) + " tensor of shape " +
                                                        shape_text(o["shape"].get<std::vector<int64_t>>())
                                                  : std::string("a value")) +
                             " instead of raising");
    else if (const std::string message = o.value("message", std::string()); message.empty())
      out.problems.push_back(label + ": raised " + o.value("type", std::string("?")) + " with an empty message");
    else if (message.rfind("Dimension out of range", 0) == 0)  // c10's wrap_dim
      out.problems.push_back(label + ": " + raised_text(o) +
                             ": that is torch's own error for a dimension the tensor "
                             "does not have (a size(i) out of range), not a check of the operator's");
    else if (std::string missing = unnamed(message, p["arrived"]); !missing.empty())
      out.problems.push_back(label + ": " + raised_text(o) + ": the message does not name what arrived: " + missing);
  }
  return out;
}

void views_row(const GroupResult& g, const Plan& plan, const std::vector<const Call*>& calls) {
  if (!answered(g)) return;
  std::vector<std::string> problems;
  for (auto* c : calls) {
    std::string p = layout_problem(g, plan, *c);
    if (p.empty()) p = call_problem(g, *c);
    if (p.empty()) p = inputs_problem(g, *c);
    if (p.empty()) p = output_kept_problem(g, *c);
    if (!p.empty()) problems.push_back(p);
  }
  if (problems.empty())
    return pass(std::to_string(calls.size()) +
                " products of transposed, sliced and offset views right: " + shapes_of(calls));
  fail(
      "wrong products for non-contiguous inputs (contiguous ones are checked by the forward row)",
      "a @ b for transposed operands (strides (1, rows)), every other column of a wider tensor (strides (2 * cols, 2)) "
      "and views with a storage offset, " +
          tolerance_text() + "; the views left as they were",
      lines(problems));
}

std::string opcheck_problems(const GroupResult& g, const Plan& plan, const std::vector<std::string>& of) {
  std::vector<std::string> problems;
  for (auto& name : of) {
    const Call& c = plan.call(name);
    std::string why, where = c.text();
    json asked;  // the probe as the plan sent it: which tests, and whether the sample requires grad
    for (auto& p : plan.probes)
      if (p.value("name", "") == "opcheck." + name) asked = p;
    const std::vector<std::string> tests =
        asked.value("test_utils", std::vector<std::string>{"test_schema", "test_autograd_registration",
                                                           "test_faketensor", "test_aot_dispatch_dynamic"});
    json o = answer(g, "opcheck." + name, "opcheck", &why);
    if (o.is_null()) {
      problems.push_back(where + ": " + why);
      continue;
    }
    const bool grad = asked.value("requires_grad", false);
    if (o.value("requires_grad", json()) != json::array({grad, grad}))
      problems.push_back(where + ": the sample's requires_grad was not " + (grad ? "true" : "false") +
                         " (the judge asked it)");
    if (o["raised"] == true) {
      problems.push_back(where + ": opcheck " + raised_text(o));
      continue;
    }
    const json results = o.value("results", json::object());
    for (const std::string& t : tests) {
      if (!results.contains(t))
        problems.push_back(where + ": " + t + " did not run");
      else if (results[t] != "SUCCESS") {
        std::string msg = results[t].is_string() ? results[t].get<std::string>() : results[t].dump();
        auto nl = msg.find('\n');
        if (nl != std::string::npos && nl < 400) msg = msg.substr(0, nl);
        if (msg.size() > 400) msg = msg.substr(0, 400) + "...";
        problems.push_back(where + ": " + t + " failed: " + msg);
      }
    }
    // numbers: opcheck compares the op with itself, never with the right answer; the judge does that
    Comparison cmp = compare(tensor(g, "opcheck." + name), c.expected(), c.tolerance());
    if (!cmp.ok) problems.push_back(where + ": the op's output on the sample is wrong: " + cmp.detail);
  }
  return lines(problems, 12);
}

Listing cuobjdump(const fs::path& lib, const std::vector<std::string>& flags) {
  auto c = run_cuobjdump(lib, flags);
  return Listing{c.ok, c.text, c.why};
}

std::vector<const Call*> forward_calls(const Plan& p) { return p.with_role(Role::Forward); }

}  // namespace judge::mm16
