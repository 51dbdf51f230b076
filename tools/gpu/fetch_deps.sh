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
# The stable-ABI headers of the course's torch (torch/csrc/stable, torch/headeronly and the C shim they call, under
# 1 MB): the GPU machine compiles exercise 10 against them (COURSE_STABLE_TORCH_INCLUDE, run_on_gpu.sh) and loads the
# result in its own, older torch, which is what a stable-ABI binary promises.
python=${COURSE_TORCH_PYTHON:-$("$root/tools/venv_path.sh")/bin/python}
include=$("$python" -c 'import torch.utils.cpp_extension as e; print(e.include_paths()[0])')
rm -rf "$root/.deps/torch-stable-include" && mkdir -p "$root/.deps/torch-stable-include"
(cd "$include" && cp -r --parents torch/csrc/stable torch/headeronly torch/csrc/inductor/aoti_torch/c \
  torch/csrc/inductor/aoti_torch/generated "$root/.deps/torch-stable-include")
echo "copied the stable-ABI headers of torch $("$python" -c 'import torch; print(torch.__version__)') into .deps/torch-stable-include"
