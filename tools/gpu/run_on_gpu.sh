#!/usr/bin/env bash
# The course's GPU run: on a machine with a CUDA device and an already-installed torch (no venv, no downloads),
# runs the README's main command and the test suite, then the suite again with the GPU hidden.
#
#   tools/gpu/run_on_gpu.sh LOG_DIR [STEP...]     steps: main, test, test-no-gpu (default: all three), gpu-cases,
#                                                 gpu-cases-no-gpu, cuda-cases, late-cases (= late-07 late-08-09),
#                                                 harness-5x, hang, probes, neighbours, mutants, cases,
#                                                 chapter-figures, stable-abi, python-ops
#
# `test` runs the grader's tests (planted submissions, judge, CUDA targets); the site, CLI and Gradescope tests need
# no GPU and run in CI. `test-no-gpu` repeats the planted cases with CUDA_VISIBLE_DEVICES= (CUDA rows SKIPPED).
#
# Needs the Debian packages the grader builds with, unpacked with `dpkg -x` into .deps/ (tools/gpu/fetch_deps.sh
# does that on a machine with apt). The log of each step goes to LOG_DIR; the committed logs under evidence/gpu/
# come from this script.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
logs=${1:?usage: run_on_gpu.sh LOG_DIR [main] [test] [test-no-gpu]}
shift
steps=${*:-main test test-no-gpu}
steps=$(echo " $steps " | sed 's/ late-cases / late-07 late-08-09 /g')  # late-cases: both parts
mkdir -p "$logs"
cd "$root"
# The image's default g++ wrapper builds extensions that segfault when a TORCH_CHECK message formats a value.
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++  # the image sets CUDAHOSTCXX=/opt/gcc/bin/g++ too
# The image sets TORCH_CUDA_ARCH_LIST for its own builds (9.0a only, measured): the course builds its contract's
# targets, sm_75 machine code + compute_75 PTX, plus sm_90 for the H200. Written the torch way on purpose: the
# translation to CMake's list (cmake/OperatorLibrary.cmake) is exercised too.
echo "image's TORCH_CUDA_ARCH_LIST: '${TORCH_CUDA_ARCH_LIST-<unset>}'; the run uses '7.5+PTX;9.0'" >>"$logs/summary.txt"
export TORCH_CUDA_ARCH_LIST="7.5+PTX;9.0"
export COURSE_PYTHON=${COURSE_PYTHON:-python3} COURSE_DEPS_ROOT="$root/.deps" COURSE_OFFLINE=1
# the scripts below import the package opcourse: run them in this clone's own environment on top of that python (what
# tools/setup.sh makes for ./course too; ./course finds the python with torch under it)
COURSE_PYTHON=$("$root/tools/clone_env.sh" "$(command -v "$COURSE_PYTHON")") || exit 1
# exercise 10 compiled against the course's torch's stable headers (tools/gpu/fetch_deps.sh carried them), loaded in
# this machine's older torch: the stable ABI's promise, graded by the exercise's own rows
[ -d "$root/.deps/torch-stable-include" ] && export COURSE_STABLE_TORCH_INCLUDE="$root/.deps/torch-stable-include"
export COURSE_BUILD_DIR="$root/build-gpu" PYTHONUNBUFFERED=1 COURSE_TEST_JOBS=${COURSE_TEST_JOBS:-8}

step() {  # step NAME COMMAND...: runs it, logs it, records its exit status, tabulates the planted verdicts
  local name=$1; shift
  rm -rf "$COURSE_BUILD_DIR/planted-results"
  echo "=== $name: $* ($(date -u +%H:%M:%S))" | tee -a "$logs/summary.txt"
  "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit status $rc ($(date -u +%H:%M:%S))" | tee -a "$logs/summary.txt"
  if [ -d "$COURSE_BUILD_DIR/planted-results" ]; then
    "$COURSE_PYTHON" "$root/tools/verdicts_table.py" "$COURSE_BUILD_DIR/planted-results" >"$logs/verdicts-$name.md"
  fi
  tail -n 25 "$logs/$name.log"
}

{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
  "$COURSE_PYTHON" -c 'import torch,sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())'
  nvcc --version | tail -2
} 2>&1 | tee -a "$logs/summary.txt"

grader_tests='planted/|judge/|build/'
for s in $steps; do
  case $s in
    main) COURSE_MAIN_JOBS=${COURSE_MAIN_JOBS:-9} step main ./course main ;;
    gpu-cases)  # every reference solution, every planted case of the CUDA exercises (04-06), and all of 07-09's
      step gpu-cases ./course test -R 'planted/0[1-9]_[a-z_]*/reference$|planted/0[4-6]_|planted/0[7-9]_[a-z_]*/|build/cuda_targets' ;;
    cuda-cases)  # the references and stubs of 03-06 and every planted case of 04 (the ones whose verdicts need a GPU)
      step cuda-cases ./course test -R 'planted/0[3-6]_[a-z_]*/(reference|stub)$|planted/04_cuda/' ;;
    late-07)  # 07's planted cases (late-cases = late-07 late-08-09: each fits one call, both do not). A 07 grade makes
      # ~13 harness runs one after another, each taking the GPU turn: with the turns on, the 20 grades would queue for
      # the GPU (two grades at once took 5 min 52 s, evidence/gpu/2026-12-06-empty-grid-harness-1-2). The turns are off
      # here (COURSE_LATE_GPU_LOCK=on keeps them): the planted harnesses hold no GPU memory, and a neighbour's kernels
      # only add noise to the stream race that catches.default_stream relies on.
      COURSE_GPU_LOCK=${COURSE_LATE_GPU_LOCK:-off} step late-07 ./course test -R 'planted/07_testing/' ;;
    late-08-09)  # 08's and 09's planted cases (the GPU turns on: 08 times the profiler) and the CUDA targets test
      step late-08-09 ./course test -R 'planted/0[89]_[a-z_]*/|build/cuda_targets' ;;
    harness-5x)  # chapter 7's reference harness graded five times (new seed, new order each time): catches all, every time.
      # The grades run at once, but their GPU runs take turns (one lock per machine): five need more than one call's
      # 10 minutes, so COURSE_HARNESS_RUNS='1 2' then '3 4 5' splits them over two calls. Each keeps its results
      # (planted-results/harness-N/) and its log (harness-N.log)
      step harness-5x bash -c "./course build || exit 1
        for i in ${COURSE_HARNESS_RUNS:-1 2 3 4 5}; do '$COURSE_PYTHON' -u autograder/tests/run_planted.py --judge '$COURSE_BUILD_DIR/judge' \
          --course-root '$root' --case autograder/planted/07_testing/reference \
          --results-dir '$COURSE_BUILD_DIR/planted-results/harness-'\$i --work-dir '$COURSE_BUILD_DIR/harness-5x/'\$i \
          >'$logs/harness-'\$i.log 2>&1 & done
        bad=0; for p in \$(jobs -p); do wait \$p || bad=\$((bad + 1)); done
        echo \"\$bad of the grades (${COURSE_HARNESS_RUNS:-1 2 3 4 5}) of the reference harness did not get its expected verdict\"; [ \$bad = 0 ]" ;;
    neighbours)  # issue 30: the reference's verdicts beside hostile neighbours in a --jobs 8 batch, with the GPU turns
      # off, and beside a process outside the course that holds all of the GPU's memory (tools/gpu/neighbours.py)
      step neighbours bash -c "./course build && '$COURSE_PYTHON' tools/gpu/neighbours.py '$logs' ${COURSE_NEIGHBOURS_PARTS:-}" ;;
    stable-abi)  # exercise 10 compiled against the course's torch's stable headers, graded under this machine's older
      # torch: the judge alone is built (grader_10_stable_abi, through a grade of the reference), then the exercise's
      # planted cases whose verdicts are the GPU's, side by side (their GPU runs take turns); the audit and
      # cross-version cases need the course's environment (its audit tools, its older torch), which this machine lacks
      step stable-abi bash -c "grep -h 'define TORCH_VERSION_M' '${COURSE_STABLE_TORCH_INCLUDE:-/nonexistent}/torch/headeronly/version.h'
        ./course grade 10_stable_abi solutions/10_stable_abi
        for n in reference stub default_stream no_device_guard; do c=autograder/planted/10_stable_abi/\$n
          '$COURSE_PYTHON' autograder/tests/run_planted.py --judge '$COURSE_BUILD_DIR/judge' --course-root '$root' \
            --case \$c --results-dir '$COURSE_BUILD_DIR/planted-results' --work-dir '$COURSE_BUILD_DIR/planted-work/10/'\$n \
            >'$logs/stable-abi-'\$n.log 2>&1 & done
        bad=0; for p in \$(jobs -p); do wait \$p || bad=\$((bad + 1)); done; echo \"\$bad case(s) not as expected\"; [ \$bad = 0 ]" ;;
    python-ops)  # exercise 11 (operators defined in Python, a Triton kernel): the reference graded (only the judge is
      # built, through grader_11_python_ops), then its planted cases side by side (their GPU runs take turns), then
      # the chapter's overhead table on this GPU
      step python-ops bash -c "./course grade 11_python_ops solutions/11_python_ops
        for c in autograder/planted/11_python_ops/*/; do n=\$(basename \$c)
          '$COURSE_PYTHON' autograder/tests/run_planted.py --judge '$COURSE_BUILD_DIR/judge' --course-root '$root' \
            --case \$c --results-dir '$COURSE_BUILD_DIR/planted-results' --work-dir '$COURSE_BUILD_DIR/planted-work/11/'\$n \
            >'$logs/python-ops-'\$n.log 2>&1 & done
        bad=0; for p in \$(jobs -p); do wait \$p || bad=\$((bad + 1)); done; echo \"\$bad case(s) not as expected\"
        cmake --build '$COURSE_BUILD_DIR' --target course_demo_ops >'$logs/demo-ops-build.log' 2>&1
        '$COURSE_PYTHON' site_tools/examples/python_op_overhead.py '$COURSE_BUILD_DIR/examples/libcourse_demo_ops.so' \
          >'$logs/python-op-overhead.txt' 2>&1
        [ \$bad = 0 ]" ;;
    cases)  # the planted cases COURSE_CASES (a ctest regex) names
      step cases ./course test -R "${COURSE_CASES:?COURSE_CASES: a ctest regex}" ;;
    mutants)  # issue 31: a sample of exercise 04's mutants (all CUDA), graded here; the reports go to LOG_DIR/mutants,
      # beside the committed summary of the other exercises (copied in first: summary.md then lists them all, to commit)
      mkdir -p "$logs/mutants" && cp evidence/mutants/summary.json "$logs/mutants/"
      # --budget: no mutant starts after it (the ones started finish: up to ~430 s for a hang with 8 at once), so the
      # reports are written inside one call; a second call resumes from build-gpu/mutants/cache.
      # The GPU turns are off by default here (COURSE_MUTANTS_GPU_LOCK=on keeps them): a reference's mutants are not
      # hostile neighbours of one another, and with the turns 8 grades at once queue for the one GPU (measured on the
      # H200: 180-200 s a mutant, evidence/gpu/2026-12-05-mutants-04). A mutant that takes the GPU's memory would still
      # be retried alone by the judge.
      COURSE_GPU_LOCK=${COURSE_MUTANTS_GPU_LOCK:-off} step mutants ./course mutants 04 --sample "${COURSE_MUTANTS_SAMPLE:-24}" \
        --seed "${COURSE_MUTANTS_SEED:-1}" --jobs "${COURSE_MUTANTS_JOBS:-8}" --budget "${COURSE_MUTANTS_BUDGET:-150}" \
        --out "$logs/mutants" ;;
    hang)  # issue 31: a kernel that never ends, graded with the default settings, beside the reference's grade time
      step hang bash "$root/tools/gpu/time_hang.sh" "$logs" ;;
    gpu-cases-no-gpu)  # the references with CUDA rows, the GPU hidden: those rows SKIPPED, the rest PASS
      CUDA_VISIBLE_DEVICES= step gpu-cases-no-gpu ./course test -R 'planted/0[4-9]_[a-z_]*/reference$' ;;
    probes)  # chapter 4's claims that only a GPU can show: a synchronisation during capture (and what it leaves
      # broken), each mode in a fresh process; outputs taller and wider than gridDim.y could launch
      step probes bash -c "'$COURSE_PYTHON' tools/gpu/capture_sync_probe.py sync; \
        '$COURSE_PYTHON' tools/gpu/capture_sync_probe.py control; ./course build && \
        '$COURSE_PYTHON' tools/gpu/tall_mm16.py '$COURSE_BUILD_DIR/lib/solutions/04_cuda/libmm16_cuda.so'" ;;
    chapter-figures)  # issue 26: chapter 8's profiler tables and chapter 9's JIT figures, regenerated into evidence
      step chapter-figures bash -c "./course build && '$COURSE_PYTHON' tools/gpu/chapter_figures.py '$logs/chapter-figures' \
        '$COURSE_BUILD_DIR/lib/solutions/06_autograd/libmm16_autograd.so' autograder/portability/probe_kernel.cu \
        \"\$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)\" '$COURSE_BUILD_DIR/harness_targets'" ;;
    test) step test ./course test -R "$grader_tests" ;;
    test-no-gpu) CUDA_VISIBLE_DEVICES= step test-no-gpu ./course test -R 'planted/' ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
  esac
done
# Is a sandbox possible here? (informational: the grader reports its own protections)
if "$root/.deps/usr/bin/bwrap" --unshare-all --die-with-parent --ro-bind / / true 2>"$logs/bwrap-probe.txt"; then
  echo "bubblewrap (carried) works here" | tee -a "$logs/summary.txt"
else
  echo "bubblewrap (carried) does not work here: $(cat "$logs/bwrap-probe.txt")" | tee -a "$logs/summary.txt"
fi
# The run's machine-readable summary (the machine; every reference's rows; the planted cases' verdicts with and
# without the GPU): what the site renders GPU figures from (opcourse/site/gpu_evidence.py)
"$COURSE_PYTHON" -m opcourse.site.gpu_evidence "$logs" || echo "gpu_evidence: no summary.json" >&2
