// What comes out of a grading run: the at-a-glance table on the console, JUnit XML, and Gradescope's
// results.json. Only the judge writes these, from rows it decided itself.
#pragma once
#include <string>
#include <vector>

#include "grading.hpp"

namespace judge {

struct Summary {
  double score = 0, max_score = 0;
  int passed = 0, failed = 0, skipped = 0;
};

// Text that may come from the submission, made safe to print inside a report line: control characters become '?',
// every line after the first is indented with "    | ", and the whole is capped.
std::string quoted(const std::string& text);

// Rows in the exercise's check order; a check that produced no row gets a failing one ("no result").
std::vector<Row> final_rows(const Session& s);
Summary summarize(const std::vector<Row>& rows);
std::string render_table(const Session& s, const std::vector<Row>& rows, const Summary& sum, bool color);
std::string render_junit(const Session& s, const std::vector<Row>& rows, double seconds);
// Every row with its fields, for tools and tests (the course's own machine-readable format).
std::string render_rows_json(const Session& s, const std::vector<Row>& rows, const Summary& sum);
std::string render_gradescope(const Session& s, const std::vector<Row>& rows, const Summary& sum, double seconds);

}  // namespace judge
