"""Each clone imports its own package opcourse (tools/clone_env.sh, run by the set-up): two copies of the course on
top of the same python with torch each get an environment whose `import opcourse` is their own code, while that
python alone has no opcourse at all (without the editable install, nothing would import); a repeat costs nothing; a
moved copy is redone; where pip cannot install in editable mode, the link that stands in for it imports the same; a
plain interpreter (no venv, as COURSE_PYTHON=python3 on the GPU machine) works as a base too."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from clitest import SOURCE, expect, temp_dir

# the python with torch under the environment running this test (the set-up's COURSE_TORCH_PYTHON)
marker = Path(sys.executable).parent.parent / "course-base-python"
BASE = os.environ.get("COURSE_TORCH_PYTHON") or (marker.read_text().strip() if marker.is_file() else sys.executable)


def copy_of_course(dest: Path) -> Path:
    """What clone_env.sh needs of a clone: its package, pyproject.toml and the script."""
    shutil.copytree(SOURCE / "opcourse", dest / "opcourse", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(SOURCE / "pyproject.toml", dest / "pyproject.toml")
    (dest / "tools").mkdir()
    shutil.copy2(SOURCE / "tools" / "clone_env.sh", dest / "tools" / "clone_env.sh")
    return dest


def clone_env(clone: Path, base: str, **env) -> tuple[str, str]:
    r = subprocess.run(
        [str(clone / "tools" / "clone_env.sh"), base],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, **env),
    )
    print(f"$ {clone}/tools/clone_env.sh {base}  -> {r.returncode}\n{r.stdout}{r.stderr}")
    expect(r.returncode == 0, f"clone_env.sh made {clone}'s environment")
    return r.stdout.strip(), r.stderr


def imports_from(python: str, module: str = "opcourse") -> str:
    """Where `import MODULE` comes from for python (links resolved), run from / (no clone on the search path by
    accident)."""
    code = f"import importlib.util as u, os; s = u.find_spec({module!r}); print(os.path.realpath(s.origin) if s else 'none')"
    r = subprocess.run(
        [python, "-c", code],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    expect(r.returncode == 0, f"{python} runs: {r.stderr[-500:]}")
    return r.stdout.strip()


tmp = temp_dir("clone-env")
try:
    print(f"base python (with torch): {BASE}")
    expect(imports_from(BASE) == "none", "the shared python itself has no opcourse: no clone installed it there")
    torch_origin = imports_from(BASE, "torch")

    a, b = copy_of_course(tmp / "a"), copy_of_course(tmp / "b")
    py_a, _ = clone_env(a, BASE)
    py_b, _ = clone_env(b, BASE)
    env_a = Path(py_a).parent.parent
    expect(
        env_a.parent.name == "clone-envs" and not env_a.resolve().is_relative_to(a.resolve()),
        f"a's environment is outside the clone, beside the shared one ({py_a})",
    )
    made = [Path(py_a).parent.parent, Path(py_b).parent.parent]  # removed at the end: the temporary clones go too
    left = sorted(
        str(p.relative_to(a))
        for p in a.rglob("*.py")
        if "__pycache__" not in p.parts and not p.is_relative_to(a / "opcourse")
    )
    expect(not left, f"the set-up left no Python file in the clone beside its package ({left})")
    expect(imports_from(py_a) == str((a / "opcourse" / "__init__.py").resolve()), "clone a imports a's opcourse")
    expect(imports_from(py_b) == str((b / "opcourse" / "__init__.py").resolve()), "clone b imports b's opcourse")
    expect(imports_from(py_a, "torch") == torch_origin, "a's environment sees the shared environment's torch")
    expect(
        (env_a / "course-base-python").read_text().strip() == BASE,
        "the environment names the python it stands on (tools/setup.sh maps it back)",
    )

    stamp = env_a / ".installed"
    before, t0 = stamp.stat().st_mtime_ns, time.monotonic()
    clone_env(a, BASE)
    seconds = time.monotonic() - t0
    expect(stamp.stat().st_mtime_ns == before and seconds < 2, f"a repeat reinstalls nothing ({seconds:.2f} s)")

    moved = tmp / "moved"
    shutil.copytree(a, moved, symlinks=True)
    py_moved, _ = clone_env(moved, BASE)
    expect(
        imports_from(py_moved) == str((moved / "opcourse" / "__init__.py").resolve()),
        "a copy of a clone in another folder gets its own environment and imports its own opcourse",
    )
    made.append(Path(py_moved).parent.parent)

    # pip made to fail (a constraints file that does not exist): the stand-in link
    c = copy_of_course(tmp / "c")
    py_c, said = clone_env(c, BASE, PIP_CONSTRAINT=str(tmp / "no-such-constraints.txt"))
    made.append(Path(py_c).parent.parent)
    expect("linking it instead" in said, "where pip cannot install, clone_env.sh says it links instead")
    expect(imports_from(py_c) == str((c / "opcourse" / "__init__.py").resolve()), "the linked package is c's own")

    # a plain interpreter as the base (no venv: the GPU machine's COURSE_PYTHON=python3)
    plain = os.path.realpath(BASE)
    d = copy_of_course(tmp / "d")
    py_d, _ = clone_env(d, plain)
    made.append(Path(py_d).parent.parent)
    expect(Path(py_d).parent.parent.name != env_a.name, "another base python, another environment beside it")
    expect(
        imports_from(py_d) == str((d / "opcourse" / "__init__.py").resolve()),
        f"on the plain interpreter {plain}, clone d imports its own opcourse",
    )
    print("ok: every clone imports its own opcourse")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
    for env in locals().get("made", []):
        shutil.rmtree(env, ignore_errors=True)
        Path(str(env) + ".lock").unlink(missing_ok=True)
