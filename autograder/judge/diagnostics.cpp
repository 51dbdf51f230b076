// A failed build read for a student (diagnostics.hpp): the output's groups (compiler_output.hpp) placed in the
// student's files, renamed to the paths the student knows, and reordered so the first error leads.
#include "diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "compiler_output.hpp"

namespace judge {

using namespace compiler_output;

namespace {

constexpr std::size_t kMaxLines = 60;  // lines of "What to fix" text; the first error always comes first
constexpr int kLibraryNotes = 4;       // notes of one error that point into library headers (candidates...)

class Reader {
 public:
  explicit Reader(const DiagnosticsContext& ctx) : ctx_(ctx) {
    build_ = ctx.build_dir.empty() ? "" : ctx.build_dir.string() + "/";
    for (auto& d : ctx.include_dirs)
      if (!d.empty()) includes_.push_back(d.back() == '/' ? d : d + "/");
    std::sort(includes_.begin(), includes_.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
  }

  // The student's file a path names (as compiled, src/NAME, or absolute), or "".
  std::string student(const std::string& path) const {
    std::string p = starts_with(path, "./") ? path.substr(2) : path;
    for (auto& [name, _] : ctx_.student_files)
      if (p == "src/" + name || p == build_ + "src/" + name || p == name) return name;
    return "";
  }
  // The student's file an object of the link was compiled from (BUILD/NAME.o), or "".
  std::string student_object(const std::string& path) const {
    for (auto& [name, _] : ctx_.student_files)
      if (path == build_ + name + ".o" || path == name + ".o") return name;
    return "";
  }
  std::string display(const std::string& path) const {
    if (auto s = student(path); !s.empty()) return s;
    if (auto o = student_object(path); !o.empty()) return o + ".o";
    if (!build_.empty() && starts_with(path, build_)) return path.substr(build_.size());
    for (auto& inc : includes_)
      if (starts_with(path, inc)) return path.substr(inc.size());
    return path;
  }
  std::string without_build_dir(std::string s) const {
    if (build_.empty()) return s;
    for (auto p = s.find(build_); p != std::string::npos; p = s.find(build_, p)) s.erase(p, build_.size());
    return s;
  }
  std::string source_line(const std::string& name, int line) const {
    auto f = ctx_.student_files.find(name);
    if (f == ctx_.student_files.end() || line <= 0) return "";
    const std::string& text = f->second;
    std::size_t start = 0;
    for (int i = 1; i < line; ++i) {
      start = text.find('\n', start);
      if (start == std::string::npos) return "";
      ++start;
    }
    std::string l = text.substr(start, text.find('\n', start) - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    return l;
  }

  std::string rename(const Item& it) const {
    if (it.ld) return without_build_dir(it.file_end ? display(it.loc.file) + it.raw.substr(it.file_end) : it.raw);
    if (it.loc.file.empty() || it.file_end == 0) return it.raw;
    return display(it.loc.file) + it.raw.substr(it.file_end);
  }

  // Where the group's error is in the student's files: its own place, or the student's line that led to it.
  std::optional<Loc> student_place(Group& g) const {
    Item& p = g.items[g.principal];
    if (p.ld) {
      for (int i = g.principal - 1; i >= 0; --i)
        if (g.items[i].ld && g.items[i].role == Role::Scope) {
          if (auto n = student_object(g.items[i].loc.file); !n.empty()) return Loc{n, 0, 0};
          break;
        }
      if (auto n = student(p.loc.file); !n.empty()) return Loc{n, 0, 0};
      return std::nullopt;
    }
    if (auto n = student(p.loc.file); !n.empty()) {
      Loc l = p.loc;
      l.file = n;
      if (p.edg && l.column == 0) l.column = edg_column(p, n);
      return l;
    }
    auto at = [&](const Item& it) -> std::optional<Loc> {
      if (auto n = student(it.loc.file); !n.empty()) return Loc{n, it.loc.line, it.loc.column};
      return std::nullopt;
    };
    for (int i = g.principal - 1; i >= 0; --i)
      if (g.items[i].role == Role::Context)
        if (auto l = at(g.items[i])) return l;
    for (std::size_t i = g.principal + 1; i < g.items.size(); ++i)
      if (g.items[i].role == Role::Note)
        if (auto l = at(g.items[i])) return l;
    for (int i = 0; i < g.principal; ++i)
      if (g.items[i].role == Role::Include)
        if (auto n = student(g.items[i].loc.file); !n.empty()) return Loc{n, g.items[i].loc.line, 0};
    return std::nullopt;
  }

  // EDG prints the source line indented by two spaces and a caret under it, but no column: the caret's, where
  // the printed line is the file's line as it is (not where EDG printed it rebuilt from macro expansions).
  int edg_column(const Item& p, const std::string& name) const {
    if (p.source.size() < 2) return 0;
    std::string want = source_line(name, p.loc.line);
    if (p.source[0] != "  " + want) return 0;
    const std::string& caret = p.source[1];
    auto c = caret.find('^');
    if (c == std::string::npos || c < 2 || caret.find_first_not_of(' ') != c) return 0;
    return static_cast<int>(c - 2 + 1);
  }

  static std::string where(const Loc& l) {
    std::string s = l.file;
    if (l.line > 0) s += ":" + std::to_string(l.line);
    if (l.line > 0 && l.column > 0) s += ":" + std::to_string(l.column);
    return s;
  }

  // The lines of one group; the first error's group leads with its error (then its notes, then what led to it).
  std::vector<std::string> render(Group& g, bool first, const std::optional<Loc>& place) const {
    auto lines = render_items(g, first, place);
    int library_notes = 0;
    for (auto& it : g.items)
      if (it.role == Role::Note && student(it.loc.file).empty()) ++library_notes;
    if (library_notes > kLibraryNotes)
      lines.push_back("(" + std::to_string(library_notes - kLibraryNotes) +
                      " more notes of the compiler on this error, in library headers, not shown)");
    return lines;
  }

  std::vector<std::string> render_items(Group& g, bool first, const std::optional<Loc>& place) const {
    std::vector<std::string> out;
    std::vector<std::string> chain;  // student's "In file included from" lines, re-joined
    int library_notes = 0;           // notes into other files than the student's: one line each, the first few
    auto flush_chain = [&] {
      for (std::size_t i = 0; i < chain.size(); ++i)
        out.push_back((i == 0 ? "In file included from " : "                 from ") + chain[i] +
                      (i + 1 == chain.size() ? ":" : ","));
      chain.clear();
    };
    auto emit = [&](const Item& it) {
      if (it.role != Role::Include) flush_chain();
      switch (it.role) {
        case Role::Include:
          if (auto n = student(it.loc.file); !n.empty()) chain.push_back(n + ":" + std::to_string(it.loc.line));
          break;
        case Role::Scope:
        case Role::Context:
          if (it.ld || !student(it.loc.file).empty()) out.push_back(rename(it));
          break;
        case Role::Principal:
          out.push_back(rename(it));
          out.insert(out.end(), it.source.begin(), it.source.end());
          break;
        case Role::Note:
          if (!student(it.loc.file).empty()) {
            out.push_back(rename(it));
            out.insert(out.end(), it.source.begin(), it.source.end());
          } else if (++library_notes <= kLibraryNotes) {
            out.push_back(rename(it));
          }
          break;
        case Role::Other:
          out.push_back(without_build_dir(it.raw));
          break;
      }
    };
    // the linker's "in function" line reads before the reference it introduces
    if (!first || g.principal < 0 || g.items[g.principal].ld) {
      for (auto& it : g.items) emit(it);
      flush_chain();
      return out;
    }
    const Item& p = g.items[g.principal];
    bool elsewhere = place && student(p.loc.file).empty() && !p.ld;
    if (elsewhere) {  // the error is in a header; the student's line that led there comes first
      out.push_back(where(*place) + ": " + p.kind + ": " + p.message);
      std::string code = source_line(place->file, place->line);
      if (!code.empty()) {
        std::string num = std::to_string(place->line);
        std::string pad(std::max<std::size_t>(5, num.size() + 1) - num.size(), ' ');
        out.push_back(pad + num + " | " + code);
        if (place->column > 0)
          out.push_back(std::string(pad.size() + num.size(), ' ') + " | " + std::string(place->column - 1, ' ') + "^");
      }
    }
    emit(p);
    for (std::size_t i = g.principal + 1; i < g.items.size(); ++i) emit(g.items[i]);
    flush_chain();
    for (int i = 0; i < g.principal; ++i) {
      const Item& it = g.items[i];
      if (it.role == Role::Scope && !it.ld) continue;  // "In function ..." reads oddly after the error
      if (elsewhere && it.role == Role::Context && it.loc.line == place->line && it.loc.column == place->column &&
          student(it.loc.file) == place->file)
        continue;  // the line shown first
      emit(it);
    }
    flush_chain();
    return out;
  }

  std::string key(const Group& g) const {
    const Item& p = g.items[g.principal];
    std::string k = p.kind + "\n" + p.message;
    if (p.ld) return k;  // the same undefined reference from another place in the object
    k += "\n" + rename(p);
    for (auto& s : p.source) k += "\n" + s;
    return k;
  }

 private:
  const DiagnosticsContext& ctx_;
  std::string build_;
  std::vector<std::string> includes_;
};

}  // namespace

std::string undefined_cxx_references(const std::string& link_output) {
  static const std::string marker = "warning: undefined reference to `";
  std::string out, scope;
  for (const std::string& line : split_lines(link_output)) {
    if (line.find(": in function `") != std::string::npos && ends_with(line, "':")) {
      scope = line;
      continue;
    }
    auto m = line.find(marker);
    auto end = line.rfind('\'');
    if (m == std::string::npos || end == std::string::npos || end < m + marker.size()) continue;
    std::string symbol = line.substr(m + marker.size(), end - m - marker.size());
    bool cxx = symbol.find('(') != std::string::npos || symbol.find("::") != std::string::npos ||
               starts_with(symbol, "vtable for ") || starts_with(symbol, "typeinfo for ") ||
               starts_with(symbol, "VTT for ") || starts_with(symbol, "guard variable for ");
    if (!cxx) continue;
    if (!scope.empty()) out += scope + "\n";
    scope.clear();
    out += line.substr(0, m) + line.substr(m + 9) + "\n";  // less "warning: "
  }
  return out;
}

CompilerErrors read_compiler_errors(const std::string& output, const DiagnosticsContext& ctx) {
  CompilerErrors r;
  Reader reader(ctx);
  std::vector<Group> groups = parse(output);

  // Distinct errors, in the compiler's order; the first placed in the student's files leads.
  std::set<std::string> seen;
  std::vector<std::size_t> errors;  // indices of the groups kept (first of each distinct error)
  std::vector<bool> repeat(groups.size(), false);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].principal < 0) continue;
    if (!seen.insert(reader.key(groups[i])).second) {
      repeat[i] = true;
      continue;
    }
    if (is_error_kind(groups[i].items[groups[i].principal].kind)) errors.push_back(i);
  }
  if (errors.empty()) return r;
  std::size_t lead = errors.front();
  std::optional<Loc> place;
  for (std::size_t i : errors)
    if (auto p = reader.student_place(groups[i])) {
      lead = i;
      place = p;
      break;
    }
  r.found = true;
  r.more = static_cast<int>(errors.size()) - 1;
  const Item& p = groups[lead].items[groups[lead].principal];
  if (place) {
    r.first = Reader::where(*place) + ": " + p.message;
  } else if (!p.ld && p.loc.line > 0) {
    r.first = Reader::where(Loc{reader.display(p.loc.file), p.loc.line, p.loc.column}) + ": " + p.message;
  } else if (!ctx.compiling.empty()) {
    r.first = ctx.compiling + ": " + p.message;
  } else {
    r.first = p.message;
  }

  std::vector<std::string> lines = reader.render(groups[lead], true, place);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (i == lead || repeat[i]) continue;
    auto more = reader.render(groups[i], false, std::nullopt);
    lines.insert(lines.end(), more.begin(), more.end());
  }
  std::size_t shown = std::min(lines.size(), kMaxLines);
  for (std::size_t i = 0; i < shown; ++i) r.text += (i ? "\n" : "") + lines[i];
  if (lines.size() > shown)
    r.text += "\n... (" + std::to_string(lines.size() - shown) + " more lines of the compiler's output not shown)";
  return r;
}

}  // namespace judge
