#!/usr/bin/env bash
# Idempotent set-up of everything the course needs; both README commands run it first.
#
#   tools/setup.sh            install what is missing, then print the environment (KEY=VALUE lines)
#   tools/setup.sh --plan     the checks only, then the environment it would use and what pip would install
#
# Two modes:
#   * default: a virtual environment from PyPI with the pinned requirements, kept OUTSIDE the clone under
#     $COURSE_CACHE (default ~/.cache/opcourse), keyed by a hash of the pins in requirements/course.txt (comments aside), so every fresh clone
#     on this machine reuses it and only a new machine pays the download;
#   * COURSE_PYTHON=/path/to/python3: use an already-installed torch, no venv, no downloads (the lent GPU machine).
# Either way the commands then run in the clone's own environment (tools/clone_env.sh: COURSE_CACHE/clone-envs/CLONE-BASE), made on top of that python with the
# package opcourse/ installed from this clone (tools/clone_env.sh): the COURSE_PYTHON this prints. Given back as
# COURSE_PYTHON (the commands and tests pass it on), it stands for the python it was made on.
# COURSE_CUDA=off: no CUDA toolkit (a laptop): the CPU sources are built and graded, every row that needs nvcc or a
# GPU is SKIPPED with the reason. Without it, a missing nvcc stops the set-up before anything is downloaded.
# Another torch, without editing the course's files: COURSE_TORCH='torch==2.11.0' (a pip requirement) and, for a wheel
# of another CUDA, COURSE_TORCH_INDEX=https://download.pytorch.org/whl/cu126; the pair keys an environment of its own.
# Debian packages are installed with apt-get when run as root; otherwise the exact command is printed.
# COURSE_DEPS_ROOT=DIR adds DIR/usr/include and DIR/usr/bin (a `dpkg -x` of carried .deb files) to the search.
set -euo pipefail

plan=
case ${1:-} in --plan) plan=1 ;; "") ;; *) echo "usage: tools/setup.sh [--plan]" >&2; exit 2 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${COURSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/opcourse}
deps_root=${COURSE_DEPS_ROOT:-}
say() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

# --- Debian packages -------------------------------------------------------------------------------------------
# name of package : a file that proves it is installed
required_debs=(
  "doctest-dev:/usr/include/doctest/doctest.h"
  "nlohmann-json3-dev:/usr/include/nlohmann/json.hpp"
  "ninja-build:/usr/bin/ninja"
  "cmake:/usr/bin/cmake"
)
optional_debs=(
  "ccache:/usr/bin/ccache"
  "bubblewrap:/usr/bin/bwrap"
  # the site: math (KaTeX) and diagrams (Graphviz) rendered from local files; Chromium for its browser test
  "libjs-katex:/usr/share/javascript/katex/katex.min.js"
  "fonts-katex:/usr/share/fonts/truetype/katex/KaTeX_Main-Regular.woff2"
  "graphviz:/usr/bin/dot"
  "chromium:/usr/bin/chromium"
  "chromium-driver:/usr/bin/chromedriver"
)
# Debian's own python3 needs python3-venv to create the course's environment (pyenv or python.org builds do not).
if [ -z "${COURSE_PYTHON:-}" ] && ! "${COURSE_BASE_PYTHON:-python3}" -c 'import ensurepip' 2>/dev/null; then
  required_debs+=("python3-venv:/nonexistent/python3-venv")
fi
have_file() { [ -e "$1" ] || { [ -n "$deps_root" ] && [ -e "$deps_root$1" ]; }; }
missing_required=(); missing_optional=()
for entry in "${required_debs[@]}"; do have_file "${entry#*:}" || missing_required+=("${entry%%:*}"); done
for entry in "${optional_debs[@]}"; do have_file "${entry#*:}" || missing_optional+=("${entry%%:*}"); done
# cmake and ninja may come from elsewhere (the GPU image has them on PATH, not in /usr/bin)
filtered=()
for p in "${missing_required[@]+"${missing_required[@]}"}"; do
  case $p in cmake) command -v cmake >/dev/null || filtered+=("$p") ;; ninja-build) command -v ninja >/dev/null || filtered+=("$p") ;; *) filtered+=("$p") ;; esac
done
missing_required=("${filtered[@]+"${filtered[@]}"}")
to_install=("${missing_required[@]+"${missing_required[@]}"}" "${missing_optional[@]+"${missing_optional[@]}"}")
if [ ${#to_install[@]} -gt 0 ]; then
  cmd="apt-get install -y --no-install-recommends ${to_install[*]}"
  if [ "$(id -u)" = 0 ] && [ -z "${COURSE_OFFLINE:-}" ] && [ -z "$plan" ] && command -v apt-get >/dev/null; then
    say "installing Debian packages: ${to_install[*]}"
    if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${to_install[@]}" >/dev/null 2>&1 ||
           { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${to_install[@]}" >/dev/null; }; }; then
      [ ${#missing_required[@]} -gt 0 ] && die "could not install ${missing_required[*]}; run as root: apt-get update && $cmd"
      say "warning: optional packages not installed (${missing_optional[*]}); continuing without them"
    fi
  elif [ ${#missing_required[@]} -gt 0 ]; then
    die "missing Debian packages: ${missing_required[*]}. Run as root: apt-get update && $cmd"
  else
    say "warning: optional packages missing (${missing_optional[*]}): ccache speeds rebuilds, bubblewrap sandboxes grading, the others build and test the site. To install: $cmd"
  fi
fi

# --- cheap checks first: nothing is downloaded for a machine that cannot build the course ------------------------
req="$root/requirements/course.txt"
problems=()
command -v "${CXX:-g++}" >/dev/null || command -v c++ >/dev/null ||
  problems+=("no C++ compiler (${CXX:-g++}); Debian: apt-get install g++")
pinned_pip=$(sed -n 's/^# pip: *\([0-9.]*\).*/\1/p' "$req" | head -1)  # the pip of a new environment (course.txt says why)
pinned_cuda=$(sed -n 's/^# torch-cuda: *\([0-9]*\).*/\1/p' "$req" | head -1)  # the CUDA major of the pinned torch's wheel
cuda=${COURSE_CUDA:-on}
case $cuda in on|off) ;; *) die "COURSE_CUDA=$cuda: use on (the default: the CUDA toolkit is required) or off (no toolkit: CPU rows only)" ;; esac
nvcc=
nvcc_version=
if [ "$cuda" = on ]; then
  nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  if [ -x "$nvcc" ]; then
    nvcc_version=$("$nvcc" --version | sed -n 's/.*release \([0-9][0-9.]*\).*/\1/p')
  else
    problems+=("no CUDA toolkit: nvcc not found (looked at CUDACXX, on PATH and at /usr/local/cuda/bin/nvcc). Install the CUDA $pinned_cuda toolkit (or set CUDACXX) for the CUDA rows, or use the course without it: COURSE_CUDA=off ./course ... builds the CPU sources, grades the CPU rows and SKIPS every row that needs nvcc or a GPU, saying why")
    nvcc=
  fi
fi
if [ -z "${COURSE_PYTHON:-}" ]; then
  # The torch of the environment: the pinned one, or the student's choice (COURSE_TORCH, a pip requirement, and
  # COURSE_TORCH_INDEX, the wheel index it comes from), which keys an environment of its own: no course file changes.
  pinned_torch=$(grep -E '^torch[=<>~! ]' "$req" | head -1)
  torch_req=${COURSE_TORCH:-$pinned_torch}
  torch_index=${COURSE_TORCH_INDEX:-}
  case $torch_req in torch|torch[=\<\>~!\ ]*) ;; *) die "COURSE_TORCH=$torch_req: give a pip requirement of torch, e.g. 'torch==2.11.0'" ;; esac
  if [ -n "${COURSE_TORCH:-}${COURSE_TORCH_INDEX:-}" ]; then
    # the CUDA of a wheel index is in its name (.../whl/cu126: CUDA 12; .../whl/cpu: none); PyPI's default is unknown here
    wanted_cuda=$(printf '%s' "$torch_index" | sed -n 's#.*/cu\([0-9]*\)[0-9]/*$#\1#p')
    case $torch_index in */cpu|*/cpu/) wanted_cuda=none ;; esac
    what="COURSE_TORCH='$torch_req'${torch_index:+ from $torch_index}"
  else
    wanted_cuda=$pinned_cuda
    what="the pinned torch (requirements/course.txt)"
  fi
  if [ "$wanted_cuda" = none ] && [ "$cuda" = on ]; then
    problems+=("$what has no CUDA: it cannot build or run the CUDA rows; add COURSE_CUDA=off (CPU rows only), or choose a CUDA wheel index")
  elif [ -n "$nvcc_version" ] && [ -n "$wanted_cuda" ] && [ "$wanted_cuda" != none ] && [ "${nvcc_version%%.*}" != "$wanted_cuda" ]; then
    problems+=("nvcc is CUDA $nvcc_version but $what is built for CUDA $wanted_cuda: their major versions must match; point CUDACXX at a CUDA $wanted_cuda nvcc, or choose a torch for CUDA ${nvcc_version%%.*}: COURSE_TORCH='torch==VERSION' COURSE_TORCH_INDEX=https://download.pytorch.org/whl/cu${nvcc_version%%.*}X, X your CUDA's minor as the index names it (README: your machine)")
  fi
  base_python=${COURSE_BASE_PYTHON:-python3}
  venv=$("$root/tools/venv_path.sh")
  if [ ! -f "$venv/.complete" ]; then  # the download and install take several GB
    need_gb=${COURSE_SETUP_FREE_GB:-10}
    probe=$cache; while [ ! -d "$probe" ]; do probe=$(dirname "$probe"); done
    free_gb=$(( $(df -Pk "$probe" | awk 'NR == 2 {print $4}') / 1048576 ))
    [ "$free_gb" -ge "$need_gb" ] ||
      problems+=("only $free_gb GB free under $probe; the course's environment (torch and its tools) needs about $need_gb GB: free some space or set COURSE_CACHE to a larger disk")
  fi
  # torch first (from its index, when one is named), then the other pins from PyPI
  torch_pip=(install --progress-bar on "$torch_req")
  [ -n "$torch_index" ] && torch_pip+=(--index-url "$torch_index" --extra-index-url https://pypi.org/simple)
  rest=$(mktemp); trap 'rm -f "$rest"' EXIT
  grep -v -E '^torch[=<>~! ]' "$req" >"$rest"
fi
if [ ${#problems[@]} -gt 0 ]; then
  for p in "${problems[@]}"; do echo "setup: error: $p" >&2; done
  die "${#problems[@]} problem(s) above; nothing was downloaded"
fi
if [ -n "$plan" ]; then  # --plan: what the set-up would use and install; nothing is created
  echo "COURSE_VENV=${venv:-none (COURSE_PYTHON=$COURSE_PYTHON)}"
  [ -z "${COURSE_PYTHON:-}" ] && echo "COURSE_PIP_TORCH=pip ${torch_pip[*]}" && echo "COURSE_PIP_REST=$(grep -v -e '^#' -e '^$' "$rest" | paste -sd' ')"
  echo "COURSE_CUDA=$cuda"
  exit 0
fi

# --- Python with torch -----------------------------------------------------------------------------------------
if [ -n "${COURSE_PYTHON:-}" ]; then
  python=$(command -v "$COURSE_PYTHON") || die "COURSE_PYTHON=$COURSE_PYTHON is not an executable"
  # a clone's own environment (this clone's or another's, passed on by ./course to what it runs): the python it was
  # made on, which has torch
  base_file="$(dirname "$python")/../course-base-python"
  [ -f "$base_file" ] && python=$(cat "$base_file")
  "$python" -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("torch") and u.find_spec("safetensors")))' 2>/dev/null ||
    die "COURSE_PYTHON=$python cannot import torch and safetensors; install them there or unset COURSE_PYTHON to build a venv"
  say "using the already-installed torch of $python (no venv)"
else
  # Two first set-ups at once (two clones, or a clone and ctest's ./course) make it one after the other: the second
  # finds it complete instead of deleting the first's half-made environment under it.
  mkdir -p "$cache"
  exec 8>"$venv.lock"
  flock 8
  if [ ! -f "$venv/.complete" ]; then
    say "creating $venv for $what (first run: torch and its tools, a few GB; pip's progress follows)"
    rm -rf "$venv"
    "$base_python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q "pip==$pinned_pip" >/dev/null || die "pip install pip==$pinned_pip failed"
    "$venv/bin/python" -m pip "${torch_pip[@]}" >&2 || die "pip ${torch_pip[*]} failed (see above)"
    "$venv/bin/python" -m pip install --progress-bar on -r "$rest" >&2 || die "pip install -r $req (torch aside) failed (see above)"
    touch "$venv/.complete"
  fi
  flock -u 8
  python="$venv/bin/python"
fi

# --- torch's CUDA must be nvcc's CUDA major (checked before the download for the pins; here for the torch itself) ---
# read from torch/version.py without importing torch (an import costs seconds, and every command runs the set-up)
torch_info=$("$python" -c 'import importlib.util, os, runpy
path = os.path.join(os.path.dirname(importlib.util.find_spec("torch").origin), "version.py")
if os.path.isfile(path):
    v = runpy.run_path(path)
    print(v["__version__"], v.get("cuda") or "none")
else:  # a torch without version.py (a stand-in): ask it
    import torch
    print(torch.__version__, torch.version.cuda or "none")')
torch_version=${torch_info% *}; torch_cuda=${torch_info#* }
read -r range_low range_high < <(sed -n 's/^# torch-range: *\([0-9.]*\) *\([0-9.]*\).*/\1 \2/p' "$req" | head -1)
if ! "$python" - "$torch_version" "$range_low" "$range_high" <<'PY'
import sys
minor = lambda v: tuple(int(x) for x in v.split("+")[0].split(".")[:2])
sys.exit(0 if minor(sys.argv[2]) <= minor(sys.argv[1]) <= minor(sys.argv[3]) else 1)
PY
then
  say "warning: torch $torch_version is outside the range the course is run with ($range_low to $range_high, requirements/course.txt): expect differences"
fi
if [ "$cuda" = off ]; then
  say "torch $torch_version; COURSE_CUDA=off: no CUDA toolkit is used, the CUDA rows are SKIPPED"
elif [ "${torch_cuda%%.*}" != "${nvcc_version%%.*}" ]; then
  die "torch $torch_version was built for CUDA $torch_cuda but nvcc is CUDA $nvcc_version: their major versions must match.
  Use a torch built for CUDA ${nvcc_version%%.*} (COURSE_PYTHON=/path/to/its python), or point CUDACXX at a matching nvcc."
else
  say "torch $torch_version (CUDA $torch_cuda) matches nvcc $nvcc_version"
fi

ccache_bin=$(command -v ccache || true)
[ -z "$ccache_bin" ] && [ -n "$deps_root" ] && [ -x "$deps_root/usr/bin/ccache" ] && ccache_bin="$deps_root/usr/bin/ccache"
bwrap_bin=$(command -v bwrap || true)
[ -z "$bwrap_bin" ] && [ -n "$deps_root" ] && [ -x "$deps_root/usr/bin/bwrap" ] && bwrap_bin="$deps_root/usr/bin/bwrap"

# this clone's own environment on top of $python, with opcourse installed from this clone (cheap when done)
clone_python=$("$root/tools/clone_env.sh" "$python") || die "could not make this clone's environment (tools/clone_env.sh) on $python"

# The older torch of requirements/course.txt ('# torch-older:'), in an environment of its own keyed like the first:
# exercise 10's abi.cross_version loads there the binary built against the course's torch. Made by this same set-up
# with COURSE_TORCH; not for an environment chosen by COURSE_PYTHON or COURSE_TORCH (that row is then SKIPPED, saying
# why), and a failure to make it is a warning, not the set-up's failure. Given back with COURSE_PYTHON (a command
# inside a command, a test), it is kept as it was: dropped, it would change the build's configuration stamp and
# ./course would wipe and reconfigure the build folder under the command that called it.
older_python=
[ -n "${COURSE_PYTHON:-}" ] && [ -x "${COURSE_OLDER_TORCH_PYTHON:-}" ] && older_python=$COURSE_OLDER_TORCH_PYTHON
older_torch=$(sed -n 's/^# torch-older: *\([0-9.]*\).*/\1/p' "$req" | head -1)
if [ -n "$older_torch" ] && [ -z "${COURSE_PYTHON:-}${COURSE_TORCH:-}${COURSE_TORCH_INDEX:-}" ]; then
  older_venv=$(COURSE_TORCH="torch==$older_torch" "$root/tools/venv_path.sh")
  if [ -f "$older_venv/.complete" ] || COURSE_TORCH="torch==$older_torch" "$0" >/dev/null; then
    older_python=$older_venv/bin/python
  else
    say "warning: could not make the environment of the older torch $older_torch (above): exercise 10's abi.cross_version will be SKIPPED"
  fi
fi

cat <<EOF
COURSE_PYTHON=$clone_python
COURSE_TORCH_PYTHON=$python
COURSE_OLDER_TORCH_PYTHON=$older_python
COURSE_NVCC=$nvcc
COURSE_CUDA=$cuda
COURSE_CCACHE=$ccache_bin
COURSE_BWRAP=$bwrap_bin
COURSE_CCACHE_DIR=$cache/ccache
COURSE_DEPS_ROOT=$deps_root
EOF
