"""Chapter 4's claim about a device-wide synchronisation during CUDA-graph capture, repeated on a GPU machine: what
the capture raises, and what is still usable in the process afterwards (plain work, a synchronize, a second clean
capture and its replay, the default CUDA generator, a fresh generator, the generator after torch.cuda.manual_seed).

The synchronisation is the one an operator would make: cudaDeviceSynchronize() from the CUDA runtime torch loaded,
its error code ignored, inside `with torch.cuda.graph(g)`. `control` does the same without it, so that what breaks
can be told from what capture always does. Each mode needs a fresh process (run_on_gpu.sh's `probes` step).

usage: python tools/gpu/capture_sync_probe.py sync|control"""

import ctypes
import sys

import torch


def say(what, fn):
    try:
        print(f"{what}: ok {fn()}")
    except Exception as e:  # noqa: BLE001 - what it raised is the observation
        print(f"{what}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


def main(mode):
    x = torch.ones(4, device="cuda")
    torch.cuda.synchronize()
    cudart = ctypes.CDLL(next(line.split()[-1] for line in open("/proc/self/maps") if "libcudart" in line))
    print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(), "mode", mode)

    def capture():
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            x.mul(2)
            if mode == "sync":
                print("  cudaDeviceSynchronize() during capture returned", cudart.cudaDeviceSynchronize())
        return "captured"

    def clean_capture_and_replay():
        static = torch.zeros(4, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = static * 2 + 1
        static.fill_(3)
        g.replay()
        torch.cuda.synchronize()
        return out.tolist()

    say("capture", capture)
    say("plain work", lambda: (x * 3).sum().item())
    say("torch.cuda.synchronize", torch.cuda.synchronize)
    say("a second, clean capture and replay", clean_capture_and_replay)
    say("torch.randn on the default CUDA generator", lambda: list(torch.randn(2, device="cuda").shape))
    say(
        "torch.randn with a fresh generator",
        lambda: list(torch.randn(2, device="cuda", generator=torch.Generator("cuda")).shape),
    )
    torch.cuda.manual_seed(0)
    say("torch.randn after torch.cuda.manual_seed(0)", lambda: list(torch.randn(2, device="cuda").shape))


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("sync", "control"):
        sys.exit(__doc__)
    main(sys.argv[1])
