#include "report.hpp"

#include "sandbox.hpp"

#include <doctest/doctest.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace judge {

// ---- the doctest reporter that turns test cases into rows ---------------------------------------------------
namespace {
struct RowReporter : doctest::IReporter {
  explicit RowReporter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& tc) override {
    auto& s = Session::get();
    Row r;
    r.id = tc.m_name;
    if (auto* spec = s.exercise.find_check(r.id)) {
      r.title = spec->title;
      r.hint = spec->hint;
      r.max_points = spec->points;
    } else {
      r.title = r.id;
    }
    s.rows.push_back(r);
    s.current = &s.rows.back();
    write_progress(s);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_exception(const doctest::TestCaseException& e) override {
    Row* r = Session::get().current;
    if (r && !r->verdict_given) {
      r->verdict_given = true;
      r->status = Status::Fail;
      r->detail = e.error_string.c_str();
    }
  }
  void log_assert(const doctest::AssertData& a) override {
    Row* r = Session::get().current;
    if (!a.m_failed || !r || r->verdict_given) return;
    r->verdict_given = true;
    r->status = Status::Fail;
    r->detail = std::string("assertion failed: ") + a.m_expr + " (" + a.m_decomp.c_str() + ")";
  }
  void test_case_end(const doctest::CurrentTestCaseStats& st) override {
    auto& s = Session::get();
    Row* r = s.current;
    if (!r) return;
    if (st.failure_flags && r->status == Status::Pass) {
      r->status = Status::Fail;
      r->detail = "an assertion failed after the check passed: " + r->detail;
    }
    if (!r->verdict_given) {
      r->status = Status::Fail;
      r->detail = "the check ended without a verdict (a grader bug: please report it)";
    }
    if (!r->machine_fault.empty()) {  // the machine spoiled a run this row read: its verdict says nothing of the code
      r->detail = "not graded: " + r->machine_fault + " (the check said: " + r->detail + ")";
      r->status = Status::Skip;
      r->not_graded = r->machine_fault;
    } else if (!r->retry_note.empty()) {
      r->detail += " (" + r->retry_note + ")";
    }
    if (!s.exercise.find_check(r->id)) {
      r->status = Status::Fail;
      r->detail = "check '" + r->id + "' is not listed in exercise.json (a course bug)";
    }
    r->points = r->status == Status::Pass ? r->max_points : 0;
    s.current = nullptr;
    write_progress(s);
  }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_REPORTER("rows", 1, RowReporter);

// `judge --list-checks`: the name of every TEST_CASE compiled into the judge, one per line (the integrity check
// compares them with the catalog: a check without a test case, or a test case no exercise lists, fails it).
struct NamesReporter : RowReporter {
  explicit NamesReporter(const doctest::ContextOptions& o) : RowReporter(o) {}
  void report_query(const doctest::QueryData& q) override {
    for (unsigned i = 0; i < q.num_data; ++i) std::printf("%s\n", q.data[i]->m_name);
  }
};
REGISTER_REPORTER("names", 1, NamesReporter);

std::string fmt_points(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, p == static_cast<long long>(p) ? "%.0f" : "%.1f", p);
  return buf;
}

std::string one_line(std::string s, std::size_t width) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (s.size() > width) s = s.substr(0, width - 3) + "...";
  return s;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t')
          o += ' ';
        else
          o += static_cast<char>(c);
    }
  }
  return o;
}

const char* status_word(Status s) { return s == Status::Pass ? "PASS" : s == Status::Fail ? "FAIL" : "SKIPPED"; }

std::string failure_text(const Row& r) {
  std::string t = quoted(r.detail);
  if (!r.expected.empty()) t += "\n  expected: " + quoted(r.expected);
  if (!r.seen.empty()) t += "\n  seen:     " + quoted(r.seen);
  if (!r.hint.empty()) t += "\n  hint:     " + r.hint;
  return t;
}
}  // namespace

// Text that may come from the submission (compiler output, the worker's last lines) is quoted: control characters
// (carriage returns, terminal escapes) become '?', and every line after the first starts with "  | ", so nothing a
// submission prints can pass for a line of the judge's own report (such as a forged "score 8/8").
std::string quoted(const std::string& text) {
  constexpr std::size_t kMax = 4000;  // a flood of output stays a flood in the log, not in the report
  std::string s = text.size() > kMax ? text.substr(0, kMax) : text;
  std::string o;
  for (unsigned char c : s) {
    if (c == '\n')
      o += "\n    | ";
    else if (c < 0x20 && c != '\t')
      o += '?';
    else if (c == 0x7f)
      o += '?';
    else
      o += static_cast<char>(c);
  }
  if (text.size() > kMax) o += "\n    | ... (" + std::to_string(text.size() - kMax) + " more characters not shown)";
  return o;
}

// One line when every protection is on; otherwise a loud list of what is off and why.
template <class Paint>
std::string protections_text(Paint paint) {
  auto& box = Sandbox::get();
  if (box.protections().empty()) return "";
  if (box.all_on())
    return "sandbox: all " + std::to_string(box.protections().size()) +
           " protections on (bubblewrap: no network, solutions not mounted; unprivileged uid; limits)\n";
  std::string t = "\n" + paint(Status::Fail, "WARNING") +
                  ": graded with protections OFF; a submission could forge, "
                  "read or disturb more than usual:\n";
  for (auto& p : box.protections())
    if (!p.on) t += "  OFF  " + p.id + ": " + p.what + " (" + p.reason + ")\n";
  std::string on;
  for (auto& p : box.protections())
    if (p.on) on += (on.empty() ? "" : ", ") + p.id;
  return t + "  on:  " + on + "\n";
}

namespace {
// The exercise's checks in its order, each from `ran` where it has a row there, otherwise from `missing(spec)`; then
// the rows of `ran` the exercise does not list (already failed by the reporter).
template <class Missing>
std::vector<Row> in_exercise_order(const Exercise& ex, const std::vector<Row>& ran, Missing missing) {
  std::vector<Row> out;
  for (auto& spec : ex.checks) {
    const Row* found = nullptr;
    for (auto& r : ran)
      if (r.id == spec.id) found = &r;
    if (found) {
      out.push_back(*found);
    } else {
      Row r;
      r.id = spec.id;
      r.title = spec.title;
      r.hint = spec.hint;
      r.max_points = spec.points;
      r.status = Status::Fail;
      r.detail = missing(spec);
      out.push_back(r);
    }
  }
  for (auto& r : ran)
    if (!ex.find_check(r.id)) out.push_back(r);
  return out;
}
}  // namespace

std::vector<Row> final_rows(const Session& s) {
  return in_exercise_order(s.exercise, s.rows, [](const CheckSpec&) {
    return std::string("no result: this check did not run (a filter excluded it, or the grader stopped early)");
  });
}

void write_progress(const Session& s) {
  if (s.cfg.out_dir.empty()) return;
  std::vector<Row> decided;
  for (auto& r : s.rows)
    if (&r != s.current) decided.push_back(r);
  json undecided = json::array();
  auto rows = in_exercise_order(s.exercise, decided, [&](const CheckSpec& spec) {
    undecided.push_back(spec.id);
    return std::string("not decided yet: the grade is still running, or stopped before this check ended");
  });
  json extra = {
      {"final", false}, {"undecided", undecided}, {"deciding", s.current ? json(s.current->id) : json(nullptr)}};
  // written beside, then renamed over rows.json: a reader (or a judge that dies mid-write) never sees half a file
  std::error_code ec;
  fs::create_directories(s.cfg.out_dir, ec);
  fs::path tmp = s.cfg.out_dir / "rows.json.progress";
  {
    std::ofstream out(tmp);
    out << render_rows_json(s, rows, summarize(rows), extra);
    if (!out) return;
  }
  fs::rename(tmp, s.cfg.out_dir / "rows.json", ec);
}

std::vector<Row> rows_after_crash(const Session& s, const json& progress, const std::string& deciding_detail,
                                  const std::string& later_detail) {
  std::vector<std::string> undecided;
  std::string deciding;
  std::vector<Row> decided;
  if (progress.is_object() && progress.contains("rows") && progress["rows"].is_array()) {
    if (progress.contains("undecided") && progress["undecided"].is_array())
      for (auto& id : progress["undecided"])
        if (id.is_string()) undecided.push_back(id.get<std::string>());
    if (progress.contains("deciding") && progress["deciding"].is_string())
      deciding = progress["deciding"].get<std::string>();
    for (auto& j : progress["rows"]) {
      if (!j.is_object()) continue;
      Row r = row_from_json(j);
      bool open = r.id == deciding || std::find(undecided.begin(), undecided.end(), r.id) != undecided.end();
      if (!open && !r.id.empty()) decided.push_back(r);
    }
  }
  auto rows = in_exercise_order(
      s.exercise, decided, [&](const CheckSpec& spec) { return spec.id == deciding ? deciding_detail : later_detail; });
  for (auto& r : rows)  // a hint tells a student what to fix: none of these rows is theirs to fix
    if (r.detail == deciding_detail || r.detail == later_detail) r.hint.clear();
  return rows;
}

void write_reports(const Session& s, const std::vector<Row>& rows, double seconds, bool color, const json& rows_extra) {
  auto sum = summarize(rows);
  fs::create_directories(s.cfg.out_dir);
  std::string table = render_table(s, rows, sum, false);
  std::cout << (color ? render_table(s, rows, sum, true) : table);
  std::cout << "(seed " << s.cfg.seed << "; results in " << s.cfg.out_dir.string() << ")\n" << std::flush;
  std::ofstream(s.cfg.out_dir / "table.txt") << table;
  std::ofstream(s.cfg.out_dir / "junit.xml") << render_junit(s, rows, seconds);
  std::ofstream(s.cfg.out_dir / "results.json") << render_gradescope(s, rows, sum, seconds);
  // rows.json last, atomically: its "final" marks a grade whose every report is written
  fs::path tmp = s.cfg.out_dir / "rows.json.final";
  json extra = rows_extra;
  extra["seconds"] = seconds;
  extra["removed_bytes"] = s.removed_bytes;
  std::ofstream(tmp) << render_rows_json(s, rows, sum, extra);
  fs::rename(tmp, s.cfg.out_dir / "rows.json");
}

Summary summarize(const std::vector<Row>& rows) {
  Summary sum;
  for (auto& r : rows) {
    sum.all_points += r.max_points;
    if (!r.not_graded.empty() && r.status != Status::Pass) {
      sum.not_graded += r.max_points;
      sum.not_graded_why[r.not_graded] += r.max_points;
      if (r.status == Status::Fail) sum.not_graded_failed += r.max_points;
    }
    if (r.status == Status::Skip) {
      ++sum.skipped;
      continue;
    }
    sum.max_score += r.max_points;
    sum.score += r.points;
    (r.status == Status::Pass ? sum.passed : sum.failed)++;
  }
  return sum;
}

std::string not_graded_text(const Summary& sum) {
  if (sum.not_graded <= 0) return "";
  std::string t =
      fmt_points(sum.all_points - sum.not_graded) + " of " + fmt_points(sum.all_points) + " points graded: ";
  bool first = true;
  for (auto& [why, points] : sum.not_graded_why) {
    t += (first ? "" : ", ") + fmt_points(points) + " not graded (" + why + ")";
    first = false;
  }
  if (sum.not_graded_failed > 0)
    t += sum.not_graded_failed == sum.not_graded
             ? ", counted as failed (--require-cuda)"
             : "; " + fmt_points(sum.not_graded_failed) + " of them counted as failed (--require-cuda)";
  return t;
}

std::string render_table(const Session& s, const std::vector<Row>& rows, const Summary& sum, bool color) {
  auto paint = [&](Status st, const std::string& text) {
    if (!color) return text;
    const char* code = st == Status::Pass ? "\033[32m" : st == Status::Fail ? "\033[31m" : "\033[33m";
    return std::string(code) + text + "\033[0m";
  };
  std::size_t w = 10;
  for (auto& r : rows) w = std::max(w, r.id.size());
  w = std::min<std::size_t>(w, 34);
  std::ostringstream o;
  o << "\n" << s.exercise.id << " - " << s.exercise.title << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-3s %-*s  %-7s  %-7s  %s\n", "#", int(w), "check", "result", "points", "detail");
  o << line;
  int n = 0;
  for (auto& r : rows) {
    std::string pts = r.status == Status::Skip ? "-" : fmt_points(r.points) + "/" + fmt_points(r.max_points);
    std::string word = status_word(r.status);
    std::string padded = word + std::string(7 - std::min<std::size_t>(7, word.size()), ' ');
    std::snprintf(line, sizeof line, "  %-3d %-*s  %s  %-7s  ", ++n, int(w), one_line(r.id, w).c_str(),
                  paint(r.status, padded).c_str(), pts.c_str());
    o << line << one_line(r.detail.empty() ? r.title : r.detail, 70) << "\n";
  }
  o << "\nscore " << fmt_points(sum.score) << "/" << fmt_points(sum.max_score) << ": " << sum.passed << " passed, "
    << sum.failed << " failed, " << sum.skipped << " skipped\n";
  if (auto t = not_graded_text(sum); !t.empty()) o << paint(Status::Skip, "NOT GRADED HERE") << ": " << t << "\n";
  if (!s.grader_crash.empty()) o << paint(Status::Fail, "GRADER CRASH") << ": " << s.grader_crash << "\n";
  if (!s.cleanup_note.empty()) o << "cleaned up: " << s.cleanup_note << "\n";
  o << protections_text(paint);
  bool any_failed = false;
  for (auto& r : rows) {
    if (r.status != Status::Fail) continue;
    if (!any_failed) o << "\nWhat to fix:\n";
    any_failed = true;
    o << "\n" << paint(Status::Fail, "FAIL") << " " << r.id << ": " << r.title << "\n  " << failure_text(r) << "\n";
  }
  return o.str();
}

std::string render_junit(const Session& s, const std::vector<Row>& rows, double seconds) {
  auto sum = summarize(rows);
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  o << "  <testsuite name=\"" << xml_escape(s.exercise.id) << "\" tests=\"" << rows.size() << "\" failures=\""
    << sum.failed << "\" skipped=\"" << sum.skipped << "\" errors=\"0\" time=\"" << seconds << "\">\n";
  o << "    <properties>\n";
  o << "      <property name=\"not_graded_points\" value=\"" << fmt_points(sum.not_graded) << "\"/>\n";
  if (auto t = not_graded_text(sum); !t.empty())
    o << "      <property name=\"not_graded\" value=\"" << xml_escape(t) << "\"/>\n";
  if (!s.grader_crash.empty())
    o << "      <property name=\"grader_crash\" value=\"" << xml_escape(s.grader_crash) << "\"/>\n";
  for (auto& p : Sandbox::get().protections())
    o << "      <property name=\"protection." << xml_escape(p.id) << "\" value=\"" << (p.on ? "on" : "off") << ": "
      << xml_escape(p.reason) << "\"/>\n";
  o << "    </properties>\n";
  for (auto& r : rows) {
    o << "    <testcase classname=\"" << xml_escape(s.exercise.id) << "\" name=\"" << xml_escape(r.id) << "\">";
    if (r.status == Status::Fail)
      o << "<failure message=\"" << xml_escape(one_line(r.detail, 200)) << "\">" << xml_escape(failure_text(r))
        << "</failure>";
    else if (r.status == Status::Skip)
      o << "<skipped message=\"" << xml_escape(r.detail) << "\"/>";
    o << "</testcase>\n";
  }
  o << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

json row_json(const Row& r) {
  return {{"id", r.id},
          {"title", r.title},
          {"status", status_word(r.status)},
          {"points", r.points},
          {"max_points", r.max_points},
          {"detail", r.detail},
          {"expected", r.expected},
          {"seen", r.seen},
          {"hint", r.hint},
          {"not_graded", r.not_graded}};
}

Row row_from_json(const json& j) {
  auto text = [&](const char* key) { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; };
  auto number = [&](const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; };
  Row r;
  r.id = text("id");
  r.title = text("title");
  r.hint = text("hint");
  std::string st = text("status");
  r.status = st == "PASS" ? Status::Pass : st == "SKIPPED" ? Status::Skip : Status::Fail;
  r.max_points = number("max_points");
  r.points = r.status == Status::Pass ? r.max_points : 0;
  r.verdict_given = true;
  r.detail = text("detail");
  r.expected = text("expected");
  r.seen = text("seen");
  r.not_graded = text("not_graded");
  return r;
}

std::string render_rows_json(const Session& s, const std::vector<Row>& rows, const Summary& sum, const json& extra) {
  json out = {{"exercise", s.exercise.id},  {"seed", s.cfg.seed},   {"score", sum.score},
              {"max_score", sum.max_score}, {"passed", sum.passed}, {"failed", sum.failed},
              {"skipped", sum.skipped},     {"rows", json::array()}};
  for (auto& r : rows) out["rows"].push_back(row_json(r));
  // the points this machine could not grade, and why: machine-readable for the gradebook and the tests
  out["points_total"] = sum.all_points;
  out["not_graded"] = {{"points", sum.not_graded}, {"why", json(sum.not_graded_why)}};
  out["require_cuda"] = s.cfg.require_cuda;
  out["protections"] = Sandbox::get().protections_json();
  out["sandbox_uid"] = Sandbox::get().uid();
  out["worker_server_uid"] = Sandbox::get().server_uid();
  struct rusage self{};
  getrusage(RUSAGE_SELF, &self);  // the judge's own peak memory, not its workers' (a hostile answer must not grow it)
  out["judge_peak_rss_mb"] = static_cast<double>(self.ru_maxrss) / 1024.0;
  out["timeline"] = s.timeline;
  out["final"] = true;
  out["grader_crash"] = nullptr;
  for (auto& [k, v] : extra.items()) out[k] = v;
  return out.dump(2) + "\n";
}

std::string render_gradescope(const Session& s, const std::vector<Row>& rows, const Summary& sum, double seconds) {
  json tests = json::array();
  int n = 0;
  for (auto& r : rows) {
    ++n;
    json t = {{"name", r.id + ": " + r.title}, {"number", std::to_string(n)}, {"visibility", "visible"}};
    if (r.status == Status::Skip) {
      // Gradescope knows only passed/failed: a skipped row counts for nothing either way and says why, and how
      // many points it leaves ungraded.
      t["score"] = 0;
      t["max_score"] = 0;
      t["output"] = "SKIPPED, " + fmt_points(r.max_points) + " point(s) not graded" +
                    (r.not_graded.empty() ? "" : " (" + r.not_graded + ")") + ": " + r.detail;
      t["tags"] = {"skipped", "not graded"};
    } else {
      t["score"] = r.points;
      t["max_score"] = r.max_points;
      t["status"] = r.status == Status::Pass ? "passed" : "failed";
      t["output"] = r.status == Status::Pass ? r.detail : failure_text(r);
      if (!r.not_graded.empty()) t["tags"] = {"not graded"};
    }
    tests.push_back(t);
  }
  // Gradescope's documented format has no top-level max_score (autograder/schemas/): it goes in extra_data.
  json out = {{"score", sum.score},
              {"execution_time", static_cast<int>(seconds + 0.5)},
              {"visibility", "visible"},
              {"stdout_visibility", "hidden"},
              {"output", s.exercise.id + ": " + std::to_string(sum.passed) + " passed, " + std::to_string(sum.failed) +
                             " failed, " + std::to_string(sum.skipped) + " skipped"},
              {"tests", tests}};
  // Gradescope keeps extra_data; the summary line says when a protection was off, so nobody reads it silently.
  out["extra_data"] = {{"max_score", sum.max_score},
                       {"protections", Sandbox::get().protections_json()},
                       {"points_total", sum.all_points},
                       {"not_graded", {{"points", sum.not_graded}, {"why", json(sum.not_graded_why)}}}};
  std::string line = out["output"].get<std::string>();
  if (auto t = not_graded_text(sum); !t.empty()) line += ". NOT GRADED HERE: " + t;
  if (!s.grader_crash.empty()) {
    line += ". GRADER CRASH: " + s.grader_crash;
    out["extra_data"]["grader_crash"] = s.grader_crash;
  }
  std::string off;
  for (auto& p : Sandbox::get().protections())
    if (!p.on) off += (off.empty() ? "" : ", ") + p.id;
  if (!off.empty()) line += ". WARNING: protections off: " + off;
  out["output"] = line;
  return out.dump(2) + "\n";
}

}  // namespace judge
