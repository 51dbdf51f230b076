"""The mutant generator of `./course mutants` (stdlib only): one small edit of a reference solution's file per mutant.

A mutant is a planted-case patch (autograder/planted/README.md): an exact OLD -> NEW replacement in one file of
solutions/EX, OLD being whole lines that occur exactly once in the file, so opcourse/planted.py applies
it like any planted bug. Its id is a hash of the exercise, the file and the mutated text: two edits that give the same
file are one mutant, and an id survives edits elsewhere in the file.

Where a mutant may be: C++ and CUDA are read by a small lexer (comments, string and character literals and
preprocessor lines are never touched, nor the message arguments of TORCH_CHECK and its kin, which only word the
error); Python by its own parser (ast): string constants, f-strings and docstrings are never touched.

The operators (the `operator` of each mutant):
  arith       + <-> -, * -> /, / -> *, % -> /, @ -> *; compound assignments += <-> -=, *= <-> /=, += -> =
  relational  a comparison negated (< -> >=, == -> !=, is -> is not, in -> not in, ...)
  boundary    a comparison's boundary moved (< <-> <=, > <-> >=)
  logical     && <-> ||, and <-> or; one operand of && / || / and / or dropped; ! / not removed
  negate      a condition negated: if, while, the ternary's, TORCH_CHECK's
  constant    a number n -> 0, 1, n+1, n-1; true <-> false
  increment   ++ <-> --; break <-> continue
  delete      a statement removed (C++: one that declares nothing; Python: replaced by `pass`)
  swap-args   the two arguments of a two-argument call (or parameter list) swapped
  drop-call   a tensor method that returns a tensor (.contiguous(), .t(), .to(...), .double(), ...) or a wrapper
              (sorted(x), list(x), ...) removed: its receiver or argument is used as it is

C++ is told apart from its look-alikes by spacing, as clang-format writes it: a binary operator has a space on each
side (`a * b`), a pointer or template bracket does not (`float* p`, `static_cast<float>(x)`)."""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import asdict, dataclass

CPP_SUFFIXES = (".cpp", ".cc", ".cu", ".cuh", ".h", ".hpp")
PY_SUFFIXES = (".py",)
OPERATORS = (
    "arith",
    "relational",
    "boundary",
    "logical",
    "negate",
    "constant",
    "increment",
    "delete",
    "swap-args",
    "drop-call",
)


@dataclass(frozen=True)
class Mutant:
    exercise: str
    file: str
    line: int  # 1-based line and column of the edit in the reference file
    col: int
    operator: str  # one of OPERATORS
    description: str  # what changed, e.g. "`<` -> `<=`"
    old: str  # the patch: OLD occurs exactly once in the reference file ...
    new: str  # ... and NEW replaces it
    id: str  # hash of exercise, file and mutated text
    gpu_only: bool = False  # the edit is in code that only a CUDA device runs (gpu_only_lines)

    @property
    def patch(self) -> dict:
        """In expected.json's form: {"FILE": [[OLD, NEW]]}."""
        return {self.file: [[self.old, self.new]]}

    @property
    def label(self) -> str:
        return f"{self.file}:{self.line}:{self.col} {self.operator} {self.description}"

    def to_json(self) -> dict:
        d = asdict(self)
        d["patch"] = self.patch
        return d


def mutant_id(exercise: str, file: str, mutated_text: str) -> str:
    return hashlib.sha256(f"{exercise}\0{file}\0{mutated_text}".encode()).hexdigest()[:12]


def line_patch(text: str, start: int, end: int, replacement: str) -> tuple[str, str]:
    """The edit text[start:end] -> replacement as whole lines (OLD, NEW), widened by a line above or below until OLD
    occurs exactly once in text (planted_cases.apply_patch's rule)."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", max(end - 1, start))
    hi = len(text) if hi < 0 else hi
    grow_up = True
    while text.count(text[lo:hi]) != 1 or not text[lo:hi].strip():
        if (grow_up and lo > 0) or hi >= len(text):
            lo = text.rfind("\n", 0, lo - 1) + 1
        else:
            nxt = text.find("\n", hi + 1)
            hi = len(text) if nxt < 0 else nxt
        grow_up = not grow_up
        if lo == 0 and hi == len(text):
            break
    old = text[lo:hi]
    return old, old[: start - lo] + replacement + old[end - lo :]


@dataclass
class Edit:
    start: int
    end: int
    replacement: str
    operator: str
    description: str


def _short(s: str, n: int = 60) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


# ----------------------------------------------------------------------------------------------------------- numbers
def number_variants(lit: str, python: bool) -> list[str]:
    """n -> 0, 1, n+1, n-1 (each different from n), in the literal's own spelling (suffix kept)."""
    if python:
        m = re.fullmatch(r"([0-9][0-9_]*)", lit)
        if m:
            n = int(lit.replace("_", ""))
            vals = [str(v) for v in (0, 1, n + 1, n - 1)]
        else:
            try:
                f = float(lit.replace("_", ""))
            except ValueError:
                return []
            vals = [repr(v) for v in (0.0, 1.0, f + 1, f - 1)]
            return [v for v in dict.fromkeys(vals) if float(v) != f]
        return [v for v in dict.fromkeys(vals) if int(v) != n]
    m = re.fullmatch(r"([0-9]+)([uUlL]*)", lit)
    if m and not (len(m.group(1)) > 1 and m.group(1).startswith("0")):
        n, suffix = int(m.group(1)), m.group(2)
        return [f"{v}{suffix}" for v in dict.fromkeys((0, 1, n + 1, n - 1)) if v != n and v >= 0] + (
            [f"-1{suffix}"] if n == 0 and not suffix else []
        )
    m = re.fullmatch(r"([0-9]+\.[0-9]*|\.[0-9]+)([fFlL]?)", lit)
    if m:
        f, suffix = float(m.group(1)), m.group(2)

        def spell(v: float) -> str:
            s = repr(v)
            return (s if "." in s or "e" in s else s + ".0") + suffix

        return [spell(v) for v in dict.fromkeys((0.0, 1.0, f + 1, f - 1)) if v != f]
    return []


# --------------------------------------------------------------------------------------------------------------- C++
@dataclass
class Tok:
    kind: str  # id, num, str, chr, op
    text: str
    start: int
    end: int
    space_before: bool
    space_after: bool = False


_PUNCT = sorted(
    """<<< >>> <<= >>= ... ->* :: -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= .*
    ( ) [ ] { } < > + - * / % & | ^ ! ~ = ? : ; , .""".split(),
    key=len,
    reverse=True,
)
_CPP_KEYWORDS = {
    "if",
    "for",
    "while",
    "switch",
    "return",
    "sizeof",
    "catch",
    "alignof",
    "decltype",
    "static_assert",
    "new",
    "delete",
    "throw",
    "else",
    "do",
    "case",
}
# macros whose arguments after the first only word the error message
_MESSAGE_MACROS = re.compile(
    r"^(TORCH_CHECK\w*|STD_TORCH_CHECK\w*|TORCH_SYM_CHECK\w*|TORCH_INTERNAL_ASSERT\w*|TORCH_WARN\w*|AT_ASSERT\w*)$"
)
_TENSOR_METHODS = {
    "contiguous",
    "t",
    "to",
    "double",
    "float",
    "half",
    "clone",
    "detach",
    "cpu",
    "cuda",
    "zero_",
    "requires_grad_",
    "expect_contiguous",
}


def lex_cpp(text: str) -> list[Tok]:
    """Tokens of C++/CUDA source; comments, preprocessor lines and whitespace dropped (space_before/after kept)."""
    toks: list[Tok] = []
    i, n = 0, len(text)
    line_start = True  # only whitespace so far on this line
    space = True
    while i < n:
        c = text[i]
        if c in " \t\r\n\f\v":
            if c == "\n":
                line_start = True
            space = True
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            space = True
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            space = True
            continue
        if c == "#" and line_start:  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    i += 2
                    continue
                if text.startswith("//", i):
                    break
                if text.startswith("/*", i):
                    j = text.find("*/", i + 2)
                    i = n if j < 0 else j + 2
                    continue
                i += 1
            space = True
            continue
        line_start = False
        start = i
        m = re.compile(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(').match(text, i)
        if m:  # raw string
            close = ")" + m.group(1) + '"'
            j = text.find(close, m.end())
            i = n if j < 0 else j + len(close)
            kind = "str"
        elif re.compile(r'(?:u8|u|U|L)?["\']').match(text, i):
            m = re.compile(r'(?:u8|u|U|L)?(["\'])').match(text, i)
            quote, j = m.group(1), m.end()
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = min(j + 1, n)
            kind = "str" if quote == '"' else "chr"
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            m = re.compile(r"\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.']|)*").match(text, i)
            i = m.end()
            kind = "num"
        elif c.isalpha() or c == "_":
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(text, i)
            i = m.end()
            kind = "id"
        else:
            p = next((p for p in _PUNCT if text.startswith(p, i)), c)
            i += len(p)
            kind = "op"
        toks.append(Tok(kind, text[start:i], start, i, space))
        space = False
    for a, b in zip(toks, toks[1:]):
        a.space_after = b.space_before
    if toks:
        toks[-1].space_after = True
    return toks


def _matching(toks: list[Tok], i: int) -> int:
    """Index of the bracket closing toks[i] ( ( [ { ), or len(toks)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].text
        if t in pairs and toks[j].kind == "op":
            depth += 1
        elif t in (")", "]", "}") and toks[j].kind == "op":
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def _top_level_commas(toks: list[Tok], open_i: int, close_i: int) -> list[int]:
    out, depth = [], 0
    for j in range(open_i + 1, close_i):
        t = toks[j].text
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
        elif t == "," and depth == 0:
            out.append(j)
    return out


class CppMutator:
    def __init__(self, text: str):
        self.text = text
        self.toks = lex_cpp(text)
        self.edits: list[Edit] = []
        self.quiet: list[tuple[int, int]] = []  # character ranges left alone (error messages)
        self.statements: list[tuple[int, int]] = []  # token ranges [i, j] of deletable statements
        self.conditions: list[tuple[int, int]] = []  # token ranges of conditions (if, while, ?:, TORCH_CHECK)

    def span(self, i: int, j: int) -> tuple[int, int]:
        return self.toks[i].start, self.toks[j].end

    def src(self, i: int, j: int) -> str:
        a, b = self.span(i, j)
        return self.text[a:b]

    def add(self, start: int, end: int, replacement: str, operator: str, description: str) -> None:
        self.edits.append(Edit(start, end, replacement, operator, description))

    # --- structure: message arguments, statements, conditions
    def scan_structure(self) -> None:
        self.scan_calls()
        self.scan_bodies()

    def scan_calls(self) -> None:
        """Message arguments (quiet) and conditions; safe on any token stream, well-formed or not."""
        toks = self.toks
        for i, t in enumerate(toks):
            if t.kind == "id" and i + 1 < len(toks) and toks[i + 1].text == "(":
                close = _matching(toks, i + 1)
                commas = _top_level_commas(toks, i + 1, close)
                if _MESSAGE_MACROS.match(t.text):
                    if commas:
                        self.quiet.append(
                            (toks[commas[0]].start, toks[close - 1].end if close < len(toks) else len(self.text))
                        )
                    last = commas[0] - 1 if commas else close - 1
                    if last > i + 1:
                        self.conditions.append((i + 2, last))
                elif t.text in ("if", "while") and close < len(toks) and close > i + 2:
                    self.conditions.append((i + 2, close - 1))
            if t.text == "?" and t.kind == "op":
                j, depth = i - 1, 0
                while j >= 0:
                    x = toks[j].text
                    if x in (")", "]", "}"):
                        depth += 1
                    elif x in ("(", "[", "{"):
                        if depth == 0:
                            break
                        depth -= 1
                    elif depth == 0 and x in ("=", "return", ",", ";", "?", ":", "<<", "+=", "-="):
                        break
                    j -= 1
                if j + 1 <= i - 1:
                    self.conditions.append((j + 1, i - 1))

    def scan_bodies(self) -> None:
        """Statements of the function bodies (a reference solution's: it expects well-formed code)."""
        toks = self.toks
        # function bodies: a brace after ')' or a qualifier, at any nesting of namespaces and classes
        i = 0
        while i < len(toks):
            if (
                toks[i].text == "{"
                and i > 0
                and toks[i - 1].text in (")", "const", "override", "noexcept", "final", "]")
            ):
                i = self.block(i) + 1
                continue
            i += 1

    def block(self, i: int) -> int:
        """Parses the code block opening at toks[i]; returns the index of its closing brace."""
        toks = self.toks
        j = i + 1
        while j < len(toks) and toks[j].text != "}":
            j = self.statement(j, deletable=True) + 1
        return j

    def statement(self, i: int, deletable: bool) -> int:
        """Parses the statement starting at toks[i]; returns the index of its last token."""
        toks = self.toks
        t = toks[i]
        if t.text == "{":
            return self.block(i)
        if t.text == ";":
            return i
        if (
            t.kind == "id"
            and i + 1 < len(toks)
            and toks[i + 1].text == ":"
            and t.text in ("public", "private", "protected")
        ):
            return i + 1
        if t.text in ("if", "while", "for", "switch") and i + 1 < len(toks) and toks[i + 1].text == "(":
            close = _matching(toks, i + 1)
            end = self.statement(close + 1, deletable=False)
            if t.text == "if" and end + 1 < len(toks) and toks[end + 1].text == "else":
                end = self.statement(end + 2, deletable=False)
            if deletable:
                self.statements.append((i, end))
            return end
        if t.text == "do":
            end = self.statement(i + 1, deletable=False)
            while end < len(toks) and toks[end].text != ";":
                end += 1
            return end
        # a simple statement: up to ';' at depth 0; lambda bodies inside it are blocks of their own
        j, depth = i, 0
        while j < len(toks):
            x = toks[j].text
            if x == "{" and j > 0 and toks[j - 1].text in (")", "]", "mutable"):
                j = self.block(j) + 1
                continue
            if x in ("(", "[", "{"):
                depth += 1
            elif x in (")", "]", "}"):
                if depth == 0:
                    return j - 1  # malformed: stop before the enclosing block's end
                depth -= 1
            elif x == ";" and depth == 0:
                break
            j += 1
        # a return is never removed: a value-returning function that falls off its end is undefined behaviour,
        # not a bug a grader could be expected to see
        if deletable and toks[i].text != "return" and not self.declares(i, j):
            self.statements.append((i, j))
        return j

    def declares(self, i: int, j: int) -> bool:
        """Whether the simple statement toks[i..j] declares something (removing it would not compile)."""
        toks = self.toks
        if toks[i].text in (
            "using",
            "typedef",
            "static",
            "const",
            "constexpr",
            "auto",
            "struct",
            "class",
            "enum",
            "namespace",
            "template",
            "static_assert",
            "extern",
            "thread_local",
            "volatile",
            "register",
            "__shared__",
            "unsigned",
            "signed",
        ):
            return True
        if toks[i].text in _CPP_KEYWORDS or toks[i].text in ("goto", "break", "continue", "co_return"):
            return False
        k = i
        # a (qualified) type name, maybe with template arguments, then & * and a name: a declaration
        while k < j and toks[k].kind == "id":
            k += 1
            if k < j and toks[k].text == "::":
                k += 1
                continue
            break
        if k < j and toks[k].text == "<" and not toks[k].space_before:
            depth = 0
            while k < j:
                depth += toks[k].text == "<"
                depth -= toks[k].text == ">"
                depth -= 2 * (toks[k].text == ">>")
                k += 1
                if depth <= 0:
                    break
        while k < j and toks[k].text in ("&", "*", "&&", "const"):
            k += 1
        return k > i and k < j and toks[k].kind == "id"

    def in_quiet(self, start: int, end: int) -> bool:
        return any(a <= start and end <= b for a, b in self.quiet)

    # --- the operators
    def generate(self) -> list[Edit]:
        self.scan_structure()
        toks = self.toks
        for i, t in enumerate(toks):
            if t.kind == "num":
                for v in number_variants(t.text, python=False):
                    self.add(t.start, t.end, v, "constant", f"`{t.text}` -> `{v}`")
                continue
            if t.kind == "id":
                if t.text in ("true", "false"):
                    v = "false" if t.text == "true" else "true"
                    self.add(t.start, t.end, v, "constant", f"`{t.text}` -> `{v}`")
                elif t.text in ("break", "continue"):
                    v = "continue" if t.text == "break" else "break"
                    self.add(t.start, t.end, v, "increment", f"`{t.text}` -> `{v}`")
                continue
            if t.kind != "op":
                continue
            self.mutate_op(i, t)
        for a, b in self.conditions:
            if self.single_comparison(a, b):
                continue  # `relational` already negates it
            cond = self.src(a, b)
            self.add(toks[a].start, toks[b].end, f"!({cond})", "negate", f"`{_short(cond)}` negated")
        for a, b in self.statements:
            s, e = self.span(a, b)
            self.add(s, e, "", "delete", f"`{_short(self.src(a, b))}` removed")
        return [e for e in self.edits if not self.in_quiet(e.start, e.end)]

    def mutate_op(self, i: int, t) -> None:
        """The mutants of the operator token toks[i]."""
        toks = self.toks
        binary = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "%": ["/"]}
        negation = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
        boundary = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
        compound = {"+=": ["-=", "="], "-=": ["+=", "="], "*=": ["/="], "/=": ["*="]}
        spaced = t.space_before and t.space_after
        if t.text in binary and spaced:
            for v in binary[t.text]:
                self.add(t.start, t.end, v, "arith", f"`{t.text}` -> `{v}`")
        elif t.text in negation and spaced:
            self.add(t.start, t.end, negation[t.text], "relational", f"`{t.text}` -> `{negation[t.text]}`")
            if t.text in boundary:
                self.add(t.start, t.end, boundary[t.text], "boundary", f"`{t.text}` -> `{boundary[t.text]}`")
        elif t.text in compound:
            for v in compound[t.text]:
                self.add(t.start, t.end, v, "arith", f"`{t.text}` -> `{v}`")
        elif t.text in ("++", "--"):
            v = "--" if t.text == "++" else "++"
            self.add(t.start, t.end, v, "increment", f"`{t.text}` -> `{v}`")
        elif t.text in ("&&", "||") and spaced:
            v = "||" if t.text == "&&" else "&&"
            self.add(t.start, t.end, v, "logical", f"`{t.text}` -> `{v}`")
            self.drop_operand(i)
        elif t.text == "!" and not t.space_after:
            self.add(t.start, t.end, "", "logical", "`!` removed")
        elif t.text == "." and i + 2 < len(toks) and toks[i + 1].text in _TENSOR_METHODS and toks[i + 2].text == "(":
            close = _matching(toks, i + 2)
            if close < len(toks):
                self.add(t.start, toks[close].end, "", "drop-call", f"`{self.src(i, close)}` removed")
        elif (
            t.text == "("
            and i > 0
            and toks[i - 1].kind == "id"
            and toks[i - 1].text not in _CPP_KEYWORDS
            and not re.match(r"^(TORCH|C10|AT)_", toks[i - 1].text)
        ):
            self.swap_args(i)

    def single_comparison(self, a: int, b: int) -> bool:
        """Whether toks[a..b] is one comparison (a == b), whose negation the relational operator makes already."""
        depth, found = 0, 0
        for t in self.toks[a : b + 1]:
            if t.text in ("(", "[", "{"):
                depth += 1
            elif t.text in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and t.text in ("&&", "||", "?", "!", ","):
                return False
            elif depth == 0 and t.text in ("==", "!=", "<", "<=", ">", ">=") and t.space_before and t.space_after:
                found += 1
        return found == 1

    def drop_operand(self, i: int) -> None:
        toks = self.toks
        stop_left = ("(", ",", "=", "return", "?", ";", "{", "&&", "||")
        stop_right = (")", ",", ";", "?", ":", "&&", "||", "}")

        def walk(j: int, step: int, stops) -> int:
            depth = 0
            while 0 <= j < len(toks):
                x = toks[j].text
                if x in ((")", "]") if step < 0 else ("(", "[")):
                    depth += 1
                elif x in (("(", "[") if step < 0 else (")", "]")):
                    if depth == 0:
                        return j
                    depth -= 1
                elif depth == 0 and x in stops:
                    return j
                j += step
            return j

        left = walk(i - 1, -1, stop_left) + 1
        right = walk(i + 1, 1, stop_right) - 1
        if left > i - 1 or right < i + 1:
            return
        op = toks[i].text
        self.add(toks[left].start, toks[i + 1].start, "", "logical", f"`{_short(self.src(left, i - 1))} {op}` dropped")
        self.add(toks[i - 1].end, toks[right].end, "", "logical", f"`{op} {_short(self.src(i + 1, right))}` dropped")

    def swap_args(self, i: int) -> None:
        toks = self.toks
        close = _matching(toks, i)
        if close >= len(toks) or close - i < 4:
            return
        commas = _top_level_commas(toks, i, close)
        if len(commas) != 1:
            return
        a, b = (i + 1, commas[0] - 1), (commas[0] + 1, close - 1)
        if any(toks[k].kind in ("str", "chr") or toks[k].text in ("[", "{") for k in range(i + 1, close)):
            return
        sa, sb = self.src(*a), self.src(*b)
        if sa == sb:
            return
        if self.declares(a[0], a[1] + 1) or self.declares(b[0], b[1] + 1):
            # a parameter list: only parameters of the same type trade places (their names do)
            if a[1] - a[0] != b[1] - b[0] or self.src(a[0], a[1] - 1) != self.src(b[0], b[1] - 1):
                return
            s, e = toks[a[1]].start, toks[b[1]].end
            between = self.text[toks[a[1]].end : toks[b[1]].start]
            self.add(
                s,
                e,
                toks[b[1]].text + between + toks[a[1]].text,
                "swap-args",
                f"parameters `{toks[a[1]].text}` <-> `{toks[b[1]].text}`",
            )
            return
        s, e = self.span(a[0], b[1])
        between = self.text[toks[a[1]].end : toks[b[0]].start]
        self.add(s, e, sb + between + sa, "swap-args", f"`{_short(sa, 30)}` <-> `{_short(sb, 30)}`")


# ------------------------------------------------------------------------------------------------------------ Python
class PyMutator:
    BINOP = {
        ast.Add: ("+", ["-"]),
        ast.Sub: ("-", ["+"]),
        ast.Mult: ("*", ["/"]),
        ast.Div: ("/", ["*"]),
        ast.FloorDiv: ("//", ["/"]),
        ast.Mod: ("%", ["/"]),
        ast.MatMult: ("@", ["*"]),
        ast.Pow: ("**", ["*"]),
    }
    AUG = {
        ast.Add: ("+=", ["-=", "="]),
        ast.Sub: ("-=", ["+=", "="]),
        ast.Mult: ("*=", ["/="]),
        ast.Div: ("/=", ["*="]),
    }
    CMP = {
        ast.Lt: "<",
        ast.LtE: "<=",
        ast.Gt: ">",
        ast.GtE: ">=",
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.Is: "is",
        ast.IsNot: "is not",
        ast.In: "in",
        ast.NotIn: "not in",
    }
    NEGATION = {
        "<": ">=",
        "<=": ">",
        ">": "<=",
        ">=": "<",
        "==": "!=",
        "!=": "==",
        "is": "is not",
        "is not": "is",
        "in": "not in",
        "not in": "in",
    }
    BOUNDARY = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
    METHODS = _TENSOR_METHODS | {"strip", "lower", "upper", "copy", "item"}
    WRAPPERS = {"sorted", "list", "set", "tuple", "int", "float", "abs", "reversed", "bool"}
    # calls whose two arguments may trade places by definition; two numbers (a shape) trading places are not
    # swapped either: a constant mutant changes each of them
    SYMMETRIC = {
        "assertEqual",
        "assertNotEqual",
        "assertIs",
        "assertIsNot",
        "max",
        "min",
        "isclose",
        "allclose",
        "equal",
        "eq",
        "ne",
    }

    def __init__(self, text: str):
        self.text = text
        self.tree = ast.parse(text)
        starts, pos = [], 0
        for line in text.splitlines(keepends=True):
            starts.append(pos)
            pos += len(line)
        starts.append(pos)
        self.line_starts = starts
        self.edits: list[Edit] = []

    def off(self, lineno: int, col: int) -> int:
        # ast's columns are UTF-8 byte offsets
        line_start = self.line_starts[lineno - 1]
        line = self.text[line_start : self.line_starts[lineno]] if lineno < len(self.line_starts) else ""
        return line_start + len(line.encode()[:col].decode(errors="ignore"))

    def start(self, node) -> int:
        return self.off(node.lineno, node.col_offset)

    def end(self, node) -> int:
        return self.off(node.end_lineno, node.end_col_offset)

    def src(self, node) -> str:
        return self.text[self.start(node) : self.end(node)]

    def add(self, start: int, end: int, replacement: str, operator: str, description: str) -> None:
        self.edits.append(Edit(start, end, replacement, operator, description))

    def find_op(self, a: int, b: int, op: str) -> int | None:
        """Offset of operator `op` between offsets a and b (outside brackets and comments), or None."""
        gap = self.text[a:b]
        pattern = r"\s+".join(map(re.escape, op.split())) if op[0].isalpha() else re.escape(op)
        for m in re.finditer(pattern, gap):
            before = gap[: m.start()]
            if "#" in before.rsplit("\n", 1)[-1]:
                continue
            if op[0].isalpha() and (
                (m.start() > 0 and (gap[m.start() - 1].isalnum() or gap[m.start() - 1] == "_"))
                or (m.end() < len(gap) and (gap[m.end()].isalnum() or gap[m.end()] == "_"))
            ):
                continue
            if op in ("*", "/", "<", ">") and m.end() < len(gap) and gap[m.end()] in "*/=<>":
                continue
            return a + m.start()
        return None

    def find_op_span(self, a: int, b: int, op: str) -> tuple[int, int] | None:
        s = self.find_op(a, b, op)
        if s is None:
            return None
        pattern = r"\s+".join(map(re.escape, op.split())) if op[0].isalpha() else re.escape(op)
        m = re.compile(pattern).match(self.text, s)
        return s, m.end()

    def generate(self) -> list[Edit]:
        self.visit_body(self.tree.body, top=True)
        return self.edits

    def is_docstring(self, stmt) -> bool:
        return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)

    def visit_body(self, body, top: bool = False) -> None:
        for stmt in body:
            if self.is_docstring(stmt):
                continue
            if isinstance(
                stmt,
                (
                    ast.Import,
                    ast.ImportFrom,
                    ast.FunctionDef,
                    ast.AsyncFunctionDef,
                    ast.ClassDef,
                    ast.Global,
                    ast.Nonlocal,
                    ast.Pass,
                ),
            ):
                pass
            else:
                self.add(self.start(stmt), self.end(stmt), "pass", "delete", f"`{_short(self.src(stmt))}` removed")
            self.visit(stmt)

    def visit(self, node) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            return
        if isinstance(node, ast.JoinedStr):
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                self.visit(d)
            self.visit_args(node.args)
            self.visit_body(node.body)
            return
        if isinstance(node, ast.ClassDef):
            for x in node.bases + node.decorator_list:
                self.visit(x)
            self.visit_body(node.body)
            return
        self.mutate(node)
        for field, value in ast.iter_fields(node):
            if (
                field in ("body", "orelse", "finalbody")
                and isinstance(value, list)
                and value
                and isinstance(value[0], ast.stmt)
            ):
                self.visit_body(value)
            elif field == "handlers":
                for h in value:
                    if h.type is not None:
                        self.visit(h.type)
                    self.visit_body(h.body)
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, ast.AST):
                        self.visit(v)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def visit_args(self, args: ast.arguments) -> None:
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(d)

    def negate(self, test) -> None:
        s = self.src(test)
        self.add(self.start(test), self.end(test), f"not ({s})", "negate", f"`{_short(s)}` negated")

    def mutate(self, node) -> None:
        self.mutate_operator(node)
        self.mutate_condition(node)
        if isinstance(node, ast.Call):
            self.mutate_call(node)

    def mutate_operator(self, node) -> None:
        """The operator, constant and loop-control mutants of NODE (at most one kind applies)."""
        if isinstance(node, ast.BinOp) and type(node.op) in self.BINOP:
            op, repl = self.BINOP[type(node.op)]
            sp = self.find_op_span(self.end(node.left), self.start(node.right), op)
            if sp:
                for v in repl:
                    self.add(sp[0], sp[1], v, "arith", f"`{op}` -> `{v}`")
        elif isinstance(node, ast.AugAssign) and type(node.op) in self.AUG:
            op, repl = self.AUG[type(node.op)]
            sp = self.find_op_span(self.end(node.target), self.start(node.value), op)
            if sp:
                for v in repl:
                    self.add(sp[0], sp[1], v, "arith", f"`{op}` -> `{v}`")
        elif isinstance(node, ast.Compare):
            self.mutate_compare(node)
        elif isinstance(node, ast.BoolOp):
            self.mutate_boolop(node)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.add(self.start(node), self.start(node.operand), "", "logical", "`not` removed")
        elif isinstance(node, ast.Constant):
            self.mutate_constant(node)
        elif isinstance(node, (ast.Break, ast.Continue)):
            v = "continue" if isinstance(node, ast.Break) else "break"
            self.add(self.start(node), self.end(node), v, "increment", f"`{self.src(node)}` -> `{v}`")

    def mutate_compare(self, node: ast.Compare) -> None:
        left = node.left
        for op_node, right in zip(node.ops, node.comparators):
            op = self.CMP[type(op_node)]
            sp = self.find_op_span(self.end(left), self.start(right), op)
            if sp:
                self.add(sp[0], sp[1], self.NEGATION[op], "relational", f"`{op}` -> `{self.NEGATION[op]}`")
                if op in self.BOUNDARY:
                    self.add(sp[0], sp[1], self.BOUNDARY[op], "boundary", f"`{op}` -> `{self.BOUNDARY[op]}`")
            left = right

    def mutate_boolop(self, node: ast.BoolOp) -> None:
        op = "and" if isinstance(node.op, ast.And) else "or"
        other = "or" if op == "and" else "and"
        vals = node.values
        for a, b in zip(vals, vals[1:]):
            sp = self.find_op_span(self.end(a), self.start(b), op)
            if sp:
                self.add(sp[0], sp[1], other, "logical", f"`{op}` -> `{other}`")
        for k, v in enumerate(vals):
            if k == 0:
                s, e = self.start(v), self.start(vals[1])
            else:
                s, e = self.end(vals[k - 1]), self.end(v)
            self.add(s, e, "", "logical", f"operand `{_short(self.src(v))}` of `{op}` dropped")

    def mutate_constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bool):
            v = "False" if node.value else "True"
            self.add(self.start(node), self.end(node), v, "constant", f"`{node.value}` -> `{v}`")
        elif isinstance(node.value, (int, float)) and not isinstance(node.value, complex):
            lit = self.src(node)
            for v in number_variants(lit, python=True):
                self.add(self.start(node), self.end(node), v, "constant", f"`{lit}` -> `{v}`")

    def mutate_condition(self, node) -> None:
        """Each condition of NODE negated: if, while, conditional expression, comprehension filter, assert."""
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            self.negate(node.test)
        elif isinstance(node, ast.comprehension):
            for c in node.ifs:
                self.negate(c)
        elif isinstance(node, ast.Assert):
            self.negate(node.test)

    def mutate_call(self, node: ast.Call) -> None:
        """A call dropped (a method's or a wrapper's) and its two arguments swapped."""
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in self.METHODS:
            self.add(
                self.start(node),
                self.end(node),
                self.src(f.value),
                "drop-call",
                f"`{_short(self.text[self.end(f.value) : self.end(node)], 40)}` removed",
            )
        elif (
            isinstance(f, ast.Name)
            and f.id in self.WRAPPERS
            and len(node.args) == 1
            and not node.keywords
            and not isinstance(node.args[0], ast.Starred)
        ):
            self.add(
                self.start(node),
                self.end(node),
                self.src(node.args[0]),
                "drop-call",
                f"`{f.id}(...)` removed, its argument kept",
            )
        args = node.args
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if (
            len(args) == 2
            and name not in self.SYMMETRIC
            and not any(isinstance(a, ast.Starred) for a in args)
            and not any(isinstance(a, ast.Constant) and isinstance(a.value, (str, bytes)) for a in args)
            and not all(isinstance(a, ast.Constant) for a in args)
        ):
            sa, sb = self.src(args[0]), self.src(args[1])
            if sa != sb:
                between = self.text[self.end(args[0]) : self.start(args[1])]
                self.add(
                    self.start(args[0]),
                    self.end(args[1]),
                    sb + between + sa,
                    "swap-args",
                    f"`{_short(sa, 30)}` <-> `{_short(sb, 30)}`",
                )


# ---------------------------------------------------------------------------------------------------------- mutants
def edits_of(name: str, text: str) -> list[Edit]:
    if name.endswith(PY_SUFFIXES):
        return PyMutator(text).generate()
    if name.endswith(CPP_SUFFIXES):
        return CppMutator(text).generate()
    return []


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]*)[>"]', re.M)


def gpu_only_lines(name: str, text: str, names: tuple[str, ...] = ()) -> set[int]:
    """Lines that only a CUDA device runs: all of a CUDA source (.cu, .cuh, or a file that includes a CUDA header);
    in Python, the body of a def or class whose name or decorators say cuda (`OnCuda`, `@skipUnless(HAS_CUDA)`) or
    whose name is in `names` (opcourse/mutation/gpu_only.json: code only a GPU row reads)."""
    lines = set(range(1, text.count("\n") + 2))
    if name.endswith((".cu", ".cuh")) or any("cuda" in inc.lower() for inc in _INCLUDE.findall(text)):
        return lines if name.endswith(CPP_SUFFIXES) else set()
    if not name.endswith(PY_SUFFIXES):
        return set()
    out: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            decorators = " ".join(ast.get_source_segment(text, d) or "" for d in node.decorator_list)
            if "cuda" in node.name.lower() or "cuda" in decorators.lower() or node.name in names:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.update(range(first, node.end_lineno + 1))
    return out


def mutants_of_text(exercise: str, name: str, text: str, gpu_names: tuple[str, ...] = ()) -> list[Mutant]:
    """Every mutant of one file, in file order; two edits that give the same text are one mutant."""
    gpu = gpu_only_lines(name, text, gpu_names)
    seen: set[str] = set()
    out = []
    edits = sorted(edits_of(name, text), key=lambda e: (e.start, e.end, OPERATORS.index(e.operator)))
    for e in edits:
        mutated = text[: e.start] + e.replacement + text[e.end :]
        if mutated == text:
            continue
        mid = mutant_id(exercise, name, mutated)
        if mid in seen:
            continue
        seen.add(mid)
        out.append(mutant_of_edit(exercise, name, text, e, mid, gpu))
    return out


def mutant_of_edit(exercise: str, name: str, text: str, e: Edit, mid: str, gpu_lines: set[int]) -> Mutant:
    """The mutant of one edit of `text` (whose mutated text has id `mid`): its patch, line and column."""
    old, new = line_patch(text, e.start, e.end, e.replacement)
    line = text.count("\n", 0, e.start) + 1
    col = e.start - (text.rfind("\n", 0, e.start) + 1) + 1
    return Mutant(exercise, name, line, col, e.operator, e.description, old, new, mid, line in gpu_lines)


def mutated_id(exercise: str, name: str, text: str, patch_edits: list) -> str:
    """The id of the mutant a patch ([[OLD, NEW], ...] over `text`) makes: what an equivalents entry is matched by."""
    for old, new in patch_edits:
        text = text.replace(old, new, 1)
    return mutant_id(exercise, name, text)
