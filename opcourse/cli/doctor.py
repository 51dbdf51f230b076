"""doctor: checks the toolchain the course needs, and prints the command that fixes anything missing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .common import ROOT, say
from .exercises import exercise_ids, load_exercise


def find_course_python() -> str | None:
    if os.environ.get("COURSE_PYTHON"):
        return os.environ["COURSE_PYTHON"]
    try:  # the environment tools/setup.sh makes (its path is computed in one place, tools/venv_path.sh)
        venv = Path(
            subprocess.run(
                ["bash", str(ROOT / "tools" / "venv_path.sh")], capture_output=True, text=True, timeout=60, check=True
            ).stdout.strip()
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return str(venv / "bin" / "python") if (venv / ".complete").is_file() else None


def toolkit_adds() -> str:
    """What a course without the CUDA toolkit does not grade, from the exercises' metadata: rows and points."""
    from .. import metadata as course_metadata

    parts, rows, points = [], 0, 0.0
    for ex in course_metadata.exercise_ids(ROOT):
        needs = [c for c in course_metadata.load(ex, ROOT)["checks"] if c["toolkit"]]
        if needs:
            rows += len(needs)
            points += sum(c["points"] for c in needs)
            parts.append(f"{ex} {len(needs)}")
    return (
        f"{rows} rows worth {points:g} points (by exercise: {', '.join(parts)}): the CUDA kernels, their "
        "cubin and PTX, and every row that runs on a GPU"
    )


def gpu_points() -> float:
    """The points of every exercise's checks that need a CUDA device (exercise.json, the one source)."""
    return sum(c["points"] for ex in exercise_ids() for c in load_exercise(ex)["checks"] if c.get("cuda"))


def run_quiet(argv: list[str], timeout: float = 60) -> tuple[int, str]:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return r.returncode, (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, str(e)


APT = "apt-get update && apt-get install -y --no-install-recommends"


class _Checks:
    """The checks' results in order, (name, ok, detail, fix, required), and where the tools are looked for."""

    def __init__(self) -> None:
        self.deps_root = os.environ.get("COURSE_DEPS_ROOT", "")
        self.results: list[tuple] = []

    def check(self, name, ok, detail, fix, required=True) -> None:
        self.results.append((name, ok, detail, fix, required))

    def which(self, *names) -> str | None:
        # COURSE_DEPS_ROOT: Debian packages unpacked with dpkg -x on a machine with no apt access
        for n in names:
            p = shutil.which(n)
            if p:
                return p
            if self.deps_root and Path(self.deps_root, "usr/bin", n).exists():
                return str(Path(self.deps_root, "usr/bin", n))
        return None


def _check_python(c: _Checks) -> str | None:
    """The course's Python with torch, and a CUDA device torch sees; the CUDA version torch was built for."""
    py = find_course_python()
    torch_cuda = None
    if not py:
        c.check(
            "python + torch",
            False,
            "no course venv and COURSE_PYTHON is unset",
            "tools/setup.sh   (creates the venv; or export COURSE_PYTHON=/path/to/python-with-torch)",
        )
        return None
    rc, out = run_quiet(
        [
            py,
            "-c",
            "import torch, safetensors; n = torch.cuda.device_count(); "
            "print(n, torch.cuda.get_device_name(0) if n else '-'); "
            "print(torch.__version__, torch.version.cuda)",
        ],
        120,
    )
    ok = rc == 0
    if ok:
        gpu_line, out = out.splitlines()[-2], out.splitlines()[-1]
        torch_cuda = out.split()[-1]
        gpus, gpu_name = gpu_line.split(" ", 1)
    c.check(
        "python + torch",
        ok,
        f"{py}: torch {out}" if ok else out.splitlines()[-1] if out else py,
        f"{py} -m pip install -r requirements/course.txt",
    )
    if ok:
        needs = gpu_points()
        c.check(
            "CUDA GPU",
            gpus != "0",
            f"{gpus} x {gpu_name}"
            if gpus != "0"
            else f"none visible to torch: {needs:g} points of the course's checks run only on a GPU; here they are "
            "SKIPPED (not passed), and `./course grade` says `not done` for those exercises",
            "grade the CUDA exercises on a machine with an NVIDIA GPU and its driver (nvidia-smi lists it)",
            False,
        )
    return torch_cuda


def _check_nvcc(c: _Checks) -> tuple[str | None, bool]:
    """nvcc, or what the course does without the toolkit; nvcc's CUDA version and whether COURSE_CUDA=off."""
    nvcc = (
        os.environ.get("CUDACXX")
        or c.which("nvcc")
        or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    )
    nvcc_ver = None
    if nvcc:
        rc, out = run_quiet([nvcc, "--version"])
        m = re.search(r"release (\d+\.\d+)", out)
        nvcc_ver = m.group(1) if m else None
    no_toolkit = os.environ.get("COURSE_CUDA") == "off"
    if nvcc_ver and not no_toolkit:
        c.check("nvcc", True, f"{nvcc} (CUDA {nvcc_ver})", "")
    else:
        adds = toolkit_adds()
        c.check(
            "nvcc",
            False,
            (
                f"COURSE_CUDA=off: the course works without the CUDA toolkit{f' ({nvcc} is here, unused)' if nvcc_ver else ''}"
                if no_toolkit
                else "not found"
            )
            + f"; the toolkit would add {adds}",
            "install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) or export CUDACXX=/path/to/nvcc"
            + ("" if no_toolkit else "; or work without it: export COURSE_CUDA=off (those rows are then SKIPPED)"),
            required=not no_toolkit,
        )
    return nvcc_ver, no_toolkit


def _check_torch_matches_nvcc(c: _Checks, torch_cuda: str | None, nvcc_ver: str | None, no_toolkit: bool) -> None:
    if torch_cuda and nvcc_ver and not no_toolkit:
        same = torch_cuda.split(".")[0] == nvcc_ver.split(".")[0]
        c.check(
            "torch CUDA = nvcc major",
            same,
            f"torch built for CUDA {torch_cuda}, nvcc is {nvcc_ver}",
            f"COURSE_TORCH='torch==VERSION' COURSE_TORCH_INDEX=https://download.pytorch.org/whl/cu{nvcc_ver.split('.')[0]}X "
            "tools/setup.sh   (a torch built for your CUDA, in an environment of its own: README, your machine)",
        )


def _check_build_tools(c: _Checks) -> None:
    """cmake, ninja and a compiler that builds C++20 (compiled, not guessed from its version)."""
    cmake = c.which("cmake")
    if cmake:
        rc, out = run_quiet([cmake, "--version"])
        m = re.search(r"version (\d+)\.(\d+)", out)
        ok = bool(m) and (int(m.group(1)), int(m.group(2))) >= (3, 24)
        c.check(
            "cmake >= 3.24", ok, f"{cmake} {m.group(0) if m else out[:60]}", f"{APT} cmake   (or pip install cmake)"
        )
    else:
        c.check("cmake >= 3.24", False, "not found", f"{APT} cmake")
    ninja = c.which("ninja")
    c.check("ninja", bool(ninja), ninja or "not found", f"{APT} ninja-build")
    cxx = os.environ.get("CXX") or c.which("c++", "g++")
    if cxx:
        rc, out = run_quiet([cxx, "--version"])
        first = out.splitlines()[0] if out else ""
        with tempfile.TemporaryDirectory() as t:
            src = Path(t, "a.cpp")
            src.write_text(
                "#include <span>\n#include <concepts>\nint main(){ std::span<int> s; return (int)s.size(); }\n"
            )
            rc2, out2 = run_quiet([cxx, "-std=c++20", "-c", str(src), "-o", str(Path(t, "a.o"))])
        c.check(
            "C++20 compiler",
            rc2 == 0,
            f"{cxx}: {first}" if rc2 == 0 else f"{cxx} cannot compile C++20: {out2[-200:]}",
            f"{APT} g++   (g++ 12 or newer; or export CXX=/path/to/g++)",
        )
    else:
        c.check("C++20 compiler", False, "no c++ / g++ on PATH", f"{APT} g++")


def _check_headers(c: _Checks) -> None:
    for name, header, pkg in (
        ("doctest headers", "doctest/doctest.h", "doctest-dev"),
        ("nlohmann-json headers", "nlohmann/json.hpp", "nlohmann-json3-dev"),
    ):
        found = next(
            (
                str(p)
                for p in (
                    Path("/usr/include", header),
                    Path(c.deps_root or "/nonexistent", "usr/include", header),
                    Path("/usr/local/include", header),
                )
                if p.is_file()
            ),
            None,
        )
        c.check(name, bool(found), found or "not found", f"{APT} {pkg}")


def _check_optional(c: _Checks) -> None:
    """The tools the course works without: ccache, bubblewrap (that it can sandbox, not only that it is there), chromium."""
    ccache = c.which("ccache")
    c.check("ccache", bool(ccache), ccache or "not found (regrades recompile everything)", f"{APT} ccache", False)
    bwrap = c.which("bwrap")
    if bwrap:
        rc, out = run_quiet([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"])
        c.check(
            "bubblewrap",
            rc == 0,
            bwrap if rc == 0 else f"{bwrap} present but cannot sandbox: {out[-200:]}",
            "allow unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1",
            False,
        )
    else:
        c.check("bubblewrap", False, "not found (grading runs without the sandbox, loudly)", f"{APT} bubblewrap", False)
    chromium = c.which("chromium", "chromium-browser", "google-chrome")
    c.check(
        "chromium",
        bool(chromium),
        chromium or "not found (only needed to render the site to PDF/screenshots)",
        f"{APT} chromium",
        False,
    )


def _print_results(results: list[tuple]) -> int:
    """One line per check (the detail and the fix under each that failed); 1 when a required one failed."""
    width = max(len(r[0]) for r in results)
    bad_required = 0
    for name, ok, detail, fix, required in results:
        tag = "ok" if ok else ("MISSING" if required else "missing (optional)")
        say(f"{'ok  ' if ok else '!!  '}{name:<{width}}  {tag if not ok else detail}")
        if not ok:
            say(f"    {'':<{width}}  {detail}")
            say(f"    {'':<{width}}  fix: {fix}")
            bad_required += required
    say("")
    if bad_required:
        say(f"doctor: {bad_required} required tool(s) missing; fix them, or run tools/setup.sh (installs what it can)")
        return 1
    say("doctor: everything the course needs is here")
    return 0


def cmd_doctor(args) -> int:
    c = _Checks()
    torch_cuda = _check_python(c)
    nvcc_ver, no_toolkit = _check_nvcc(c)
    _check_torch_matches_nvcc(c, torch_cuda, nvcc_ver, no_toolkit)
    _check_build_tools(c)
    _check_headers(c)
    _check_optional(c)
    return _print_results(c.results)
