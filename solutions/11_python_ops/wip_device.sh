set -x
nvidia-smi -L
PY=$(command -v python3); echo $PY; $PY -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.is_available())"
mkdir -p /tmp/cases && $PY - <<'PYEOF'
from pathlib import Path
from opcourse import planted
root = Path(".")
for case in ("no_wrap_triton", "fake_ignores_dtype", "no_edge_mask"):
    out = Path("/tmp/cases") / case; out.mkdir(parents=True, exist_ok=True)
    for name, text in planted.patched_files(root, root / "autograder/planted/11_python_ops" / case).items():
        (out / name).write_text(text)
PYEOF
timeout 200 $PY solutions/11_python_ops/wip_gpu_probe.py solutions/11_python_ops 2>&1 | grep -v Warning | tail -40
for c in no_wrap_triton fake_ignores_dtype; do timeout 120 $PY solutions/11_python_ops/wip_gpu_probe.py /tmp/cases/$c 2>&1 | grep -v Warning | tail -25; done
timeout 150 $PY site_tools/examples/python_op_overhead.py 2>&1 | tail -15
