"""The worker server: one per grade, inside the sandbox, as a uid of its own. It imports torch and every probe group
once, then forks a fresh worker per request (worker.main in a child): a check group then costs a fork, not a Python
start and a torch import. The server itself never loads submission code; only its children do, each after the fork
and before any CUDA context exists (the server never touches CUDA).

Nothing a child leaves is there for the next one:
- the server is the init (pid 1) of the sandbox's pid namespace (bubblewrap --as-pid-1): a child cannot kill or stop
  it (the kernel drops signals from inside the namespace that its init does not handle, and it handles none), and it
  is not dumpable, so a child (same uid) cannot ptrace it or reach its file descriptors through /proc;
- after each child, every other process of the namespace is killed (orphans are the init's to reap), /tmp is
  emptied and System V IPC objects are removed; the judge moves the run's folder out of the sandbox's view and empties
  the uid's keyrings. If anything cannot be removed, the server answers and then exits: the judge starts a new one.

Protocol: one JSON request per line on stdin, {"seq", "request", "cwd", "env"}; answers on fd 3, "ready" once the
imports are done, then per request "done SEQ exit N" or "done SEQ signal N" once the child and all it started are
gone. A child inherits stdout and stderr (the judge's pipes: what it prints between a request and its answer is that
request's output), gets /dev/null as stdin, and never holds fd 3.
"""

import ctypes
import json
import os
import shutil
import signal
import stat
import sys
import time
import traceback

CONTROL_FD = 3
_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_DUMPABLE = 4


def answer(line):
    os.write(CONTROL_FD, (line + "\n").encode())


def _remove_new_entries(folder, keep):
    """Removes what was made in `folder` since the server started (`keep`: the entries it held then, the folders
    bubblewrap made on the way to a mount point, root's); False if anything new stayed."""
    try:
        entries = [e for e in os.scandir(folder) if e.name not in keep]
    except OSError:
        return False
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                for root, dirs, _ in os.walk(e.path):  # a child may leave folders it cannot enter (mode 000)
                    for d in dirs:
                        path = os.path.join(root, d)
                        if not os.path.islink(path):
                            os.chmod(path, stat.S_IRWXU)
                os.chmod(e.path, stat.S_IRWXU)
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
        except Exception:  # noqa: BLE001 - what stays is reported below
            pass
    try:
        return not (set(os.listdir(folder)) - keep)
    except OSError:
        return False


def _remove_ipc():
    """Removes the System V shared memory, semaphores and message queues of this namespace (all the uid's)."""
    calls = {"shm": _libc.shmctl, "sem": _libc.semctl, "msg": _libc.msgctl}
    clean = True
    for kind, ctl in calls.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()  # key, id, perms, ...
            if len(fields) < 2:
                continue
            ident = int(fields[1])
            args = (ident, 0, 0) if kind == "sem" else (ident, 0, None)
            if ctl(*args) != 0:  # IPC_RMID == 0
                clean = False
    return clean


_TMP_AT_START = frozenset()


def sweep():
    """Kills every process of the namespace but this one, then empties what a child could write; True if clean."""
    me = os.getpid()
    others = []
    for _ in range(400):
        try:
            os.kill(-1, signal.SIGKILL)  # all but the caller and (being init) itself
        except ProcessLookupError:
            pass
        while True:  # orphans are reparented to the namespace's init: this process
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
        if not others:
            break
        time.sleep(0.005)
    clean = not others
    clean = _remove_new_entries("/tmp", _TMP_AT_START) and clean
    return _remove_ipc() and clean


def run_child(msg):
    """In the forked child: becomes the worker of one request; returns the exit status for the interpreter's exit."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.closerange(3, 1 << 16)  # the control channel and whatever else the server holds
    sys.stdin = open(os.devnull)
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as a fresh worker is (the server stays not dumpable)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter has it
    os.environ.clear()
    os.environ.update(msg["env"])
    os.chdir(msg["cwd"])
    sys.argv = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py"), msg["request"]]
    import worker

    try:
        worker.main(msg["request"], started=time.monotonic())
        return 0
    except SystemExit as e:  # the submission called sys.exit(): the status a fresh interpreter would end with
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - as an uncaught exception ends a fresh interpreter
        traceback.print_exc()
        return 1


def leave(status):
    """Ends a child as a fresh interpreter's exit would, minus the teardown of torch's modules (0.4 s): non-daemon
    threads are waited for, atexit handlers run, output is flushed, then C exit() runs the C atexit handlers and the
    static destructors of every loaded library (a submission's included)."""
    import atexit
    import threading

    try:
        threading._shutdown()
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    _libc.exit(status & 0xFF)


def serve():
    if os.getpid() != 1:  # its sweep kills every process it may signal: only ever inside a pid namespace of its own
        sys.exit("worker_server.py runs only as the init of a sandbox's pid namespace (bubblewrap --as-pid-1)")
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_IGN)  # init with no handler: unreachable by signals from inside
    import worker  # beside this script, whose folder Python searches first

    worker.preload(warm="--warm" in sys.argv[1:])
    global _TMP_AT_START
    _TMP_AT_START = frozenset(os.listdir("/tmp"))
    answer("ready")
    while True:
        line = sys.stdin.readline()
        if not line:
            return None  # the judge is done (or gone)
        msg = json.loads(line)
        pid = os.fork()
        if pid == 0:
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
                signal.signal(sig, signal.SIG_DFL)
            return msg  # the child leaves the loop: its interpreter exits as a worker's would
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except ChildProcessError:
                status = 0
                break
        clean = sweep()
        how = f"exit {os.waitstatus_to_exitcode(status)}" if os.WIFEXITED(status) else f"signal {os.WTERMSIG(status)}"
        answer(f"done {msg['seq']} {how}")
        if not clean:
            return None  # something of that child could not be removed: the next request goes to a new server


if __name__ == "__main__":
    request = serve()
    if request is None:
        os._exit(0)  # the server: nothing of its own to finalise (an interpreter's exit with torch costs 0.6 s)
    leave(run_child(request))
