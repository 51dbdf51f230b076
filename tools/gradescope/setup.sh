#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image, from $GRADESCOPE_ROOT/source (default /autograder).
# It installs the toolchain (tools/setup.sh: Debian packages, the pinned torch venv) and builds the grader (the judge
# and what grades read besides a submission); submissions are compiled per grade by the judge itself. The reference
# solutions are not in this zip: the operators chapters 7 and 8 test come built, in operators/.
#
# Environment: GRADESCOPE_ROOT (default /autograder); COURSE_PYTHON=/path/to/python with torch skips the venv
# (tests reuse the course's venv that way, no downloads); COURSE_BUILD_DIR (default source/build).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${COURSE_BUILD_DIR:-$src/build}
env_lines=$("$src/tools/setup.sh")
mkdir -p "$build"
: >"$build/course-env.sh"
while IFS='=' read -r key value; do
  [ -n "$key" ] || continue
  export "$key=$value"
  printf 'export %s=%q\n' "$key" "$value" >>"$build/course-env.sh"
done <<<"$env_lines"
[ -n "${COURSE_CCACHE_DIR:-}" ] && printf 'export CCACHE_DIR=%q\n' "${CCACHE_DIR:-$COURSE_CCACHE_DIR}" >>"$build/course-env.sh"
export CCACHE_DIR=${CCACHE_DIR:-${COURSE_CCACHE_DIR:-}}
# the operators under test of chapters 7 and 8 come built, in operators/ (the zip carries no solutions)
prebuilt=()
[ -f "$src/operators/operators.json" ] && prebuilt=(-DCOURSE_PREBUILT_OPERATORS="$src/operators")
# an image without the CUDA toolkit (COURSE_CUDA=off): the judge SKIPS the rows that need it, saying why
[ "${COURSE_CUDA:-on}" = off ] && prebuilt+=(-DCOURSE_WITH_CUDA=OFF)
# COURSE_PYTHON: the folder's own environment with opcourse (tools/clone_env.sh); the worker runs on the python with
# torch under it, COURSE_TORCH_PYTHON (the sandbox mounts that one)
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOURSE_PYTHON="$COURSE_PYTHON" \
  -DCOURSE_WORKER_PYTHON="$COURSE_TORCH_PYTHON" -DCOURSE_BUILD_LIBRARIES=OFF \
  "${prebuilt[@]+"${prebuilt[@]}"}" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; echo "setup.sh: CMake configuration failed" >&2; exit 1; }
cmake --build "$build" --target grader >"$build/build.log" 2>&1 ||
  { tail -40 "$build/build.log" >&2; echo "setup.sh: building the grader failed" >&2; exit 1; }
echo "setup.sh: the grader is built: $build/judge"
