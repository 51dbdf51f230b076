"""The complexity report: per family of code declared in rules.toml, every file's lines and every function's length,
cyclomatic number and nesting (measured by lizard), against the family's limits. Prints each family's worst functions
and every function or file over a limit; writes the full report with --report.

    python3 tools/style/complexity.py [--report FILE.md] [--root CLONE]

Exit status: 0 within the limits, 1 over one (each named), 77 the tools cannot be had here.
"""

import argparse
import csv
import io
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUFFIXES = {"cpp": (".cpp", ".hpp", ".h", ".cu", ".cuh"), "python": (".py",)}


@dataclass
class Function:
    file: str
    name: str
    line: int
    length: int
    ccn: int
    nesting: int | None  # None where lizard does not measure it


def tool_bin() -> Path:
    r = subprocess.run([str(HERE / "maintainer_env.sh")], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"SKIPPED: {r.stderr.strip() or 'the maintainers tools could not be installed'}", file=sys.stderr)
        sys.exit(77 if r.returncode == 77 else 1)
    return Path(r.stdout.strip())


def files_of(root: Path, family: dict) -> list[Path]:
    found = []
    for folder in family["paths"]:
        found += [p for p in sorted((root / folder).rglob("*")) if p.suffix in SUFFIXES[family["language"]]]
    return [p for p in found if "__pycache__" not in p.parts]


def measure(bin_dir: Path, root: Path, family: dict, files: list[Path]) -> list[Function]:
    if not files:  # lizard given no file would measure the whole folder
        return []
    nesting = family["language"] == "cpp"
    argv = [str(bin_dir / "lizard"), "--csv", "-l", family["language"], *(["-ENS"] if nesting else [])]
    r = subprocess.run(argv + [str(p.relative_to(root)) for p in files], cwd=root, capture_output=True, text=True)
    if not r.stdout.strip():
        raise SystemExit(f"lizard measured nothing in {family['name']}: {r.stderr.strip()}")
    # lizard's CSV: NLOC, CCN, tokens, parameters, length, location, file, name, long name, start, end[, nesting]
    return [
        Function(
            file=row[6],
            name=row[7],
            line=int(row[9]),
            length=int(row[4]),
            ccn=int(row[1]),
            nesting=int(row[11]) if nesting else None,
        )
        for row in csv.reader(io.StringIO(r.stdout))
        if len(row) >= 11
    ]


def breaches(family: dict, functions: list[Function], line_counts: dict[str, int]) -> list[str]:
    found = []
    limit = family.get("max_file_lines")
    for path, n in line_counts.items():
        if limit and n > limit:
            found.append(f"{path}: {n} lines (limit {limit})")
    for f in functions:
        where = f"{f.file}:{f.line}: {f.name}"
        if f.length > family["max_function_length"]:
            found.append(f"{where}: {f.length} lines (limit {family['max_function_length']})")
        if f.ccn > family["max_ccn"]:
            found.append(f"{where}: cyclomatic number {f.ccn} (limit {family['max_ccn']})")
        if f.nesting is not None and "max_nesting" in family and f.nesting > family["max_nesting"]:
            found.append(f"{where}: nesting {f.nesting} (limit {family['max_nesting']})")
    return found


def report(family: dict, functions: list[Function], line_counts: dict[str, int], over: list[str]) -> str:
    limits = ", ".join(f"{k} {v}" for k, v in family.items() if k.startswith("max_"))
    out = [
        f"## {family['name']} ({', '.join(family['paths'])})",
        "",
        f"Limits: {limits}.",
        "",
        f"{len(line_counts)} files, {len(functions)} functions; over a limit: {len(over) or 'none'}.",
        "",
    ]
    out += [f"- {b}" for b in over]
    out += ["", "| function | file:line | length | cyclomatic | nesting |", "|---|---|---|---|---|"]
    for f in sorted(functions, key=lambda f: (-f.length, -f.ccn)):
        out.append(
            f"| `{f.name}` | {f.file}:{f.line} | {f.length} | {f.ccn} | {'' if f.nesting is None else f.nesting} |"
        )
    out += ["", "| file | lines |", "|---|---|"]
    out += [f"| {p} | {n} |" for p, n in sorted(line_counts.items(), key=lambda kv: -kv[1])]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", type=Path, help="write the full report (Markdown) here")
    ap.add_argument("--root", type=Path, default=HERE.parents[1], help="the clone to measure (default: this one)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    families = tomllib.loads((HERE / "rules.toml").read_text())["complexity"]
    bin_dir = tool_bin()
    sections, all_over = ["# Complexity report", ""], []
    for family in families:
        files = files_of(root, family)
        line_counts = {str(p.relative_to(root)): len(p.read_text(errors="replace").splitlines()) for p in files}
        functions = measure(bin_dir, root, family, files)
        over = breaches(family, functions, line_counts)
        all_over += over
        worst = sorted(functions, key=lambda f: -f.length)[:3]
        print(
            f"{family['name']}: {len(files)} files, {len(functions)} functions, "
            f"{len(over)} over a limit; longest: " + "; ".join(f"{f.name} {f.length} lines" for f in worst)
        )
        sections.append(report(family, functions, line_counts, over))
    for b in all_over:
        print(f"over a limit: {b}")
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(sections))
        print(f"report: {args.report}")
    return 1 if all_over else 0


if __name__ == "__main__":
    sys.exit(main())
