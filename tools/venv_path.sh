#!/usr/bin/env bash
# Prints the path of the course's Python environment on this machine: $COURSE_CACHE/venv-KEY, KEY a hash of the
# pins of requirements/course.txt (comments aside; COURSE_TORCH and COURSE_TORCH_INDEX, when set, stand for the torch
# line) and of the base Python's version. The one place the key is made: tools/setup.sh and `./course doctor` call it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
req="$root/requirements/course.txt"
cache=${COURSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/opcourse}
base_python=${COURSE_BASE_PYTHON:-python3}
{
  if [ -n "${COURSE_TORCH:-}${COURSE_TORCH_INDEX:-}" ]; then
    # the student's torch: its requirement in place of the pinned line, and its index
    grep -v -e '^#' -e '^$' "$req" | sed "s#^torch[=<>~! ].*#${COURSE_TORCH:-$(grep -E '^torch[=<>~! ]' "$req" | head -1)}#"
    echo "index=${COURSE_TORCH_INDEX:-}"
  else
    grep -v -e '^#' -e '^$' "$req"  # the pinned torch: the key the course has always had
  fi
  "$base_python" -c 'import sys; print(sys.version)'
} | sha256sum | cut -c1-16 | sed "s#^#$cache/venv-#"
