"""ctest style/format and style/complexity: the clone passes its style checks, and each check is shown to catch what it
exists for on a planted copy (a misformatted C++ and Python file; an over-long function, a too-branchy one, a
too-deeply nested one and an over-long file in the judge's folder; an over-long function in opcourse/).

    python3 tools/style/test_style.py format|complexity
"""

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, str(HERE / script), *args], capture_output=True, text=True)
    if r.returncode == 77:
        print(r.stderr.strip())
        sys.exit(77)
    return r


def expect(cond: bool, what: str, r: subprocess.CompletedProcess) -> None:
    if not cond:
        sys.exit(f"FAIL: {what}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}")
    print(f"ok: {what}")


def planted_clone(files: dict[str, str]) -> Path:
    root = Path(tempfile.mkdtemp(prefix="style-planted-"))
    for name in (".clang-format", "ruff.toml"):
        (root / name).write_text((ROOT / name).read_text())
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


def test_format() -> None:
    r = run("check_format.py")
    expect(r.returncode == 0, "the clone is formatted (clang-format, ruff format, ruff check)", r)
    root = planted_clone(
        {
            "autograder/judge/planted.cpp": "int   f( int x ){return x+1;}\n",
            "autograder/judge/fine.cpp": "int g(int x) { return x + 1; }\n",
            "opcourse/planted.py": "def f( x ):\n    return x+1\n",
            "opcourse/lint.py": "import os\n\n\ndef f(x):\n    return x\n",
            "autograder/planted/03_cpu/left_alone/mm16_cpu.cpp": "int   kept( int x ){return x;}\n",
            "solutions/07_testing/test_kept.py": "def kept( x ):\n    return x\n",
        }
    )
    r = run("check_format.py", "--root", str(root))
    expect(r.returncode == 1, "a planted misformatted copy fails", r)
    expect("not formatted (clang-format): autograder/judge/planted.cpp" in r.stdout, "the C++ file is named", r)
    expect("fine.cpp" not in r.stdout, "a formatted C++ file is not named", r)
    expect("not formatted (ruff format): opcourse/planted.py" in r.stdout, "the Python file is named", r)
    expect("opcourse/lint.py" in r.stdout and "F401" in r.stdout, "ruff check's finding (an unused import) is shown", r)
    expect("left_alone" not in r.stdout, "a planted submission is left as written", r)
    expect("test_kept" not in r.stdout, "a reference solution's Python is left as written", r)


def test_complexity() -> None:
    report = ROOT / "build" / "complexity.md"
    r = run("complexity.py", "--report", str(report))
    print(r.stdout)
    expect(r.returncode == 0, "every family of tools/style/rules.toml is within its limits", r)
    long_body = "".join(f"  x += {i};\n" for i in range(90))
    branches = "".join(f"  if (x == {i}) return {i};\n" for i in range(45))
    nested = "  " + "".join("if (x) { " for _ in range(8)) + "x++;" + " }" * 8 + "\n"
    padding = "".join(f"// line {i}\n" for i in range(520))
    root = planted_clone(
        {
            "autograder/judge/long.cpp": f"int long_one(int x) {{\n{long_body}  return x;\n}}\n",
            "autograder/judge/branchy.cpp": f"int branchy(int x) {{\n{branches}  return 0;\n}}\n",
            "autograder/judge/nested.cpp": f"int nested(int x) {{\n{nested}  return x;\n}}\n",
            "autograder/checks/big.cpp": padding + "int small(int x) { return x; }\n",
            "autograder/checks/fine.cpp": "int fine(int x) { return x; }\n",
            "opcourse/long.py": "def long_py(x):\n" + "".join(f"    x += {i}\n" for i in range(90)) + "    return x\n",
        }
    )
    r = run("complexity.py", "--root", str(root))
    expect(r.returncode == 1, "a planted copy over the limits fails", r)
    expect("long_one: 93 lines (limit 80)" in r.stdout, "the over-long function is named with its length", r)
    expect("branchy: cyclomatic number 46" in r.stdout, "the branchy function is named with its cyclomatic number", r)
    expect("nested: nesting 8" in r.stdout, "the deeply nested function is named with its depth", r)
    expect("long_py: 92 lines (limit 80)" in r.stdout, "an over-long Python function of opcourse/ is named", r)
    expect("autograder/checks/big.cpp: 521 lines (limit 500)" in r.stdout, "the over-long file is named", r)
    expect("fine" not in r.stdout.split("over a limit", 1)[1], "a small function and file are not named", r)


def test_layout() -> None:
    r = run("check_layout.py")
    expect(r.returncode == 0, "no Python file touches the module search path; opcourse imports no test code", r)
    root = planted_clone(
        {
            "opcourse/cli/edits_path.py": "import sys\n\n" + "sys" + ".path.insert(0, 'autograder/tests')\n",
            "opcourse/cli/imports_a_test.py": "import clitest\n",
            "opcourse/cli/fine.py": "from opcourse import reports\n",
            "tools/tests/clitest.py": "CLI = []\n",
        }
    )
    r = run("check_layout.py", "--root", str(root))
    expect(r.returncode == 1, "a planted copy over the boundaries fails", r)
    expect("opcourse/cli/edits_path.py:3" in r.stdout, "the edit of the search path is named with its line", r)
    expect(
        "opcourse/cli/imports_a_test.py:1: imports clitest, a test module" in r.stdout,
        "the import of test code is named",
        r,
    )
    expect("fine.py" not in r.stdout, "an import of the package is not named", r)


if __name__ == "__main__":
    {"format": test_format, "complexity": test_complexity, "layout": test_layout}[sys.argv[1]]()
