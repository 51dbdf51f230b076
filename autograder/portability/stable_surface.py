"""What the LibTorch stable ABI offers, read from the headers of a torch: each wrapper and the oldest target it needs.

    python autograder/portability/stable_surface.py [--torch-include DIR] [--json]

Walks torch/csrc/stable/*.h and torch/headeronly/**/*.h of the torch this python imports (or DIR), keeps every
function, class and macro they declare, and the TORCH_FEATURE_VERSION gate around it: `#if TORCH_FEATURE_VERSION >=
TORCH_VERSION_2_13_0` makes Stream::nativeHandle need a 2.13 target. Chapter 10's table of what the stable API lacks
against chapters 3-6 is checked against this list (a name it says is absent must be absent; a version it gives must be
the gate found here), so the table follows the pinned torch."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

_GATE = re.compile(r"#\s*if\s+TORCH_FEATURE_VERSION\s*(>=|<)\s*TORCH_VERSION_(\d+)_(\d+)_\d+")
_FUNCTION = re.compile(
    r"^\s*(?:inline\s+|static\s+|constexpr\s+|explicit\s+|virtual\s+|const\s+)*(?P<type>[\w:<>,]+[\s*&]+)(?P<name>\w+)\s*\("
)
_NOT_TYPES = {"return", "else", "new", "delete", "throw", "case", "goto", "using", "typedef"}
_CLASS = re.compile(r"^\s*(?:class|struct|enum\s+class|enum)\s+(\w+)\b(?!;)")  # enum class: ScalarType
_MACRO = re.compile(r"^\s*#\s*define\s+(\w+)")
_NOT_NAMES = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "static_assert", "defined"}


def torch_include() -> str:
    import torch.utils.cpp_extension as ext

    return ext.include_paths()[0]


def _headers(include: str):
    for sub in ("torch/csrc/stable", "torch/headeronly"):
        top = os.path.join(include, sub)
        for folder, _dirs, files in sorted(os.walk(top)):
            for name in sorted(files):
                if name.endswith(".h"):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, include), path


def scan(include: str) -> dict[str, list[dict]]:
    """{name: [{"header": ..., "since": "2.13" or None}, ...]}: per header that declares the name, the lowest gate a
    declaration of it there sits under (None: no gate)."""
    found: dict[str, list[dict]] = {}
    for rel, path in _headers(include):
        stack: list[str | None] = []  # per open #if: the version it requires, or None
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                stripped = line.strip()
                if stripped.startswith("#if"):
                    gate = _GATE.match(stripped)
                    stack.append(f"{gate.group(2)}.{gate.group(3)}" if gate and gate.group(1) == ">=" else None)
                    continue
                if stripped.startswith("#else") and stack:
                    stack[-1] = None  # the older branch: no requirement for what follows
                    continue
                if stripped.startswith("#endif"):
                    if stack:
                        stack.pop()
                    continue
                if stripped.startswith(("//", "*", "/*")):
                    continue
                m = _MACRO.match(line) or _CLASS.match(line)
                name = m.group(1) if m else None
                if not m:
                    m = _FUNCTION.match(line)
                    if not m or m.group("type").strip() in _NOT_TYPES:
                        continue
                    name = m.group("name")
                if name in _NOT_NAMES:
                    continue
                gates = [g for g in stack if g]
                since = max(gates, key=lambda v: tuple(map(int, v.split(".")))) if gates else None
                places = found.setdefault(name, [])
                same = [p for p in places if p["header"] == rel]
                if not same:
                    places.append({"header": rel, "since": since})
                elif same[0]["since"] and (since is None or _older(since, same[0]["since"])):
                    same[0]["since"] = since  # the lowest gate of its declarations in that header
    return found


def _older(a: str, b: str) -> bool:
    return tuple(map(int, a.split("."))) < tuple(map(int, b.split(".")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-include", help="a torch's include folder (default: the torch this python imports)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    surface = scan(args.torch_include or torch_include())
    if args.json:
        json.dump(surface, sys.stdout, indent=1, sort_keys=True)
        print()
    else:
        for name, places in sorted(surface.items()):
            for where in places:
                print(f"{name:45} {where['since'] or '-':6} {where['header']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
