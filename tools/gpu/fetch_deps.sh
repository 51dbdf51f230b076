#!/usr/bin/env bash
# Downloads the Debian packages the grader builds with and unpacks them into .deps/ (git-ignored), for a machine
# that has no apt access (the lent GPU machine): carry .deps there and set COURSE_DEPS_ROOT=.deps.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/.deps/debs"
cd "$root/.deps/debs"
apt-get download doctest-dev nlohmann-json3-dev bubblewrap
for f in *.deb; do dpkg -x "$f" "$root/.deps"; done
echo "unpacked into $root/.deps: $(ls "$root/.deps/usr/include" | tr '\n' ' ')"
