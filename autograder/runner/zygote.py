"""The runner zygote: `python -m autograder.runner.zygote CONTROL_FD`, started once by the judge
(autograder.judge.session).

A fresh runner spends seconds importing torch, Triton, CuPy, torch._dynamo and the exercises before it runs
the first cell. The zygote imports all of that once, without touching CUDA (a child forked after the CUDA
driver is initialised cannot use CUDA), and forks a runner for each request: the child runs
autograder.runner.worker's loop in-process, no exec.

In the sandbox (autograder.boundary.sandbox.status() ok; the judge says so in the request) the child enters it
itself: it unshares the mount, PID and network namespaces and forks again, so that the grandchild is PID 1
of a new PID namespace with a fresh /proc; the grandchild hides the instructor's files, makes every file
system read-only but its private HOME, sets the resource limits and drops every capability, as
`python -m autograder.boundary.sandbox` does before its exec. The middle process waits for it and exits with its
status, so the judge sees the runner's own exit code or signal; killing the middle process kills the
grandchild (PR_SET_PDEATHSIG) and with it every process of its namespace.

Protocol, on the judge's SOCK_SEQPACKET socket (one datagram a message, JSON):
  zygote -> judge, once: {"ready": true, "pid", "imported_s", "sandbox": [ok, why]} (or {"ready": false, "why"})
  judge -> zygote: {"op": "spawn", "env": {...}, "dir": HOME, "sandbox": bool, "hide": [...], "packages": [...],
                   "memory": BYTES, "cgroup": PATH} with three file descriptors: the runner's request pipe (read end),
                   its reply pipe (write end) and its log (stdout and stderr: a pipe the judge reads with a cap)
                   ("packages": the only Python packages its file system keeps, for a NumPy-only runner; "cgroup":
                   the memory cgroup the judge made for it, joined first; "memory": else its RLIMIT_DATA)
A zygote started with FLASHCOURSE_RUNNER=numpy imports NumPy and the declarations only, never torch
(autograder.runner.numpy_only): the judge keeps one of each kind.
  zygote -> judge: {"ok": true, "pid": P} with one descriptor: the runner's status socket, or {"ok": false, "why"}
On a runner's status socket the judge sends b"kill" (the zygote kills the runner's process group) and the
zygote sends {"code": C} once the runner is gone (C as subprocess.Popen.returncode: -N for signal N), then
closes it. When the judge's socket closes, the zygote kills its runners and exits.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time
import warnings

MAX_MESSAGE = 1 << 20


def _import_numpy_only() -> None:
    """What a NumPy-only runner needs (autograder.runner.numpy_only): never torch, SciPy, CuPy or Triton."""
    import math  # noqa: F401

    import numpy  # noqa: F401

    from autograder.runner import numpy_only
    numpy_only.prepare()
    from autograder.declare import registry
    from autograder.boundary import sandbox, wire  # noqa: F401
    from autograder.runner import execute, tamper, worker  # noqa: F401
    registry.all_exercises()
    numpy_only.prepare()  # again: nothing imported since brought torch in


def _import_everything() -> None:
    """What a runner needs before its first cell (autograder.runner.worker._load and the cells' SETUP)."""
    from autograder.runner import numpy_only
    if numpy_only.wanted():
        return _import_numpy_only()
    import math  # noqa: F401

    import numpy  # noqa: F401
    import torch  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401
    try:
        import cupy  # noqa: F401
    except Exception:  # noqa: BLE001  (not installed, or no CUDA libraries: a runner does without it too)
        pass
    import torch._dynamo  # noqa: F401
    import torch.profiler  # noqa: F401
    import torch.utils._python_dispatch  # noqa: F401

    import course  # noqa: F401
    import course.timing  # noqa: F401
    from autograder.declare import registry
    from autograder.boundary import sandbox, wire  # noqa: F401
    registry.all_exercises()


def _cuda_initialised() -> str | None:
    """A device file of the NVIDIA driver held open: the CUDA driver was initialised here (forks would fail)."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/dev/nvidia"):
            return target
    return None


def _send(sock: socket.socket, msg: dict, fds: list[int] = ()) -> None:
    data = json.dumps(msg).encode()
    if fds:
        socket.send_fds(sock, [data], list(fds))
    else:
        sock.send(data)


def _close_all_but(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _exit_like(status: int) -> None:
    """End this process the way the one whose wait status this is ended: same exit code, same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the runner's core (if any) is not ours to dump
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _runner(req: dict, req_fd: int, rep_fd: int) -> int:
    """In the forked child: become the runner (in the sandbox if asked) and serve; the exit status."""
    from autograder.boundary import sandbox
    from autograder.runner import worker
    home = str(req["dir"])
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in req.get("env", {}).items()})
    if req.get("cgroup"):  # the memory cgroup the judge made for this runner: joined before anything else forks
        sandbox.join_cgroup(str(req["cgroup"]))
    if req.get("sandbox"):
        sandbox.unshare(sandbox.NAMESPACES)
        sandbox.private_mounts()
        alive_r, alive_w = os.pipe()
        pid = os.fork()
        if pid:  # the middle process: outside the new PID namespace, it only waits
            for fd in (req_fd, rep_fd, alive_r):
                os.close(fd)
            while True:
                try:
                    _, status = os.waitpid(pid, 0)
                    break
                except ChildProcessError:
                    os._exit(1)
            _exit_like(status)
        # PID 1 of the new namespace: it dies with the middle process, and everything in it with it
        sandbox.prctl(sandbox.PR_SET_PDEATHSIG, signal.SIGKILL)
        os.close(alive_w)
        if select.select([alive_r], [], [], 0)[0]:  # the middle process died before PDEATHSIG was set
            os._exit(1)
        os.close(alive_r)
        sandbox.mount_proc()
        uid = sandbox.enclose(home, [str(p) for p in req.get("hide", [])],
                              tuple(str(p) for p in req.get("packages", [])), int(req.get("memory", 0)))
        os.environ.update(sandbox.environment(home))
        sandbox.drop_capabilities(uid)
        sandbox.prctl(sandbox.PR_SET_PDEATHSIG, signal.SIGKILL)  # again: a change of credentials may clear it
    else:
        if req.get("memory"):
            sandbox.limit_memory(int(req["memory"]))
        os.chdir(home)
    _fresh_process_state()
    worker._T0[0] = time.perf_counter()
    code = worker.serve(req_fd, rep_fd)
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _fresh_process_state() -> None:
    """What a fresh `python -m autograder.runner.worker` would have had of its own: a temporary directory under this
    environment's TMPDIR, caches under its FLASHCOURSE_CACHE, unshared random states, its own argv."""
    import importlib
    import random
    import tempfile

    import numpy
    importlib.invalidate_caches()  # directory listings read before the sandbox hid some of them
    tempfile.tempdir = None
    cpucuda = sys.modules.get("course.cpucuda")
    if cpucuda is not None and hasattr(cpucuda, "CACHE"):
        cpucuda.CACHE = os.environ.get("FLASHCOURSE_CACHE", os.path.join(os.path.expanduser("~"), ".cache",
                                                                         "flashcourse"))
    random.seed()
    numpy.random.seed()
    sys.argv = ["autograder.runner.worker"]


class _Child:
    def __init__(self, pid: int, status: socket.socket):
        self.pid, self.status = pid, status
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.pidfd = None  # polled instead
        self.killed = False
        self.let_go = False  # the judge closed its end of the status socket


class Zygote:
    def __init__(self, control: socket.socket):
        self.control = control
        self.children: dict[int, _Child] = {}

    def spawn(self, req: dict, fds: list[int]) -> None:
        req_fd, rep_fd, log_fd = fds
        try:
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            sys.stdout.flush()
            sys.stderr.flush()
            me = os.getpid()
            pid = os.fork()
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        if pid == 0:
            code = 70
            try:
                # nothing of the zygote or of other runners stays open in a runner: detach the socket
                # objects first, so that collecting them later cannot close a descriptor now reused
                for s in [self.control, mine, theirs] + [c.status for c in self.children.values()]:
                    s.detach()
                os.setsid()  # its own process group: the judge's kill takes the processes it starts too
                _die_with_zygote(me)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(log_fd, 1)
                os.dup2(log_fd, 2)
                _close_all_but({0, 1, 2, req_fd, rep_fd})
                code = _runner(req, req_fd, rep_fd)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
                if not isinstance(e.code, int) and e.code is not None:
                    print(e.code, file=sys.stderr)
            except BaseException:  # noqa: BLE001
                import traceback
                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        for fd in fds:
            os.close(fd)
        self.children[pid] = _Child(pid, mine)
        try:
            _send(self.control, {"ok": True, "pid": pid}, [theirs.fileno()])
        finally:
            theirs.close()

    def reap(self, child: _Child) -> bool:
        try:
            pid, status = os.waitpid(child.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = child.pid, 255 << 8
        if pid == 0:
            return False
        try:
            _send(child.status, {"code": os.waitstatus_to_exitcode(status)})
        except OSError:
            pass
        child.status.close()
        if child.pidfd is not None:
            os.close(child.pidfd)
        del self.children[child.pid]
        return True

    def kill(self, child: _Child) -> None:
        if not child.killed:
            child.killed = True
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                try:
                    os.kill(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def loop(self) -> int:
        while True:
            waits = [self.control] + [c.status for c in self.children.values() if not c.let_go] + \
                    [c.pidfd for c in self.children.values() if c.pidfd is not None]
            poll = any(c.pidfd is None for c in self.children.values())
            ready, _, _ = select.select(waits, [], [], 0.05 if poll else None)
            for c in list(self.children.values()):
                if c.pidfd is None or c.pidfd in ready:
                    self.reap(c)
            for c in list(self.children.values()):
                if c.status in ready:
                    try:
                        what = c.status.recv(64)
                    except OSError:
                        what = b""
                    if what in (b"kill", b""):  # asked to, or the judge let go of it: kill it
                        c.let_go = what == b""
                        self.kill(c)
            if self.control in ready:
                try:
                    data, fds, _, _ = socket.recv_fds(self.control, MAX_MESSAGE, 8)
                except OSError:
                    data, fds = b"", []
                if not data:  # the judge is gone: so are its runners
                    for c in list(self.children.values()):
                        self.kill(c)
                    deadline = time.monotonic() + 30
                    for c in list(self.children.values()):
                        while not self.reap(c) and time.monotonic() < deadline:
                            time.sleep(0.01)
                    return 0
                try:
                    req = json.loads(data)
                    if not isinstance(req, dict) or req.get("op") != "spawn" or len(fds) != 3:
                        raise ValueError(f"unexpected request {str(req)[:200]} with {len(fds)} descriptors")
                except Exception as e:  # noqa: BLE001
                    for fd in fds:
                        os.close(fd)
                    self.answer_error(e)
                    continue
                try:
                    self.spawn(req, fds)  # it owns (and closes) the descriptors
                except Exception as e:  # noqa: BLE001
                    self.answer_error(e)

    def answer_error(self, e: Exception) -> None:
        try:
            _send(self.control, {"ok": False, "why": f"{type(e).__name__}: {e}"})
        except OSError:
            pass


def _die_with_zygote(zygote: int) -> None:
    """A runner dies with the zygote (which alone can report its status and kill it)."""
    from autograder.boundary import sandbox
    sandbox.prctl(sandbox.PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote:  # it died before that
        os._exit(1)


def _probe_sandbox() -> tuple[bool, str]:
    """Can a forked child here enter the namespaces, mount a /proc and drop its capabilities?"""
    from autograder.boundary import sandbox
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            sandbox.unshare(sandbox.NAMESPACES)
            sandbox.private_mounts()
            inner = os.fork()
            if inner == 0:
                c = 1
                try:
                    sandbox.mount_proc()
                    sandbox.drop_capabilities()
                    caps = sandbox.capabilities()
                    c = 0 if os.getpid() == 1 and caps["CapEff"] == 0 and caps["CapBnd"] == 0 else 3
                finally:
                    os._exit(c)
            _, status = os.waitpid(inner, 0)
            code = os.waitstatus_to_exitcode(status)
        finally:
            os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return (True, "namespaces entered in a forked child") if code == 0 else \
        (False, f"a forked child could not enter the sandbox (status {code})")


def main(argv: list[str]) -> int:
    t0 = time.perf_counter()
    control = socket.socket(fileno=int(argv[0]))
    os.set_inheritable(control.fileno(), False)
    # The forks happen with only this thread running Python; native pools (OpenBLAS) handle fork themselves.
    warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
    try:
        _import_everything()
        held = _cuda_initialised()
        if held:
            raise RuntimeError(f"the CUDA driver was initialised while importing ({held} is open): "
                               "a forked runner could not use CUDA")
        want_sandbox = os.environ.get("FLASHCOURSE_ZYGOTE_SANDBOX") == "1"
        box = _probe_sandbox() if want_sandbox else (False, "not asked for")
    except BaseException as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        _send(control, {"ready": False, "why": f"{type(e).__name__}: {e}"[:2000]})
        return 1
    _send(control, {"ready": True, "pid": os.getpid(), "imported_s": round(time.perf_counter() - t0, 3),
                    "sandbox": list(box)})
    return Zygote(control).loop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
