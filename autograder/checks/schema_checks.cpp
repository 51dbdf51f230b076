// Chapter 2: the schemas of mm16, mm16_scaled and the out variant mm16.out, and their tags, as the dispatcher sees
// them (the worker's "inspect" group: every operator of the course namespace with its schema and torch.Tag names).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "../judge/grading.hpp"

using namespace judge;

namespace {
const char* const kOutSchema = "course::mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)";

json course_ops() {
  const GroupResult& g = Session::get().require("inspect");
  json ops = json::array();
  for (auto& op : g.report.value("ops", json::array()))
    if (op.is_object() && op.contains("name") && op["name"].is_string() && op.contains("schema") &&
        op["schema"].is_string())
      ops.push_back(op);
  return ops;
}

// "course::mm16" for the empty overload name, "course::mm16.out" otherwise: how torch names an overload
std::string qualified(const json& op) {
  const std::string overload = op.value("overload", "");
  return op["name"].get<std::string>() + (overload.empty() ? "" : "." + overload);
}

const json* find_op(const json& ops, const std::string& name, const std::string& overload) {
  for (auto& op : ops)
    if (op["name"] == name && op.value("overload", "") == overload) return &op;
  return nullptr;
}

std::vector<std::string> tags_of(const json& op) {
  std::vector<std::string> tags;
  for (auto& t : op.value("tags", json::array()))
    if (t.is_string()) tags.push_back(t.get<std::string>());
  return tags;
}

bool has_tag(const json& op, const std::string& tag) {
  const auto tags = tags_of(op);
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

std::string tag_list(const json& op) {
  if (op.contains("tags_error") && op["tags_error"].is_string())
    return "(the worker could not read its tags: " + op["tags_error"].get<std::string>() + ")";
  std::string s;
  for (auto& t : tags_of(op)) s += (s.empty() ? "" : ", ") + t;
  return "[" + s + "]";
}

// what is declared, for a row that did not find its operator
std::string inventory(const json& ops) {
  std::string registered;
  for (auto& op : ops) registered += (registered.empty() ? "" : ", ") + qualified(op);
  std::string elsewhere;
  for (auto& s : Session::get().require("inspect").report.value("elsewhere", json::array()))
    if (s.is_string()) elsewhere += (elsewhere.empty() ? "" : "; ") + s.get<std::string>();
  std::string seen = registered.empty() ? "no operator in the namespace 'course'" : "only " + registered;
  if (!elsewhere.empty()) seen += "; in other namespaces: " + elsewhere;
  return seen;
}

// torch prints schemas canonically (e.g. a float default 1.0 as "1."), so the comparison is exact.
void check_schema(const std::string& name, const std::string& expected) {
  const json ops = course_ops();
  if (const json* op = find_op(ops, "course::" + name, "")) {
    const std::string seen = (*op)["schema"].get<std::string>();
    if (seen == expected) return pass(seen);
    return fail("course::" + name + " is registered, but with a different schema", expected, seen);
  }
  fail("course::" + name + " is not registered in the course's namespace 'course'", expected, inventory(ops));
}
}  // namespace

TEST_SUITE("02_schema") {
  TEST_CASE("schema.mm16") { check_schema("mm16", "course::mm16(Tensor a, Tensor b) -> Tensor"); }
  TEST_CASE("schema.mm16_scaled") {
    check_schema("mm16_scaled",
                 "course::mm16_scaled(Tensor a, Tensor b, *, float alpha=1., Tensor? bias=None) -> Tensor");
  }

  // The out variant by PyTorch's convention (aten::mm.out): the overload `out` of the functional operator, its
  // output a keyword-only Tensor(a!) that it returns, tagged torch.Tag.out. torch's tooling finds it by that name and
  // that tag (torch.library's generated autograd refuses grad for it, fake tensors get the out argument back).
  TEST_CASE("schema.mm16.out") {
    const json ops = course_ops();
    const std::string want = std::string(kOutSchema) + ", tagged out";
    if (const json* op = find_op(ops, "course::mm16", "out")) {
      const std::string seen = (*op)["schema"].get<std::string>();
      if (seen != kOutSchema) return fail("course::mm16.out is registered, but with a different schema", want, seen);
      if (!has_tag(*op, "out"))
        return fail(
            "course::mm16.out is not tagged torch.Tag.out: PyTorch's tooling does not treat it as an out "
            "variant",
            want, seen + ", tags " + tag_list(*op));
      return pass(seen + ", tags " + tag_list(*op));
    }
    // an out variant under another name: a separate operator (mm16_out), or another overload name
    for (auto& op : ops) {
      const std::string schema = op["schema"].get<std::string>();
      if (schema.find("(a!)") == std::string::npos) continue;
      return fail(qualified(op) +
                      " looks like the out variant, but PyTorch's convention is the overload `out` of "
                      "course::mm16 (like aten::mm.out), which its tooling looks up by that name",
                  want, schema + ", tags " + tag_list(op));
    }
    fail("course::mm16.out is not registered in the course's namespace 'course'", want, inventory(ops));
  }

  // The tags: each operator that keeps the PT2 contract says so (torch.Tag.pt2_compliant_tag, as aten::mm and
  // aten::mm.out do); only the out variant carries torch.Tag.out.
  TEST_CASE("schema.tags") {
    const json ops = course_ops();
    const std::pair<const char*, const char*> wanted[] = {
        {"course::mm16", ""}, {"course::mm16_scaled", ""}, {"course::mm16", "out"}};
    std::string seen, problems;
    for (auto& [name, overload] : wanted) {
      const std::string shown = std::string(name) + (*overload ? std::string(".") + overload : "");
      const json* op = find_op(ops, name, overload);
      if (!op) {
        seen += (seen.empty() ? "" : "; ") + shown + " not declared";
        problems += (problems.empty() ? "" : "; ") + shown + " is not declared (see its schema row)";
        continue;
      }
      seen += (seen.empty() ? "" : "; ") + shown + " " + tag_list(*op);
      if (!has_tag(*op, "pt2_compliant_tag"))
        problems += (problems.empty() ? "" : "; ") + shown + " lacks pt2_compliant_tag";
      if (*overload == '\0' && has_tag(*op, "out"))
        problems += (problems.empty() ? "" : "; ") + shown + " is functional but tagged out";
    }
    const std::string want =
        "course::mm16 and course::mm16_scaled tagged pt2_compliant_tag; course::mm16.out tagged out and "
        "pt2_compliant_tag";
    if (problems.empty()) return pass(seen);
    fail(problems, want, seen);
  }
}
