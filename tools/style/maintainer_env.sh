#!/usr/bin/env bash
# Prints the bin folder of the maintainers' tool environment (the formatters and the complexity report, pinned in
# requirements/maintainer.txt), making it first when it is missing. It lives beside the course's environment, keyed by
# a hash of that file, so a new clone reuses it and bumping a tool never touches torch's environment.
# Exit status 77 (ctest's SKIPPED) with the reason on stderr when it cannot be made here (no PyPI, COURSE_OFFLINE=1).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
req="$root/requirements/maintainer.txt"
cache=${COURSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/opcourse}
base_python=${COURSE_BASE_PYTHON:-python3}
key=$({ grep -v -e '^#' -e '^$' "$req"; "$base_python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)
env="$cache/maintainer-$key"
if [ ! -f "$env/.complete" ]; then
  if [ -n "${COURSE_OFFLINE:-}" ]; then
    echo "the maintainers' tools (requirements/maintainer.txt) are not installed and COURSE_OFFLINE is set" >&2
    exit 77
  fi
  rm -rf "$env"
  mkdir -p "$cache"
  if ! { "$base_python" -m venv "$env" && "$env/bin/pip" install -q --disable-pip-version-check -r "$req"; } >&2; then
    rm -rf "$env"
    echo "could not install the maintainers' tools (requirements/maintainer.txt) from PyPI" >&2
    exit 77
  fi
  touch "$env/.complete"
fi
echo "$env/bin"
