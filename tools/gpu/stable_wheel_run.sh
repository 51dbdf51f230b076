#!/usr/bin/env bash
# issue 47's probe on the GPU machine (WIP): the wheel built here against torch 2.15 under the machine's torch; run from a folder holding the wheel and stable_wheel_probe.py
set -u
cd "$(dirname "$0")"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c 'import torch,sys;print(sys.version.split()[0], torch.__version__, torch.version.cuda)'; } 2>&1 | tee $OUT/machine.txt
python3 stable_wheel_probe.py mm16_stable-*.whl --json $OUT/probe.json 2>&1 | tee $OUT/probe.log; echo "rc=$?" | tee -a $OUT/probe.log
compute-sanitizer --tool memcheck --error-exitcode 3 python3 stable_wheel_probe.py mm16_stable-*.whl --cuda-only > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?" | tee -a $OUT/memcheck.log; tail -8 $OUT/memcheck.log
