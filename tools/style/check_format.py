"""Checks (or, with --fix, applies) the course's formatting: clang-format on the course's own C++, ruff format and ruff
check on its Python. Which files, and which are left as written, is declared in rules.toml.

    python3 tools/style/check_format.py [--fix] [--root CLONE]

Exit status: 0 formatted, 1 not (each file named, with the command that fixes it), 77 the tools cannot be had here.
"""

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def tool_bin() -> Path:
    """The maintainers' tool environment (tools/style/maintainer_env.sh), or exit 77 with its reason."""
    r = subprocess.run([str(HERE / "maintainer_env.sh")], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"SKIPPED: {r.stderr.strip() or 'the maintainers tools could not be installed'}", file=sys.stderr)
        sys.exit(77 if r.returncode == 77 else 1)
    return Path(r.stdout.strip())


def tracked(root: Path) -> list[str]:
    r = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True)
    return [p for p in r.stdout.split("\0") if p and (root / p).is_file()]


def under(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def cpp_files(files: list[str], rules: dict) -> list[str]:
    return [p for p in files if under(p, rules["cpp_paths"]) and Path(p).suffix in rules["cpp_suffixes"]]


def python_files(files: list[str], rules: dict) -> list[str]:
    return [p for p in files if p.endswith(".py") and not under(p, rules["python_exclude"])]


def check_cpp(bin_dir: Path, root: Path, files: list[str], fix: bool) -> list[str]:
    """The files clang-format would change (after changing them, with fix)."""
    if not files:
        return []
    if fix:
        subprocess.run([str(bin_dir / "clang-format"), "-i", *files], cwd=root, check=True)
        return []
    r = subprocess.run([str(bin_dir / "clang-format"), "--dry-run", *files], cwd=root, capture_output=True, text=True)
    # clang-format's warnings read "FILE:LINE:COL: warning: code should be clang-formatted"
    return sorted({line.split(":", 1)[0] for line in r.stderr.splitlines() if "clang-format" in line})


def check_python(bin_dir: Path, root: Path, files: list[str], fix: bool) -> tuple[list[str], str]:
    """The files ruff format would change, and ruff check's findings (after fixing what ruff can, with fix)."""
    if not files:
        return [], ""
    ruff = str(bin_dir / "ruff")
    if fix:
        subprocess.run([ruff, "check", "--fix", "--quiet", *files], cwd=root)
        subprocess.run([ruff, "format", "--quiet", *files], cwd=root, check=True)
    r = subprocess.run(
        [ruff, "format", "--check", "--output-format", "concise", *files], cwd=root, capture_output=True, text=True
    )
    # concise lines read "FILE:LINE:COL: unformatted: File would be reformatted"
    unformatted = sorted({line.split(":", 1)[0] for line in r.stdout.splitlines() if ": unformatted:" in line})
    lint = subprocess.run(
        [ruff, "check", "--output-format", "concise", *files], cwd=root, capture_output=True, text=True
    )
    return unformatted, lint.stdout.strip() if lint.returncode != 0 else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fix", action="store_true", help="apply the formatters instead of checking")
    ap.add_argument("--root", type=Path, default=HERE.parents[1], help="the clone to check (default: this one)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    rules = tomllib.loads((HERE / "rules.toml").read_text())["format"]
    bin_dir = tool_bin()
    files = tracked(root)
    cpp, py = cpp_files(files, rules), python_files(files, rules)
    bad_cpp = check_cpp(bin_dir, root, cpp, args.fix)
    bad_py, lint = check_python(bin_dir, root, py, args.fix)
    print(
        f"clang-format: {len(cpp) - len(bad_cpp)} of {len(cpp)} C++ files formatted; "
        f"ruff format: {len(py) - len(bad_py)} of {len(py)} Python files formatted; "
        f"ruff check: {'findings below' if lint else 'clean'}"
    )
    for path in bad_cpp:
        print(f"not formatted (clang-format): {path}")
    for path in bad_py:
        print(f"not formatted (ruff format): {path}")
    if lint:
        print(lint)
    if bad_cpp or bad_py or lint:
        print("fix with: python3 tools/style/check_format.py --fix (then review the diff)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
