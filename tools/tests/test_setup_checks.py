"""Set-up checks what is cheap before it downloads anything (issue: the course on a student's own machine): without
nvcc, with an nvcc of another CUDA major than the pinned torch's, or without the disk space the environment needs,
tools/setup.sh names every problem at once, exits 1 and creates no environment (nothing downloaded)."""
import os
import shutil
import stat
import subprocess

from clitest import SOURCE, expect, temp_dir


def setup(tmp, **env):
    cache = tmp / "cache"
    r = subprocess.run(["bash", str(SOURCE / "tools" / "setup.sh")], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, COURSE_CACHE=str(cache), COURSE_OFFLINE="1", **env))
    print(f"$ setup.sh {env} -> {r.returncode}\n{r.stderr}")
    return r, cache


tmp = temp_dir("setup-checks")
env = {k: v for k, v in os.environ.items() if k not in ("COURSE_PYTHON", "CUDACXX")}
os.environ.clear()
os.environ.update(env)

r, cache = setup(tmp, CUDACXX="/nonexistent/nvcc", COURSE_SETUP_FREE_GB="100000")
expect(r.returncode == 1, "no nvcc and too little disk: set-up stops")
expect("nvcc not found" in r.stderr and "needs about 100000 GB" in r.stderr,
       "both problems are named at once")
expect("nothing was downloaded" in r.stderr and not any(cache.glob("venv-*")), "no environment was created")

fake = tmp / "nvcc12"
fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
r, cache = setup(tmp, CUDACXX=str(fake))
expect(r.returncode == 1 and "nvcc is CUDA 12.4 but the pinned torch is built for CUDA 13" in r.stderr,
       "an nvcc of another CUDA major is refused before the download")
expect("COURSE_PYTHON" in r.stderr, "the refusal says how to use a torch built for that CUDA")
expect(not any(cache.glob("venv-*")), "no environment was created")
shutil.rmtree(tmp, ignore_errors=True)
print("ok: set-up checks first")
