// Chapter 2: the schemas of mm16 and its two siblings, as the dispatcher sees them.
#include <doctest/doctest.h>

#include "../judge/grading.hpp"

using namespace judge;

namespace {
// torch prints schemas canonically (e.g. a float default 1.0 as "1."), so the comparison is exact.
void check_schema(const std::string& name, const std::string& expected) {
  const GroupResult& g = Session::get().require("inspect");
  const json ops = g.report.value("ops", json::array());
  std::string registered;
  for (auto& op : ops) {
    if (!op.is_object() || !op["schema"].is_string()) continue;
    registered += (registered.empty() ? "" : ", ") + op["name"].get<std::string>();
    if (op["name"] == "course::" + name && op.value("overload", "") == "") {
      std::string seen = op["schema"].get<std::string>();
      if (seen == expected) return pass(seen);
      return fail("course::" + name + " is registered, but with a different schema", expected, seen);
    }
  }
  std::string elsewhere;
  for (auto& s : g.report.value("elsewhere", json::array()))
    if (s.is_string()) elsewhere += (elsewhere.empty() ? "" : "; ") + s.get<std::string>();
  std::string seen = registered.empty() ? "no operator in the namespace 'course'" : "only " + registered;
  if (!elsewhere.empty()) seen += "; in other namespaces: " + elsewhere;
  fail("course::" + name + " is not registered in the course's namespace 'course'", expected, seen);
}
}  // namespace

TEST_SUITE("02_schema") {
  TEST_CASE("schema.mm16") { check_schema("mm16", "course::mm16(Tensor a, Tensor b) -> Tensor"); }
  TEST_CASE("schema.mm16_scaled") {
    check_schema("mm16_scaled", "course::mm16_scaled(Tensor a, Tensor b, *, float alpha=1., Tensor? bias=None) -> Tensor");
  }
  TEST_CASE("schema.mm16_out") {
    check_schema("mm16_out", "course::mm16_out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)");
  }
}
