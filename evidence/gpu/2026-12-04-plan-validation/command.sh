#!/usr/bin/env bash
# one-off validation run on the GPU machine (not committed)
set -uo pipefail
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ TORCH_CUDA_ARCH_LIST="7.5+PTX;9.0" COURSE_PYTHON=python3 \
  COURSE_DEPS_ROOT=$PWD/.deps COURSE_OFFLINE=1 COURSE_BUILD_DIR=$PWD/build-gpu PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'; which compute-sanitizer; } > $OUT/machine.txt 2>&1
( time ./course build ) > $OUT/build.log 2>&1 || { tail -50 $OUT/build.log; exit 1; }
grep -E "compute_sanitizer|cuobjdump" build-gpu/toolchain.json >> $OUT/machine.txt
for ex in 04_cuda 06_autograd; do
  build-gpu/judge --exercise $ex --submission solutions/$ex --out /tmp/ref-$ex --no-color > $OUT/ref-$ex.txt 2>&1
  cp /tmp/ref-$ex/rows.json $OUT/ref-$ex-rows.json
done
timeout 380 ./course test -j 8 --output-on-failure -R 'planted/0[56]_[a-z_]*/reference$|planted/04_cuda/(wrong_when_aligned|reads_past_end|calls_at_mm|own_stream|per_thread_stream|sync_when_large|no_kernel|stub|kernel_never_ends|default_stream)$' > $OUT/cases.log 2>&1
tail -30 $OUT/cases.log
