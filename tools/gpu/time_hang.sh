#!/usr/bin/env bash
# Issue 31's measurement: the planted kernel that never ends (04_cuda/kernel_never_ends), graded with the judge's
# default settings (no shorter worker timeout), and the reference solution graded the same way, one after the other;
# prints both wall times. Run by tools/gpu/run_on_gpu.sh LOG_DIR hang (the judge must be built).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
logs=${1:?usage: time_hang.sh LOG_DIR}
build=${COURSE_BUILD_DIR:-$root/build}
work=$(mktemp -d)
# COURSE_PYTHON: the clone's own environment, which imports opcourse (run_on_gpu.sh sets it)
"${COURSE_PYTHON:-python3}" -c 'import sys; from opcourse import planted; print(planted.materialize(*sys.argv[1:]))' \
  "$root" "$root/autograder/planted/04_cuda/kernel_never_ends" "$work"
for what in reference never_ends; do
  sub=$root/solutions/04_cuda
  [ "$what" = never_ends ] && sub=$work/submission
  start=$(date +%s%N)
  "$build/judge" --exercise 04_cuda --submission "$sub" --out "$work/out-$what" --no-color >"$logs/hang-$what.txt" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf '%s: judge exit %s in %d.%01d s (default settings)\n' "$what" "$rc" $((ms / 1000)) $((ms % 1000 / 100)) |
    tee -a "$logs/hang-times.txt"
done
rm -rf "$work"
