#!/usr/bin/env bash
# Makes this clone's own Python environment, $COURSE_CACHE/clone-envs/CLONE-BASE (CLONE from the clone's folder, BASE
# from BASE_PYTHON's path, so a set-up on another python, a test's stand-in say, makes another one beside it instead of
# replacing the one in use), and prints its python: the interpreter of
# BASE_PYTHON (the python with torch: the course's environment shared by every clone of this machine, or an installed
# python such as the GPU machine's), seeing every package BASE_PYTHON sees, plus the package opcourse installed in
# editable mode from this clone.
#
#   tools/clone_env.sh BASE_PYTHON        (tools/setup.sh runs it; ctest cli/clone_env tests it)
#
# Why not install opcourse into BASE_PYTHON's environment: it is shared, so an editable install there would make every
# clone of the machine import whichever clone installed last (CI's fresh clone beside a student's, the copies some
# tests make). Here the shared packages are reached through a .pth file that adds BASE_PYTHON's site folders, and the
# install is pip's own editable one, offline (no index, no build isolation: setuptools comes from BASE_PYTHON's
# folders). Where that python has no pip or a setuptools too old to install in editable mode, a .pth file naming a
# folder that links to this clone's opcourse/ does the same. Redone only when BASE_PYTHON, the clone's folder,
# pyproject.toml or this script change (the stamp .installed in it): a repeat costs a file read and a hash. Two
# set-ups at once (ctest runs ./course beside ./course) make it one after the other (a lock).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=${1:?usage: tools/clone_env.sh BASE_PYTHON}
# Outside the clone, beside the shared environment: the clone holds only its own files (pip's editable install writes
# a finder module of its own, which is not the course's code), and `git clean` never takes the environment away.
cache=${COURSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/opcourse}
key() { printf '%s' "$1" | sha256sum | cut -c1-"$2"; }
env_dir="$cache/clone-envs/$(key "$root" 16)-$(key "$base" 8)"
say() { echo "setup: $*" >&2; }

want="$base|$root|$(cat "$root/pyproject.toml" "$0" | sha256sum | cut -c1-16)"  # this recipe counts too
mkdir -p "$cache/clone-envs"
exec 9>"$env_dir.lock"
flock 9
if [ "$(cat "$env_dir/.installed" 2>/dev/null)" != "$want" ]; then
  rm -rf "$env_dir"
  "$base" -m venv --without-pip "$env_dir" >&2
  site=$("$env_dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # every site folder of the base, in its order (the user's, a venv's, the system's: wherever its torch is), with
  # the .pth files in them processed as the base processes them
  "$base" - "$site/_course_base.pth" <<'PY'
import os
import site
import sys

folders = ([site.getusersitepackages()] if site.ENABLE_USER_SITE else []) + site.getsitepackages()
folders = [p for p in folders if os.path.isdir(p)]
with open(sys.argv[1], "w") as f:
    f.write("import site; " + "; ".join(f"site.addsitedir({p!r})" for p in folders) + "\n")
PY
  echo "$base" >"$env_dir/course-base-python"  # the python with torch it stands on (tools/setup.sh reads it back)
  if ! "$env_dir/bin/python" -m pip install -q --no-deps --no-build-isolation --no-index --disable-pip-version-check \
       --editable "$root" >"$env_dir/pip.log" 2>&1; then
    say "pip could not install opcourse in editable mode for $base (see $env_dir/pip.log): linking it instead"
    mkdir -p "$env_dir/course-src"
    ln -sfn "$root/opcourse" "$env_dir/course-src/opcourse"
    echo "$env_dir/course-src" >"$site/_course_opcourse.pth"
  fi
  found=$(cd / && "$env_dir/bin/python" -c 'import opcourse; print(opcourse.__file__)')
  [ "$(realpath "$found")" = "$(realpath "$root/opcourse/__init__.py")" ] || { say "error: $env_dir imports opcourse from $found"; exit 1; }
  echo "$want" >"$env_dir/.installed"
fi
echo "$env_dir/bin/python"
