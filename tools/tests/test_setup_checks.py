"""Set-up checks what is cheap before it downloads anything (issue: the course on a student's own machine): without
nvcc, with an nvcc of another CUDA major than the pinned torch's, or without the disk space the environment needs,
tools/setup.sh names every problem at once, exits 1 and creates no environment (nothing downloaded).

The README's "your machine" paths that need no download are run here too: another torch (COURSE_TORCH and
COURSE_TORCH_INDEX) keys an environment of its own and is installed from its index (`setup.sh --plan` shows what pip
would run), a CUDA 12 nvcc with a CUDA 12 torch is accepted, a CPU-only torch needs COURSE_CUDA=off, a torch outside
the course's range is warned about, and without root the missing Debian packages come as the apt-get line to run."""

import os
import shutil
import stat
import subprocess

from clitest import SOURCE, expect, temp_dir


def setup(tmp, _="", **env):
    cache = tmp / "cache"
    r = subprocess.run(
        ["bash", str(SOURCE / "tools" / "setup.sh")] + ([_] if _ else []),
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COURSE_CACHE=str(cache), COURSE_OFFLINE="1", **env),
    )
    print(f"$ setup.sh {env} -> {r.returncode}\n{r.stderr}")
    return r, cache


tmp = temp_dir("setup-checks")
# what ./course test gave this test (the lines of its set-up), for the last part below
GIVEN = ("COURSE_PYTHON", "COURSE_TORCH_PYTHON", "COURSE_OLDER_TORCH_PYTHON", "COURSE_CUDA")
given_back = {k: os.environ[k] for k in GIVEN if k in os.environ}
env = {k: v for k, v in os.environ.items() if k not in ("COURSE_PYTHON", "CUDACXX")}
os.environ.clear()
os.environ.update(env)

r, cache = setup(tmp, CUDACXX="/nonexistent/nvcc", COURSE_SETUP_FREE_GB="100000")
expect(r.returncode == 1, "no nvcc and too little disk: set-up stops")
expect("nvcc not found" in r.stderr and "needs about 100000 GB" in r.stderr, "both problems are named at once")
expect("nothing was downloaded" in r.stderr and not any(cache.glob("venv-*")), "no environment was created")

fake = tmp / "nvcc12"
fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
r, cache = setup(tmp, CUDACXX=str(fake))
expect(
    r.returncode == 1
    and "nvcc is CUDA 12.4 but the pinned torch (requirements/course.txt) is built for CUDA 13" in r.stderr,
    "an nvcc of another CUDA major is refused before the download",
)
expect(
    "COURSE_TORCH_INDEX=https://download.pytorch.org/whl/cu12" in r.stderr,
    "the refusal says how to use a torch built for that CUDA",
)
expect(not any(cache.glob("venv-*")), "no environment was created")


def plan(**env):
    r, cache = setup(tmp, **env)
    return r, dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line), cache


default_env = {"COURSE_CACHE": str(tmp / "cache")}
# what requirements/course.txt pins (the set-up's one source): the torch and the range it warns outside
_pins = (SOURCE / "requirements" / "course.txt").read_text().splitlines()
PINNED_TORCH = next(line for line in _pins if line.startswith("torch=="))
RANGE_LOW, RANGE_HIGH = next(line for line in _pins if line.startswith("# torch-range:")).split()[2:4]
r, pinned, cache = plan(_="--plan")
expect(
    r.returncode == 0
    and pinned["COURSE_PIP_TORCH"].endswith(PINNED_TORCH)
    and "torch" not in pinned["COURSE_PIP_REST"].split("==")[0],
    "--plan: the pinned torch, then the other pins",
)
cu13 = {"COURSE_TORCH": "torch==2.11.0", "COURSE_TORCH_INDEX": "https://download.pytorch.org/whl/cu130"}
r, other, cache = plan(_="--plan", **cu13)
expect(r.returncode == 0 and other["COURSE_VENV"] != pinned["COURSE_VENV"], "another torch keys its own environment")
expect(
    other["COURSE_PIP_TORCH"].startswith(
        "pip install --progress-bar on torch==2.11.0 --index-url https://download.pytorch.org/whl/cu130"
    ),
    "installed from its index",
)
expect(plan(_="--plan", **cu13)[1]["COURSE_VENV"] == other["COURSE_VENV"], "the same choice, the same environment")
expect(not any(cache.glob("venv-*")), "--plan creates nothing")
r, _, _ = plan(_="--plan", COURSE_TORCH="torch==2.9.1", COURSE_TORCH_INDEX="https://download.pytorch.org/whl/cu126")
expect(
    r.returncode == 1 and "is built for CUDA 12" in r.stderr and "nothing was downloaded" in r.stderr,
    "a CUDA 12 torch beside a CUDA 13 nvcc is refused before the download",
)
r, cuda12, _ = plan(
    _="--plan",
    CUDACXX=str(fake),
    COURSE_TORCH="torch==2.9.1",
    COURSE_TORCH_INDEX="https://download.pytorch.org/whl/cu126",
)
expect(r.returncode == 0 and "cu126" in cuda12["COURSE_PIP_TORCH"], "a CUDA 12 nvcc with a CUDA 12 torch: accepted")
cpu = {"COURSE_TORCH": "torch==2.11.0", "COURSE_TORCH_INDEX": "https://download.pytorch.org/whl/cpu"}
r, _, _ = plan(_="--plan", **cpu)
expect(r.returncode == 1 and "COURSE_CUDA=off" in r.stderr, "a CPU-only torch asks for COURSE_CUDA=off")
r, off, _ = plan(_="--plan", COURSE_CUDA="off", **cpu)
expect(r.returncode == 0 and off["COURSE_CUDA"] == "off", "... and is accepted with it")

# a torch outside the course's range (a stand-in torch module on the real interpreter): set-up warns
fake_site = tmp / "site"
(fake_site / "torch").mkdir(parents=True)
(fake_site / "torch" / "__init__.py").write_text("__version__ = '2.5.0'\nclass version:\n    cuda = '13.0'\n")
(fake_site / "safetensors.py").write_text("")
r, _ = setup(tmp, COURSE_PYTHON=shutil.which("python3"), PYTHONPATH=str(fake_site))
expect(
    r.returncode == 0
    and f"torch 2.5.0 is outside the range the course is run with ({RANGE_LOW} to {RANGE_HIGH}" in r.stderr,
    "a torch outside the range: a warning, the set-up goes on",
)

# no root: a missing Debian package is named with the apt-get line to run (bubblewrap: another uid, doctest hidden)
bwrap = shutil.which("bwrap")
if (
    bwrap
    and subprocess.run([bwrap, "--dev-bind", "/", "/", "--unshare-user", "--uid", "65534", "--", "true"]).returncode
    == 0
):
    r = subprocess.run(
        [
            bwrap,
            "--dev-bind",
            "/",
            "/",
            "--tmpfs",
            "/usr/include/doctest",
            "--unshare-user",
            "--uid",
            "65534",
            "--gid",
            "65534",
            "--",
            "bash",
            str(SOURCE / "tools" / "setup.sh"),
            "--plan",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COURSE_CACHE=str(tmp / "c2")),
    )
    print(f"$ setup.sh --plan (uid 65534, doctest hidden) -> {r.returncode}\n{r.stderr}")
    expect(
        r.returncode == 1
        and "Run as root: apt-get update && apt-get install -y --no-install-recommends doctest-dev" in r.stderr,
        "without root: the apt-get line to run",
    )
else:
    print("SKIPPED (that part): bubblewrap cannot switch uid here, so the no-root path was not run")
shutil.rmtree(tmp, ignore_errors=True)

# A command inside a command (a test, `./course test` itself): the lines set-up printed, given back in the
# environment, come back unchanged. ./course configures the build from them and wipes the build folder when they
# differ: the older torch's python, dropped when COURSE_PYTHON was given, wiped the suite's build folder under
# cli/regrade_cost (it calls ./course grade).
if given_back.get("COURSE_PYTHON") and given_back.get("COURSE_OLDER_TORCH_PYTHON"):
    r = subprocess.run(
        ["bash", str(SOURCE / "tools" / "setup.sh")],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, COURSE_OFFLINE="1", **given_back),
    )
    again = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    for key in GIVEN:
        expect(
            r.returncode == 0 and again.get(key) == given_back.get(key),
            f"set-up given back its own lines keeps {key}: {again.get(key)!r}, was {given_back.get(key)!r}",
        )
else:
    print("SKIPPED (that part): no set-up lines given back here (run it through ./course test)")
print("ok: set-up checks first")
