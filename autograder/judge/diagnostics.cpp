#include "diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

namespace judge {

namespace {

constexpr std::size_t kMaxLines = 60;  // lines of "What to fix" text; the first error always comes first
constexpr int kLibraryNotes = 4;       // notes of one error that point into library headers (candidates...)

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
  std::string kind;          // as printed: "error", "fatal error", "warning", "note", "catastrophic error", ...
  std::string message;
  std::string raw;           // the line (for the linker's, without its "/usr/bin/ld: " prefix)
  std::size_t file_end = 0;  // raw[0, file_end) is loc.file as printed; renaming keeps the rest of the line
  bool edg = false;          // nvcc's front end: FILE(LINE): error: ...
  bool ld = false;           // the linker's
  std::vector<std::string> source;  // lines printed under it: source line, caret, EDG's "detected during ..."
};

struct Group {
  std::vector<Item> items;
  int principal = -1;  // index of the error or warning the group is about; -1: lines that belong to none
};

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}
int to_int(const std::string& s) { return all_digits(s) && s.size() < 9 ? std::stoi(s) : 0; }

// "FILE", "FILE:LINE" or "FILE:LINE:COLUMN"
Loc parse_loc(const std::string& head) {
  Loc l;
  l.file = head;
  auto c1 = head.rfind(':');
  if (c1 == std::string::npos || !all_digits(head.substr(c1 + 1))) return l;
  std::string before = head.substr(0, c1);
  int n = to_int(head.substr(c1 + 1));
  auto c2 = before.rfind(':');
  if (c2 != std::string::npos && all_digits(before.substr(c2 + 1))) {
    l.file = before.substr(0, c2);
    l.line = to_int(before.substr(c2 + 1));
    l.column = n;
  } else {
    l.file = before;
    l.line = n;
  }
  return l;
}

bool is_error_kind(const std::string& k) {
  return k == "error" || k == "fatal error" || k == "Error" || k == "catastrophic error" || k == "internal error" ||
         k == "sorry, unimplemented" || k == "internal compiler error";
}

// "KIND: message" (g++) or "KIND #NNN-D: message" (EDG): the kind and the message, or nothing.
bool match_kind(const std::string& tail, bool edg, std::string& kind, std::string& message) {
  static const char* kinds[] = {"internal compiler error", "sorry, unimplemented", "catastrophic error",
                                "internal error", "fatal error", "error", "Error", "warning", "Warning",
                                "remark", "note"};
  for (const char* k : kinds) {
    std::string ks = k;
    if (!starts_with(tail, ks)) continue;
    std::size_t p = ks.size();
    if (edg && tail.compare(p, 2, " #") == 0) {  // warning #12-D
      p += 2;
      while (p < tail.size() && (std::isalnum(static_cast<unsigned char>(tail[p])) || tail[p] == '-')) ++p;
    }
    if (p >= tail.size() || tail[p] != ':') continue;
    kind = ks;
    message = tail.substr(std::min(tail.size(), p + (p + 1 < tail.size() && tail[p + 1] == ' ' ? 2 : 1)));
    return true;
  }
  return false;
}

// g++'s source, caret and fix-it lines: "   51 | code", "      |    ^", "  +++ |+#include <vector>"
bool is_source_line(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return s.compare(i, 2, " |") == 0;
  }
  if (s.compare(i, 5, "+++ |") == 0) return true;
  return i > 0 && i < s.size() && s[i] == '|';
}

bool is_noise(const std::string& s) {
  if (s == "compilation terminated.") return true;
  if (starts_with(s, "Remark: The warnings can be suppressed")) return true;
  if (s.find(" detected in the compilation of ") != std::string::npos) return true;  // nvcc's count
  if (starts_with(s, "collect2: error: ld returned")) return true;
  if (starts_with(s, "ptxas fatal") && s.find("Ptx assembly aborted due to errors") != std::string::npos) return true;
  return false;
}

// ptxas, nvlink, fatbinary, nvcc: "ptxas error   : message"
std::optional<Item> tool_line(const std::string& s) {
  for (const char* tool : {"ptxas", "nvlink", "fatbinary", "nvcc", "cicc"}) {
    std::string t = std::string(tool) + " ";
    if (!starts_with(s, t)) continue;
    auto colon = s.find(" : ");
    if (colon == std::string::npos) colon = s.find(": ");
    if (colon == std::string::npos) return std::nullopt;
    std::string word = s.substr(t.size(), colon - t.size());
    word.erase(word.find_last_not_of(' ') + 1);
    Item it;
    it.role = Role::Principal;
    it.kind = word == "warning" ? "warning" : word == "info" ? "note" : "error";
    it.message = std::string(tool) + ": " + s.substr(s.find(": ", colon) + 2);
    it.raw = s;
    return it;
  }
  return std::nullopt;
}

bool is_linker(const std::string& head) {
  auto slash = head.rfind('/');
  std::string base = slash == std::string::npos ? head : head.substr(slash + 1);
  return base == "ld" || starts_with(base, "ld.");
}

// The linker's lines, without the "/usr/bin/ld: " prefix some of them carry.
std::optional<Item> linker_line(const std::string& s, bool prefixed) {
  Item it;
  it.ld = true;
  it.raw = s;
  auto in_function = s.find(": in function `");
  if (in_function != std::string::npos && ends_with(s, "':")) {
    it.role = Role::Scope;
    it.loc.file = s.substr(0, in_function);
    it.file_end = in_function;
    return it;
  }
  auto paren = s.find(":(");
  auto close = paren == std::string::npos ? std::string::npos : s.find("): ", paren);
  if (close != std::string::npos && s.substr(0, paren).find(' ') == std::string::npos) {
    it.role = Role::Principal;
    it.loc.file = s.substr(0, paren);
    it.file_end = paren;
    it.message = s.substr(close + 3);
    it.kind = starts_with(it.message, "warning: ") ? "warning" : "error";
    return it;
  }
  if (!prefixed) return std::nullopt;
  it.role = Role::Principal;
  it.kind = starts_with(s, "warning: ") ? "warning" : "error";
  it.message = s;
  return it;
}

std::optional<Item> classify(const std::string& s) {
  Item it;
  it.raw = s;
  if (s.empty() || s[0] == ' ' || s[0] == '\t') return std::nullopt;
  if (auto t = tool_line(s)) return t;
  // EDG (nvcc's front end): FILE(LINE): KIND: message
  auto rp = s.find("): ");
  if (rp != std::string::npos) {
    auto lp = s.rfind('(', rp);
    if (lp != std::string::npos && lp > 0 && all_digits(s.substr(lp + 1, rp - lp - 1)) &&
        match_kind(s.substr(rp + 3), true, it.kind, it.message)) {
      it.role = it.kind == "note" ? Role::Note : Role::Principal;
      it.edg = true;
      it.loc.file = s.substr(0, lp);
      it.loc.line = to_int(s.substr(lp + 1, rp - lp - 1));
      it.file_end = lp;
      return it;
    }
  }
  auto p = s.find(": ");
  if (p != std::string::npos && p > 0) {
    std::string head = s.substr(0, p), tail = s.substr(p + 2);
    if (is_linker(head)) return linker_line(tail, true);
    Loc loc = parse_loc(head);
    it.loc = loc;
    it.file_end = loc.file.size();
    if (match_kind(tail, false, it.kind, it.message)) {
      it.role = it.kind == "note" ? Role::Note : Role::Principal;
      return it;
    }
    if (loc.line > 0 && starts_with(tail, "  ")) {  // FILE:L:C:   required from here
      it.role = Role::Context;
      return it;
    }
    if (loc.line == 0 && ends_with(s, ":") &&
        (starts_with(tail, "In ") || starts_with(tail, "At ") || tail == "Assembler messages:")) {
      it.role = Role::Scope;
      return it;
    }
  }
  return linker_line(s, false);  // mm16_cuda.cpp:(.text+0x2a1): undefined reference to `...'
}

// "In file included from FILE:L:" / "                 from FILE:L,"
std::optional<Loc> include_line(const std::string& s, bool continuation) {
  std::string rest;
  if (starts_with(s, "In file included from ")) {
    rest = s.substr(22);
  } else if (continuation) {
    auto i = s.find_first_not_of(' ');
    if (i == std::string::npos || i == 0 || s.compare(i, 5, "from ") != 0) return std::nullopt;
    rest = s.substr(i + 5);
  } else {
    return std::nullopt;
  }
  if (rest.empty() || (rest.back() != ':' && rest.back() != ',')) return std::nullopt;
  rest.pop_back();
  return parse_loc(rest);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    std::string l = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

std::vector<Group> parse(const std::string& output) {
  std::vector<Group> groups;
  std::vector<Item> pending;  // Include, Scope and Context lines waiting for their diagnostic
  Item* last = nullptr;       // what a source line belongs to
  bool in_edg = false;        // an EDG diagnostic runs until a blank line
  auto current = [&]() -> Group* { return groups.empty() ? nullptr : &groups.back(); };
  auto flush_pending_into = [&](Group& g) {
    for (auto& p : pending) g.items.push_back(std::move(p));
    pending.clear();
  };
  for (const std::string& line : split_lines(output)) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      in_edg = false;
      last = nullptr;
      continue;
    }
    if (in_edg && last && (line[0] == ' ' || line[0] == '\t')) {
      last->source.push_back(line);
      continue;
    }
    in_edg = false;
    if (is_noise(line)) continue;
    bool continuation = !pending.empty() && pending.back().role == Role::Include;
    if (auto inc = include_line(line, continuation)) {
      Item it;
      it.role = Role::Include;
      it.loc = *inc;
      it.raw = line;
      pending.push_back(it);
      last = nullptr;
      continue;
    }
    auto item = classify(line);
    if (!item) {
      if (is_source_line(line) && last) {
        last->source.push_back(line);
        continue;
      }
      item = Item{};
      item->raw = line;
    }
    switch (item->role) {
      case Role::Include:
      case Role::Scope:
      case Role::Context:
        pending.push_back(*item);
        last = nullptr;
        break;
      case Role::Note:
        if (Group* g = current(); g && g->principal >= 0) {
          flush_pending_into(*g);
          g->items.push_back(*item);
        } else {
          groups.emplace_back();
          flush_pending_into(groups.back());
          groups.back().items.push_back(*item);
        }
        last = &current()->items.back();
        in_edg = item->edg;
        break;
      case Role::Principal:
        groups.emplace_back();
        flush_pending_into(groups.back());
        groups.back().items.push_back(*item);
        groups.back().principal = static_cast<int>(groups.back().items.size()) - 1;
        last = &groups.back().items.back();
        in_edg = item->edg;
        break;
      case Role::Other:
        if (Group* g = current(); g && pending.empty()) {
          g->items.push_back(*item);
        } else {
          groups.emplace_back();
          flush_pending_into(groups.back());
          groups.back().items.push_back(*item);
        }
        last = nullptr;
        break;
    }
  }
  if (!pending.empty()) {
    groups.emplace_back();
    flush_pending_into(groups.back());
  }
  return groups;
}

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
