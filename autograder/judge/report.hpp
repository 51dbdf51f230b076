// What comes out of a grading run: the at-a-glance table on the console, JUnit XML, and Gradescope's
// results.json. Only the judge writes these, from rows it decided itself.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "grading.hpp"

namespace judge {

struct Summary {
  double score = 0, max_score = 0;  // max_score: the points of the rows that were graded (skipped rows are not)
  int passed = 0, failed = 0, skipped = 0;
  double all_points = 0;  // every row's points, graded or not
  // Points not graded on this machine (SKIPPED rows, and rows --require-cuda failed instead), by reason: a total
  // never hides them ("12 of 24 points graded: 12 not graded (needs a CUDA device)").
  double not_graded = 0, not_graded_failed = 0;
  std::map<std::string, double> not_graded_why;
};

// Text that may come from the submission, made safe to print inside a report line: control characters become '?',
// every line after the first is indented with "    | ", and the whole is capped.
std::string quoted(const std::string& text);

// Rows in the exercise's check order; a check that produced no row gets a failing one ("no result").
std::vector<Row> final_rows(const Session& s);
Summary summarize(const std::vector<Row>& rows);
// "12 of 24 points graded: 12 not graded (needs a CUDA device)"; empty when every point was graded.
std::string not_graded_text(const Summary& sum);
std::string render_table(const Session& s, const std::vector<Row>& rows, const Summary& sum, bool color);
std::string render_junit(const Session& s, const std::vector<Row>& rows, double seconds);
// Every row with its fields, for tools and tests (the course's own machine-readable format); `extra` keys are
// added at the top level (and replace the ones of the same name).
std::string render_rows_json(const Session& s, const std::vector<Row>& rows, const Summary& sum,
                             const json& extra = json::object());
std::string render_gradescope(const Session& s, const std::vector<Row>& rows, const Summary& sum, double seconds);

// Prints the table and writes table.txt, junit.xml, rows.json ("final": true) and results.json into the out folder.
void write_reports(const Session& s, const std::vector<Row>& rows, double seconds, bool color,
                   const json& rows_extra = json::object());

// ---- surviving a fault inside the judge (main.cpp) ---------------------------------------------------------------
// The checks run in a child process of the judge. Before and after every row it rewrites rows.json (atomically)
// with what it has decided so far: "final": false, "deciding": the row it is deciding (or null), "undecided": the
// rows without a verdict yet (each FAIL "not decided yet" in "rows", so a reader of a half-written grade never sees
// a pass it did not earn).
void write_progress(const Session& s);
// Row <-> its rows.json entry.
json row_json(const Row& r);
Row row_from_json(const json& j);
// The rows of a grade whose judge died: the rows the progress file `progress` records as decided, as they were;
// every other check of the exercise FAILs, `deciding_detail` for the row it was deciding when it died, and
// `later_detail` for the rest. An unreadable progress (a non-object) decides nothing.
std::vector<Row> rows_after_crash(const Session& s, const json& progress, const std::string& deciding_detail,
                                  const std::string& later_detail);

}  // namespace judge
