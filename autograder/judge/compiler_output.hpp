// The compiler's and the linker's output, read into groups of lines (diagnostics.cpp reads them for a student): each
// group one diagnostic (an error, a warning, the linker's undefined reference) with the lines that lead to it (the
// include chain, "In function", "required from here") and those that follow it (notes, the source line, the caret).
#pragma once
#include <string>
#include <vector>

namespace judge::compiler_output {

struct Loc {
  std::string file;
  int line = 0, column = 0;
};

// What a line of the compiler's output is. Include, Scope and Context lines come before the diagnostic they
// belong to ("In file included from", "In function", "required from here"); notes and source lines after it.
enum class Role { Include, Scope, Context, Principal, Note, Other };

struct Item {
  Role role = Role::Other;
  Loc loc;
  std::string kind;  // as printed: "error", "fatal error", "warning", "note", "catastrophic error", ...
  std::string message;
  std::string raw;                  // the line (for the linker's, without its "/usr/bin/ld: " prefix)
  std::size_t file_end = 0;         // raw[0, file_end) is loc.file as printed; renaming keeps the rest of the line
  bool edg = false;                 // nvcc's front end: FILE(LINE): error: ...
  bool ld = false;                  // the linker's
  std::vector<std::string> source;  // lines printed under it: source line, caret, EDG's "detected during ..."
};

struct Group {
  std::vector<Item> items;
  int principal = -1;  // index of the error or warning the group is about; -1: lines that belong to none
};

inline bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
inline bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
// "error", "fatal error", "catastrophic error" (EDG's)...: a diagnostic that fails the build.
bool is_error_kind(const std::string& kind);
// The lines of `text`, without their "\r".
std::vector<std::string> split_lines(const std::string& text);
// The groups of the output, in its order.
std::vector<Group> parse(const std::string& output);

}  // namespace judge::compiler_output
