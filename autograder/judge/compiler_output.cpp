// The compiler's output read into groups (compiler_output.hpp): which role each line plays, for g++, nvcc's EDG
// front end, ccache and the linker, and which diagnostic it belongs to.
#include "compiler_output.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace judge::compiler_output {

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
  static const char* kinds[] = {"internal compiler error",
                                "sorry, unimplemented",
                                "catastrophic error",
                                "internal error",
                                "fatal error",
                                "error",
                                "Error",
                                "warning",
                                "Warning",
                                "remark",
                                "note"};
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

namespace {

// The groups of one output, built line by line.
class Parser {
 public:
  void read(const std::string& line) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      in_edg_ = false;
      last_ = nullptr;
      return;
    }
    if (in_edg_ && last_ && (line[0] == ' ' || line[0] == '\t')) {
      last_->source.push_back(line);
      return;
    }
    in_edg_ = false;
    if (is_noise(line)) return;
    bool continuation = !pending_.empty() && pending_.back().role == Role::Include;
    if (auto inc = include_line(line, continuation)) {
      Item it;
      it.role = Role::Include;
      it.loc = *inc;
      it.raw = line;
      pending_.push_back(it);
      last_ = nullptr;
      return;
    }
    auto item = classify(line);
    if (!item) {
      if (is_source_line(line) && last_) {
        last_->source.push_back(line);
        return;
      }
      item = Item{};
      item->raw = line;
    }
    place(*item);
  }

  std::vector<Group> groups() && {
    if (!pending_.empty()) {
      groups_.emplace_back();
      flush_pending_into(groups_.back());
    }
    return std::move(groups_);
  }

 private:
  std::vector<Group> groups_;
  std::vector<Item> pending_;  // Include, Scope and Context lines waiting for their diagnostic
  Item* last_ = nullptr;       // what a source line belongs to
  bool in_edg_ = false;        // an EDG diagnostic runs until a blank line

  Group* current() { return groups_.empty() ? nullptr : &groups_.back(); }
  void flush_pending_into(Group& g) {
    for (auto& p : pending_) g.items.push_back(std::move(p));
    pending_.clear();
  }
  // A diagnostic line into the group it belongs to (the current one, or a new one).
  void place(const Item& item) {
    switch (item.role) {
      case Role::Include:
      case Role::Scope:
      case Role::Context:
        pending_.push_back(item);
        last_ = nullptr;
        break;
      case Role::Note:
        if (Group* g = current(); g && g->principal >= 0) {
          flush_pending_into(*g);
          g->items.push_back(item);
        } else {
          groups_.emplace_back();
          flush_pending_into(groups_.back());
          groups_.back().items.push_back(item);
        }
        last_ = &current()->items.back();
        in_edg_ = item.edg;
        break;
      case Role::Principal:
        groups_.emplace_back();
        flush_pending_into(groups_.back());
        groups_.back().items.push_back(item);
        groups_.back().principal = static_cast<int>(groups_.back().items.size()) - 1;
        last_ = &groups_.back().items.back();
        in_edg_ = item.edg;
        break;
      case Role::Other:
        if (Group* g = current(); g && pending_.empty()) {
          g->items.push_back(item);
        } else {
          groups_.emplace_back();
          flush_pending_into(groups_.back());
          groups_.back().items.push_back(item);
        }
        last_ = nullptr;
        break;
    }
  }
};

}  // namespace

std::vector<Group> parse(const std::string& output) {
  Parser parser;
  for (const std::string& line : split_lines(output)) parser.read(line);
  return std::move(parser).groups();
}

}  // namespace judge::compiler_output
