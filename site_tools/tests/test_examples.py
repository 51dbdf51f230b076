"""The example scripts the chapters include still print what the chapters show: each is run from the course root
(against the built reference solutions and planted libraries), and what it prints must be the output block the chapter
shows after including it (the first ```text or ```console block after the include line). A ```console block also
shows the command, which must be the one run here, and may end with `$ echo $?` and the exit status.

usage: test_examples.py BUILD_DIR"""

import difflib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from sitelib import COURSE_ROOT


# Run-to-run variation that a chapter cannot pin down. A normaliser is applied to every line of both the real output
# and the chapter's block, so what is compared is what is stable; examples without one are compared exactly.
NORMALISERS = {
    # A profiler table: its durations and percentages change with every run (and the widths of its columns follow the
    # widest number), so each number with a unit becomes <t> and runs of spaces collapse. The row names, their order
    # and the call counts are still compared.
    "timings": lambda line: " ".join(re.sub(r"\d+(?:\.\d+)?(?:%|us|ms|s)(?!\w)", "<t>", line).split()),
    # chapter 11's overhead table: a median per call in microseconds; the rows and their order are still compared
    "medians": lambda line: re.sub(r"\b\d+\.\d+ us\b", "<t> us", line),
    # unittest's summary line says how long the run took ("Ran 2 tests in 0.000s"); the test count is still compared.
    "unittest_time": lambda line: re.sub(r"^(Ran \d+ tests? in )\d+\.\d+s$", r"\1<t>s", line),
}


@dataclass(frozen=True)
class Example:
    include: str  # the snippet the chapter includes: a path, or path:region
    chapter: str
    # run in a scratch root whose build/ is the build tree: "python" is this test's interpreter, and a path under
    # site_tools/ is the course's file; rendered as a shell line (env first), it is the command a ```console block shows
    command: tuple
    env: dict = field(default_factory=dict)  # added to the environment
    status: int = 0  # the exit status the example must end with
    stderr: bool = False  # compare stdout and stderr merged, as a terminal shows them (unittest writes to stderr)
    normalise: tuple = ()  # names from NORMALISERS, for output with timings
    needs_cuda: bool = False  # its output needs a CUDA device: without one it is reported skipped, never passed


EXAMPLES = [
    Example(
        "site_tools/examples/explain_scale_add.py",
        "chapters/01_custom_op.md",
        ("python", "site_tools/examples/explain_scale_add.py"),
        env={"PYTHONPATH": "build/twins"},
    ),
    # TORCH_LOGS switches the graph-break log on; the script prints the records it kept (stdout), the log is stderr
    Example(
        "site_tools/examples/graph_breaks.py",
        "chapters/01_custom_op.md",
        ("python", "site_tools/examples/graph_breaks.py"),
        env={"TORCH_LOGS": "graph_breaks", "PYTHONPATH": "build/twins"},
    ),
    Example(
        "site_tools/examples/inspect_schema.py",
        "chapters/02_schema.md",
        ("python", "site_tools/examples/inspect_schema.py"),
    ),
    Example(
        "site_tools/examples/print_schema.cpp:inspect",
        "chapters/02_schema.md",
        ("build/print_schema", "build/lib/solutions/02_schema/libmm16_schema.so"),
    ),
    Example(
        "site_tools/examples/contract_errors.py",
        "chapters/03_cpu.md",
        ("python", "site_tools/examples/contract_errors.py"),
    ),
    Example(
        "site_tools/examples/check_family.py", "chapters/03_cpu.md", ("python", "site_tools/examples/check_family.py")
    ),
    Example(
        "site_tools/examples/fake_kernel_in_python.py",
        "chapters/05_fake.md",
        ("python", "site_tools/examples/fake_kernel_in_python.py"),
    ),
    Example("site_tools/examples/sym_check.py", "chapters/05_fake.md", ("python", "site_tools/examples/sym_check.py")),
    Example(
        "site_tools/examples/python_module.py",
        "chapters/05_fake.md",
        ("python", "site_tools/examples/python_module.py"),
    ),
    Example(
        "site_tools/examples/opcheck_fake_tests.py",
        "chapters/05_fake.md",
        ("python", "site_tools/examples/opcheck_fake_tests.py"),
    ),
    Example(
        "site_tools/examples/backward_in_python.py",
        "chapters/06_autograd.md",
        ("python", "site_tools/examples/backward_in_python.py"),
    ),
    Example(
        "site_tools/examples/autograd_both_paths.py",
        "chapters/06_autograd.md",
        ("python", "site_tools/examples/autograd_both_paths.py"),
    ),
    Example(
        "site_tools/examples/gradcheck_negative_control.py",
        "chapters/06_autograd.md",
        ("python", "site_tools/examples/gradcheck_negative_control.py"),
    ),
    Example(
        "site_tools/examples/upstream_gradient_views.py",
        "chapters/06_autograd.md",
        ("python", "site_tools/examples/upstream_gradient_views.py"),
    ),
    Example(
        "site_tools/examples/opcheck_wrong_operator.py",
        "chapters/07_testing.md",
        ("python", "site_tools/examples/opcheck_wrong_operator.py"),
    ),
    # the planted library calls exit(1) in the middle of the test run: the status and the cut-off output are the point
    Example(
        "site_tools/examples/test_in_process.py",
        "chapters/07_testing.md",
        ("python", "site_tools/examples/test_in_process.py", "-v"),
        env={"MM16_LIBRARY": "build/harness_targets/exit_on_invalid/libmm16_autograd.so"},
        status=1,
        stderr=True,
    ),
    # the chapter shows the run "on a machine without a GPU": hide any device, so a GPU machine prints the same
    Example(
        "site_tools/examples/test_split.py",
        "chapters/07_testing.md",
        ("python", "site_tools/examples/test_split.py", "-v"),
        env={"CUDA_VISIBLE_DEVICES": ""},
        stderr=True,
        normalise=("unittest_time",),
    ),
    Example(
        "site_tools/examples/profile_mm16_cpu.py",
        "chapters/08_profiling.md",
        ("python", "site_tools/examples/profile_mm16_cpu.py"),
        normalise=("timings",),
    ),
    Example(
        "site_tools/examples/undeclared_mutation.py:two_ways",
        "chapters/11_python_ops.md",
        ("python", "site_tools/examples/undeclared_mutation.py"),
    ),
    Example(
        "site_tools/examples/triton_interpreter.py:interpret",
        "chapters/11_python_ops.md",
        ("python", "site_tools/examples/triton_interpreter.py"),
        env={"CUDA_VISIBLE_DEVICES": ""},
    ),
    # the table of what a CPU shows (the GPU's rows are GPU evidence, evidence/gpu/): no device, so a GPU machine too
    # prints the chapter's rows
    Example(
        "site_tools/examples/python_op_overhead.py:ways",
        "chapters/11_python_ops.md",
        ("python", "site_tools/examples/python_op_overhead.py"),
        env={"CUDA_VISIBLE_DEVICES": ""},
        normalise=("medians",),
    ),
    Example(
        "site_tools/examples/profile_op_and_twin.py",
        "chapters/08_profiling.md",
        ("python", "site_tools/examples/profile_op_and_twin.py"),
        env={"PYTHONPATH": "build/twins"},
    ),
]

OUTPUT_FENCE = re.compile(r"^(\s*)```(text|console)\b")


def shown_block(lines, include):
    """(fence kind, the block's lines) of the first ```text/```console block after the include line; None if none."""
    start = next((i for i, line in enumerate(lines) if line.strip() == f'--8<-- "{include}"'), None)
    if start is None:
        return None
    for i in range(start + 1, len(lines)):
        m = OUTPUT_FENCE.match(lines[i])
        if m:
            indent, block = m.group(1), []
            for line in lines[i + 1 :]:
                if line.rstrip() == indent + "```":
                    return m.group(2), block
                block.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            return None
    return None


def split_console(block):
    """A ```console block: (the command on its first `$ ` line, continuations joined; the output lines below it;
    the status shown after `$ echo $?`, or None)."""
    if not block or not block[0].startswith("$ "):
        return None, block, None
    i, command = 0, block[0][2:]
    while command.endswith("\\") and i + 1 < len(block):
        i += 1
        command = command[:-1].rstrip() + " " + block[i].strip()
    output, status = [], None
    for j in range(i + 1, len(block)):
        if block[j].startswith("$ "):
            if block[j].strip() == "$ echo $?" and j + 1 < len(block):
                status = block[j + 1].strip()
            break
        output.append(block[j])
    return command, output, status


def normalised(lines, names):
    out = [line.rstrip() for line in lines]
    for name in names:
        out = [NORMALISERS[name](line) for line in out]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return out


@functools.cache
def cuda_available():
    import torch  # only when an example needs to know: importing torch takes seconds

    return torch.cuda.is_available()


def check(example, scratch):
    """(problems, skipped reason or None) of one example."""
    problems = []
    name = " ".join(example.command[1:] if example.command[0] == "python" else example.command)
    with open(os.path.join(COURSE_ROOT, example.chapter)) as f:
        lines = f.read().splitlines()
    if not any(line.strip() == f'--8<-- "{example.include}"' for line in lines):
        return [f'{example.chapter} no longer includes --8<-- "{example.include}"'], None
    shown = shown_block(lines, example.include)
    if shown is None:
        return [
            f"{example.chapter} shows no ```text or ```console block of output after including {example.include}"
        ], None
    kind, block = shown
    shown_status = None
    if kind == "console":
        shown_command, block, shown_status = split_console(block)
        command = " ".join([f"{k}={v}" for k, v in example.env.items()] + list(example.command))
        if shown_command is None:
            problems.append(f"{example.chapter}: the ```console block after {example.include} shows no `$ ` command")
        elif shown_command != command:
            problems.append(
                f"{example.chapter} shows the command\n    $ {shown_command}\n  but the example is run as\n"
                f"    $ {command}"
            )
        if shown_status is not None and shown_status != str(example.status):
            problems.append(
                f"{example.chapter} shows exit status {shown_status} for {name}, but this test expects {example.status}"
            )
    if example.needs_cuda and not cuda_available():
        return problems, "needs a CUDA device, and torch.cuda.is_available() is False here"
    argv = [sys.executable if example.command[0] == "python" else example.command[0]]
    argv += [os.path.join(COURSE_ROOT, a) if a.startswith("site_tools/") else a for a in example.command[1:]]
    proc = subprocess.run(
        argv,
        cwd=scratch,
        env={**os.environ, **example.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if example.stderr else subprocess.PIPE,
        text=True,
        timeout=300,
    )
    if proc.returncode != example.status:
        problems.append(
            f"{name} exited with status {proc.returncode}, expected {example.status}:\n"
            f"{(proc.stderr or proc.stdout)[-2000:]}"
        )
        return problems, None
    real = normalised(proc.stdout.splitlines(), example.normalise)
    expected = normalised(block, example.normalise)
    if real != expected:
        diff = difflib.unified_diff(
            expected, real, f"{example.chapter} (shown after the include)", f"{name} (printed now)", lineterm="", n=1
        )
        how = f" (compared after the normalisers {', '.join(example.normalise)})" if example.normalise else ""
        problems.append(f"{name} no longer prints what {example.chapter} shows{how}:\n    " + "\n    ".join(diff))
    return problems, None


INCLUDED_SCRIPT = re.compile(r'^\s*--8<-- "(site_tools/examples/[^":]+\.py)"\s*$')


def unlisted_scripts(chapters=os.path.join(COURSE_ROOT, "chapters")):
    """Problems: a Python example a chapter includes that EXAMPLES does not run (its output would go unchecked)."""
    listed = {e.include for e in EXAMPLES}
    problems = []
    for name in sorted(os.listdir(chapters)):
        if not name.endswith(".md"):
            continue
        with open(os.path.join(chapters, name)) as f:
            for line in f:
                m = INCLUDED_SCRIPT.match(line)
                if m and m.group(1) not in listed:
                    problems.append(
                        f"chapters/{name} includes {m.group(1)}, which this test does not run: add it to "
                        "EXAMPLES in site_tools/tests/test_examples.py, so the output shown is checked"
                    )
    return problems


def main_catches():
    """The completeness rule catches a chapter that includes an example this test does not run, however indented (an
    include inside a tab or an admonition), and passes the chapters as they are."""
    found = unlisted_scripts()
    failures = [f"the chapters as they are: {p}" for p in found]
    with tempfile.TemporaryDirectory() as tmp:
        for indent in ("", "    "):
            shutil.copytree(os.path.join(COURSE_ROOT, "chapters"), os.path.join(tmp, "c"), dirs_exist_ok=True)
            with open(os.path.join(tmp, "c", "03_cpu.md"), "a") as f:
                f.write(f'\n```python\n{indent}--8<-- "site_tools/examples/not_run_anywhere.py"\n```\n')
            found = unlisted_scripts(os.path.join(tmp, "c"))
            if not any("chapters/03_cpu.md includes site_tools/examples/not_run_anywhere.py" in p for p in found):
                failures.append(f"an unlisted example included with indent {indent!r} was not reported: {found}")
    for f in failures:
        print("FAIL:", f)
    print(f"site/examples_catches: {3 - len(failures)} of 3 as expected")
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--catches"]:
        return main_catches()
    build = os.path.abspath(sys.argv[1])
    # the scripts name build/...; run them in a scratch root whose build/ is this build tree
    scratch = os.path.join(build, "example-root")
    os.makedirs(scratch, exist_ok=True)
    link = os.path.join(scratch, "build")
    if not os.path.islink(link):
        os.symlink(build, link)
    problems, passed, skipped = unlisted_scripts(), 0, []
    for example in EXAMPLES:
        found, skip = check(example, scratch)
        problems += found
        if skip and not found:
            skipped.append(example.include)
            print(f"SKIPPED {example.include} ({example.chapter}): {skip}")
        elif not found:
            passed += 1
            print(f"ok      {example.include} ({example.chapter})")
        else:
            print(f"FAIL    {example.include} ({example.chapter})")
    for p in problems:
        print("FAIL:", p)
    skips = f", {len(skipped)} SKIPPED, not run for want of a CUDA device: {', '.join(skipped)}" if skipped else ""
    print(f"site/examples: {len(EXAMPLES)} examples, {passed} passed{skips}, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
