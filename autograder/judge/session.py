"""The judge's handle on a runner process: a warm child that executes one submission's cells once
and then serves every check of it (autograder.runner.worker), while the verdicts are decided here.

A runner is forked, ready to run cells in a few tens of milliseconds, by the judge's zygote
(autograder.runner.zygote: one process that imported torch, Triton, CuPy and the exercises once, and enters
the sandbox in each child); where the zygote cannot serve (FLASHCOURSE_ZYGOTE=0, it failed to start,
it cannot enter the sandbox) a runner is a fresh `python -m autograder.runner.worker` inside
autograder.boundary.sandbox, seconds slower, and the judge says why once.

A crash, a hang, an `os._exit` or a corrupted CUDA context costs the check it happened in; the
next check gets a fresh runner. A cell that hangs or kills the process while the cells load costs
the exercises that cell defines: the runner is restarted without it.
"""
from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace

from course import mode

from autograder.declare import registry
from autograder.boundary import sandbox, wire
from autograder.declare.submission import Cell, defines
from autograder.judge.verdict import Kind, Verdict

from autograder.layout import ROOT

# The runner's two programs, started by name (the judge imports nothing of the runner's).
WORKER, ZYGOTE = "autograder.runner.worker", "autograder.runner.zygote"
CELL_TIMEOUT = {"cpu": 60.0, "gpu": 60.0}  # seconds one cell may take while a submission loads
START_TIMEOUT = 180.0  # seconds for a runner to start (imports, CUDA) before its first cell
LOAD_BUDGET = {"cpu": 150.0, "gpu": 120.0}  # seconds a notebook's hanging cells may cost in all
# A correctness (or hidden) check on a GPU runs small cases: on an H100 the slowest took 9.2 s, runner start and
# compiles included, with six submissions graded at once (benchmarks/grading_v2_ipc_engine_h100.log, archived in
# benchmarks/runs/runs.tar.xz). A hung kernel holds the GPU until its check times out, and in a class every timed
# check waits behind it (a class of 200 on an H100: each hang cost the GPU about 60 s), so such a check gets at most
# this long; the exercise's own
# timeout still rules timed checks, whose slow-but-correct kernels may need it.
QUIET_GPU_TIMEOUT = 30.0
# On a GPU the runner says when the submission's function has returned from a quiet check's call (its launches
# are asynchronous): what is left is the GPU running what was launched on a small case, milliseconds for any
# kernel that ends. A kernel that has not ended this long after is stopped: a hung kernel then holds the GPU,
# and every timed check waiting for it, about GPU_DRAIN_S after its compile, not QUIET_GPU_TIMEOUT. A runner
# that never says so only keeps the longer timeout; one that says so early only shortens its own. Once the
# GPU is done (the runner says "synced"), the rest of the answer (the audit's profiler, the encoding) has the
# check's own deadline again: the 10 s are the GPU's, not the CPU's. No message can give a runner more time
# than the check's deadline, which is what a silent runner gets.
GPU_DRAIN_S = 10.0
# CUDA errors that leave a context unusable: every later call in that process fails with them too
STICKY = ("illegal memory access", "illegal address", "unspecified launch failure", "misaligned address",
          "device-side assert", "illegal instruction", "CUDA_ERROR_ILLEGAL", "cudaErrorIllegal", "context is destroyed")
# The rest of a notebook's time: every check, runner start and cell load of one Session (its NumPy runner's too)
# together, counted while a check runs (not while it waits for the GPU's lock). LOAD_BUDGET bounds the cells that
# hang, a check its own timeout; without this a notebook whose slow cells reload after every check that kills its
# runner, or whose many checks each run just under their timeouts, could hold a worker for hours. Once spent, the
# checks left are not run (timed out, said why).
NOTEBOOK_BUDGET = {"cpu": 1200.0, "gpu": 600.0}


def _size(text: str | None, default: int) -> int:
    """Bytes from an instructor's setting ("4g", "512m", "1048576"), or the default."""
    if not text:
        return default
    text = text.strip().lower()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("kmg")) * mult)


def _ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 16 << 30


# What one runner may use (FLASHCOURSE_RUNNER_MEMORY, _HOME, _OUTPUT override them):
# memory: a cgroup v2 of its own (memory.max, no swap; its tmpfs pages count too) where this judge can make one
#   (sandbox.cgroup_root), else RLIMIT_DATA (sandbox.limits: not RLIMIT_AS, which breaks CUDA); a quarter of
#   the machine's memory, at least 2 GiB and at most 16 GiB;
# HOME (and the buffers the judge and the runner exchange there): a tmpfs of its own of that size, mounted by the
#   judge where the sandbox is available (grown for a request whose inputs need more room), else a plain directory;
# output: what its processes print comes to the judge through a pipe, of which the last 64 KiB are kept (feedback);
#   past OUTPUT_CAP bytes in all the runner is stopped and its check fails.
RUNNER_MEMORY = _size(os.environ.get("FLASHCOURSE_RUNNER_MEMORY"), max(2 << 30, min(16 << 30, _ram() // 4)))
HOME_BYTES = _size(os.environ.get("FLASHCOURSE_RUNNER_HOME"), 4 << 30)
OUTPUT_CAP = _size(os.environ.get("FLASHCOURSE_RUNNER_OUTPUT"), 16 << 20)
OUTPUT_KEPT = 64 << 10
# NumPy/Python exercises (Exercise.kind "python") are graded in a runner of their own that never imported torch and,
# in the sandbox, whose file system holds no Python package but NumPy (autograder.runner.numpy_only). Tests switch it
# off only to show what it prevents.
NUMPY_RUNNERS = True
NUMPY_PACKAGES = ("numpy",)
FLOODED = ("your code printed more than {cap} (the grader keeps only the end of what a runner prints): it was "
           "stopped; this check fails")
MEMORY_KILLED = ("your code used more than {cap} of memory (the limit of the grader's process for it): the kernel "
                 "stopped it; this check fails")


def _gib(n: int) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 1 << 30 else f"{n / 2**20:.3g} MiB"


MAX_GUARDS = 4096  # guarded buffers in one answer (an exercise has a handful of outputs per call, 16 input sets)
REPLY_SLACK, REPLY_FACTOR = 256 << 20, 4  # an answer's buffers: at most 256 MiB + 4x the largest inputs sent


class DrainTimeout(TimeoutError):
    """A quiet check's launched GPU work did not end within GPU_DRAIN_S of the function's return."""


HANG_HINT = ("an endless loop (a loop bound that never grows? a mask that never ends the loop?), a deadlock "
             "(a __syncthreads() or a shuffle that not every named thread reaches), or a kernel far too slow")


class RunnerGone(Exception):
    """The runner died or ran out of time; the message says which, for the student."""


class RunnerFailed(Exception):
    """The runner could not do what was asked (the submission raised, is not implemented, ...)."""

    def __init__(self, kind: str, message: str, fatal: bool = False):
        super().__init__(message)
        self.kind, self.fatal = kind, fatal


# What of the judge's environment a runner gets: what Python, CUDA, Triton and CuPy need, nothing else
# (an instructor's tokens and passwords stay out of reach of student code, whose prints come back).
_ENV_KEEP = ("PATH", "LANG", "LANGUAGE", "LC_", "TZ", "TERM", "PYTHON", "VIRTUAL_ENV", "CONDA", "CUDA", "NVIDIA",
             "LD_LIBRARY_PATH", "TRITON", "CUPY", "TORCH", "PYTORCH", "FLASHCOURSE", "OMP_", "MKL_", "OPENBLAS",
             "CC", "CXX", "NCCL_")


def _env(numpy_only: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k.startswith(_ENV_KEEP)}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["FLASHCOURSE_MODE"] = mode.MODE
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.pop("FLASHCOURSE_RUNNER", None)
    if numpy_only:  # no GPU, no torch: autograder.runner.numpy_only
        env.update(FLASHCOURSE_RUNNER="numpy", FLASHCOURSE_MODE="cpu")
    return env


def _scratch() -> str:
    """A new directory for one runner's buffers (and its HOME), named after this judge's process."""
    base = None  # buffers in memory (/dev/shm) where it is writable and large enough
    if os.access("/dev/shm", os.W_OK):
        st = os.statvfs("/dev/shm")
        base = "/dev/shm" if st.f_bavail * st.f_frsize > (16 << 30) else None
    base = base or tempfile.gettempdir()
    if not _SWEPT:
        _SWEPT.append(sweep_scratch(base))
    return tempfile.mkdtemp(prefix=f"flashcourse-run-{os.getpid()}-", dir=base)


_SWEPT: list[int] = []


def _cap_home(path: str) -> int:
    """Make a runner's new HOME a tmpfs of HOME_BYTES (where the sandbox is available: root); its size, or 0."""
    if not sandbox.status()[0]:
        return 0
    try:
        sandbox.mount_tmpfs(path, HOME_BYTES)
        return HOME_BYTES
    except OSError as e:
        _Zygote.say_once(f"runners' HOME is not size-limited here (a tmpfs could not be mounted: {e})")
        return 0


_CGROUP: list = []  # [the directory under which runners' cgroups are made, or None], found once


def _runner_cgroup() -> str | None:
    """A new memory cgroup for one runner (RUNNER_MEMORY), or None where this judge cannot make one."""
    if not _CGROUP:
        _CGROUP.append(sandbox.cgroup_root())
        if _CGROUP[0] is None and sandbox.status()[0]:
            _Zygote.say_once(f"no cgroup v2 memory controller for runners here: each runner's memory is limited by "
                             f"RLIMIT_DATA ({_gib(RUNNER_MEMORY)}; page cache not counted)")
    if _CGROUP[0] is None:
        return None
    try:
        return sandbox.make_cgroup(_CGROUP[0], f"flashcourse-{os.getpid()}-{secrets.token_hex(6)}", RUNNER_MEMORY)
    except OSError as e:
        _Zygote.say_once(f"a runner's memory cgroup could not be made ({e}): RLIMIT_DATA instead")
        return None


def sweep_scratch(base: str) -> int:
    """Remove the scratch directories of judges that died without cleaning up (killed, out of memory): in
    /dev/shm they would hold memory until the machine restarts. How many went."""
    import re
    gone = 0
    for name in os.listdir(base):
        m = re.fullmatch(r"flashcourse-run-(\d+)-\w+", name)
        if not m or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # its judge is alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # someone else's, alive
        path = os.path.join(base, name)
        if os.path.ismount(path):  # a runner's HOME tmpfs (_cap_home)
            sandbox.unmount(path)
        shutil.rmtree(path, ignore_errors=True)
        gone += 1
    return gone


class ZygoteError(Exception):
    """The zygote could not give a runner (it is not ready, died, or refused): start one the slow way."""


class _Forked:
    """A runner forked by the zygote, as much of subprocess.Popen as _Process uses: its exit status comes
    from the zygote (its parent) over the runner's status socket."""

    def __init__(self, pid: int, status: socket.socket):
        self.pid, self.status, self.returncode = pid, status, None
        self.gone = False  # its exit (or its zygote's) was seen

    def wait(self, timeout: float | None = None) -> int | None:
        if self.status is not None:
            ready, _, _ = select.select([self.status], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired("runner", timeout)
            try:
                data = self.status.recv(4096)
                self.returncode = int(json.loads(data)["code"]) if data else None  # nothing: the zygote died
                self.gone = True  # (a runner dies with its zygote: PR_SET_PDEATHSIG)
            except (OSError, ValueError, KeyError, TypeError):
                self.returncode = None
            self.status.close()
            self.status = None
        return self.returncode

    def kill(self) -> None:
        """Kill its process group (the zygote does: no pid of ours to reuse), and wait until it is gone. Without
        a zygote there is nothing to kill: a runner dies with its zygote (PR_SET_PDEATHSIG)."""
        if self.status is not None:
            try:
                self.status.send(b"kill")
            except OSError:
                pass
            try:
                self.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.status.close()
                self.status = None


class _Zygote:
    """The judge's one runner zygote (autograder.runner.zygote), started on the first runner's request and again if
    it dies. Runners forked by it start without importing anything: see autograder/runner/zygote.py."""
    lock = threading.Lock()
    current: _Zygote | None = None
    broken: str | None = None  # why a zygote could not start here: runners start the slow way from then on
    numpy_current: _Zygote | None = None  # the same two for NumPy-only runners (autograder.runner.numpy_only)
    numpy_broken: str | None = None
    said: set[str] = set()
    retired: list[_Zygote] = []  # zygotes of an earlier sandbox setting (FLASHCOURSE_SANDBOX changed)

    def __init__(self, sandboxed: bool, numpy_only: bool = False):
        self.owner, self.sandboxed, self.numpy_only = os.getpid(), sandboxed, numpy_only
        if not mode.GPU and not numpy_only:  # the CPU layer's header, precompiled once for runners (read-only there)
            from course.cpucuda import pch
            pch.prepare()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock, self.ready = mine, None
        self.log = tempfile.TemporaryFile("w+")
        env = dict(_env(numpy_only), FLASHCOURSE_MODE_PROBED="1",
                   FLASHCOURSE_ZYGOTE_SANDBOX="1" if sandboxed else "0")
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", ZYGOTE, str(theirs.fileno())],
                                         pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=self.log,
                                         stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True)
        finally:
            theirs.close()

    def tail(self) -> str:
        self.log.seek(0)
        return " | ".join(self.log.read()[-4000:].strip().splitlines()[-6:])

    def _receive(self, timeout: float, what: str) -> tuple[dict, list[int]]:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            raise ZygoteError(f"the zygote did not answer ({what}) in {timeout:.0f} s")
        data, fds, _, _ = socket.recv_fds(self.sock, 1 << 20, 4)
        if not data:
            self.proc.wait()
            raise ZygoteError(f"the zygote died (exit status {self.proc.returncode}): {self.tail()}")
        return json.loads(data), fds

    def wait_ready(self) -> dict:
        if self.ready is None:
            msg, _ = self._receive(START_TIMEOUT, "start")
            if not msg.get("ready"):
                raise ZygoteError(f"the zygote could not start: {msg.get('why')}")
            self.ready = msg
        return self.ready

    def spawn(self, fds: tuple[int, int, int], home: str, hide: list[str], limits: dict) -> _Forked:
        req = {"op": "spawn", "env": _env(self.numpy_only), "dir": home, "sandbox": self.sandboxed, "hide": hide,
               **limits}
        socket.send_fds(self.sock, [json.dumps(req).encode()], list(fds))
        msg, got = self._receive(60.0, "spawn")
        if not msg.get("ok") or len(got) != 1:
            for fd in got:
                os.close(fd)
            raise ZygoteError(f"the zygote refused: {msg.get('why')}")
        return _Forked(int(msg["pid"]), socket.socket(fileno=got[0]))

    def close(self) -> None:
        self.sock.close()  # the zygote kills its runners and exits
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    @classmethod
    def say(cls, why: str) -> None:
        cls.say_once(f"starting this runner without the zygote (slowly): {why}")

    @classmethod
    def say_once(cls, what: str) -> None:
        if what not in cls.said:
            cls.said.add(what)
            print(f"flashcourse: {what}", file=sys.stderr)

    @classmethod
    def runner(cls, fds: tuple[int, int, int], home: str, hide: list[str], numpy_only: bool = False,
               limits: dict | None = None) -> _Forked | None:
        """A runner forked by the zygote (of the NumPy-only kind if asked), or None (said once why) where the
        subprocess path must do."""
        if os.environ.get("FLASHCOURSE_ZYGOTE") == "0":
            return None
        sandboxed = sandbox.status()[0]
        kind = bool(numpy_only)
        cur, brk = ("numpy_current", "numpy_broken") if kind else ("current", "broken")
        with cls.lock:
            if getattr(cls, brk):
                cls.say(getattr(cls, brk))
                return None
            why = None
            for _ in range(2):  # a zygote that died since the last runner is started again, once
                z = getattr(cls, cur)
                if z is None or z.owner != os.getpid() or z.sandboxed != sandboxed or z.proc.poll() is not None:
                    if z is not None and z.owner == os.getpid():
                        if z.proc.poll() is None:  # another sandbox setting: its runners live on
                            cls.retired.append(z)
                        else:
                            z.close()
                    z = _Zygote(sandboxed, kind)
                    setattr(cls, cur, z)
                fresh = z.ready is None
                try:
                    ready = z.wait_ready()
                    if sandboxed and not ready.get("sandbox", [False])[0]:
                        setattr(cls, brk, f"the zygote cannot enter the sandbox: {ready.get('sandbox')}")
                        cls.say(getattr(cls, brk))
                        return None
                    return z.spawn(fds, home, hide, limits or {})
                except Exception as e:  # noqa: BLE001  (whatever it was: the slow path still works)
                    why = str(e) or type(e).__name__
                    z.close()
                    setattr(cls, cur, None)
                    if fresh:  # it never worked here: do not pay its start again for every runner
                        setattr(cls, brk, why)
                        break
            cls.say(why)
            return None


_LEAKED: list = []  # pools of runners whose exit was never seen (kept, never freed or reused)


class _Lending:
    """Why this judge could not lend GPU buffers by CUDA IPC (autograder.boundary.gpushare) to some runner, said once:
    that runner's session sends files from then on."""
    broken: str | None = None

    @classmethod
    def say(cls, why: str) -> None:
        if cls.broken is None:
            cls.broken = why
            print(f"flashcourse: GPU buffers go to runners through host memory and files (slower): CUDA IPC "
                  f"failed here: {why}", file=sys.stderr, flush=True)


class _Process:
    def __init__(self, numpy_only: bool = False):
        self.numpy_only = numpy_only
        self.dir = _scratch()
        self.home_size = _cap_home(self.dir)  # bytes of its tmpfs, or 0 where HOME is a plain directory
        self.cgroup = _runner_cgroup()  # its memory cgroup, or None (then RLIMIT_DATA)
        self.log_r, log_w = os.pipe()  # what its processes print: read here, capped (see OUTPUT_CAP)
        os.set_blocking(self.log_r, False)
        self.out, self.printed_bytes = bytearray(), 0
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        hide = sandbox.hidden_paths(ROOT, os.getcwd())
        packages = NUMPY_PACKAGES if numpy_only else ()
        memory = 0 if self.cgroup else RUNNER_MEMORY
        limits = {"packages": list(packages), "memory": memory, "cgroup": self.cgroup}
        try:
            # the zygote imported the exercise declarations before forking: their files can be hidden too
            self.proc = _Zygote.runner((req_r, rep_w, log_w), self.dir,
                                       hide + [os.path.join(ROOT, "autograder", "declare", "exercises")],
                                       numpy_only, limits)
            if self.proc is None:
                argv = sandbox.wrap([sys.executable, "-m", WORKER, str(req_r), str(rep_w)],
                                    home=self.dir, hide=hide, packages=packages, memory=memory)
                cgroup = self.cgroup
                env = _env(numpy_only)
                if not sandbox.status()[0] and memory:  # no sandbox to set it: the worker's own RLIMIT_DATA
                    env["FLASHCOURSE_RUNNER_MEMORY_LIMIT"] = str(memory)
                self.proc = subprocess.Popen(argv, pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL,
                                             stdout=log_w, stderr=subprocess.STDOUT, env=env, cwd=self.dir,
                                             start_new_session=True,
                                             preexec_fn=(lambda: sandbox.join_cgroup(cgroup)) if cgroup else None)
        except BaseException:
            os.close(self.log_r)
            self._release()
            raise
        finally:
            os.close(req_r)
            os.close(rep_w)
            os.close(log_w)
        self.req, self.rep = req_w, rep_r
        self.pool = None  # GPU buffers lent to this runner (gpushare.Pool), freed once it is gone
        self.arena = None  # (uint8 tensor, size) of the output arena lent with the last run/bench_prepare
        self.confined = False  # its processes cannot leave its process group (it said so before any student code)
        self.frozen = False
        self.escaped: dict[int, int | None] = {}  # pid -> pidfd of a process of it found outside its group
        self.channel: frozenset | None = None  # (pid, fd) of its descriptors on the reply pipe before student code

    # -- a runner runs only while its judge waits for its answer (see FREEZE) --
    def freeze(self) -> None:
        """Stop every process of this runner (SIGSTOP): its process group with one signal and, where it could leave
        that group (not confined), every descendant found outside it through /proc."""
        if not FREEZE or self._gone():
            return
        self.frozen = True
        self._signal(signal.SIGSTOP)
        if not self.confined:
            self._stop_escaped()

    def thaw(self) -> None:
        if self.frozen:
            self.frozen = False
            self._signal(signal.SIGCONT)

    # -- the reply channel is the worker's: code of the submission (the same process) must not take it --
    # A reviewer's attack (submissions/ch01_softmax/attack_forged_reply.py) kept a copy of the worker's
    # reply descriptor, put /dev/null in its place and answered every request itself, audit clean, while the worker's
    # own answers (with the audit's finding: torch.softmax in a Triton wrapper) went nowhere: full marks. The judge
    # verifies every output itself, so a forged answer cannot make a wrong output pass; but the audit is a fact the
    # runner reports. After each answer, the runner stopped, the judge reads its processes' descriptor tables
    # (/proc/PID/fd) and wants the reply pipe still held by the descriptors it had before any student code ran
    # (the worker's), and under their numbers only (a child forked by the submission inherits one under the same
    # number: allowed; a dup() is another number); and bytes left in the reply pipe before a request mean a message
    # nobody asked for; every answer names the request it answers (one written before the worker's own answer,
    # which then follows it, is caught at the next request: its number is the earlier request's).
    # This is a bar, not a proof: code in the worker's process that intercepts the worker's answer and edits it
    # before it is sent, leaving the descriptors as they were, is not seen (the audit runs in the runner's process:
    # what that process reports about itself can be forged; outputs, in the judge's buffers, and the judge's
    # clock cannot).
    def channel_holders(self) -> set | None:
        """(pid, fd) of every descriptor on the reply pipe held by a process of this runner (its group, and those
        found outside it), or None where this judge may not read their descriptor tables (ptrace access)."""
        link = f"pipe:[{os.fstat(self.rep).st_ino}]"
        pids = [pid for pid, (_, pgid, _, _) in _processes().items() if pgid == self.proc.pid] + list(self.escaped)
        held = set()
        for pid in pids:
            try:
                names = os.listdir(f"/proc/{pid}/fd")
            except FileNotFoundError:
                continue
            except PermissionError:
                return None
            for name in names:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{name}") == link:
                        held.add((pid, int(name)))
                except (OSError, ValueError):
                    continue
        return held

    def check_channel(self) -> None:
        """Raise RunnerGone if the reply channel is no longer the worker's alone (see above)."""
        if self.channel is None:
            return
        held = self.channel_holders()
        if held is not None and not (self.channel <= held
                                     and {fd for _, fd in held} <= {fd for _, fd in self.channel}):
            raise RunnerGone("your code took the grader's reply channel (a copy of its descriptor, or another "
                             "file in its place): a submission may not answer the judge for the grader; this check "
                             "fails")

    def unasked(self) -> int:
        """Bytes waiting in the reply pipe (none between requests: one answer per request)."""
        import array
        import fcntl
        import termios
        buf = array.array("i", [0])
        try:
            fcntl.ioctl(self.rep, termios.FIONREAD, buf)
        except OSError:
            return 0
        return buf[0]

    def _gone(self) -> bool:
        return self.proc.gone if isinstance(self.proc, _Forked) else self.proc.poll() is not None

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)  # a zygote's runner leads its own session and group (zygote.py: setsid)
        except (ProcessLookupError, PermissionError):
            pass
        for pid, fd in list(self.escaped.items()):
            try:
                signal.pidfd_send_signal(fd, sig) if fd is not None else os.kill(pid, sig)
            except (ProcessLookupError, PermissionError, OSError):
                self._forget(pid)

    def _forget(self, pid: int) -> None:
        fd = self.escaped.pop(pid, None)
        if fd is not None:
            os.close(fd)

    def _stop_escaped(self) -> None:
        """Stop the runner's descendants outside its process group (a setsid()), and the processes of the groups
        and sessions they lead, until a pass finds none new (a process stopped cannot fork any more). An orphan
        is found only while it is a descendant: in the sandbox's PID namespace orphans go to the runner's init
        (found); without the sandbox, one whose parent exited before this pass is reparented out of reach."""
        root, group = self.proc.pid, self.proc.pid
        for _ in range(20):
            procs = _processes()
            ours, lead = {root}, {group} | set(self.escaped)
            grew = True
            while grew:
                grew = False
                for pid, (ppid, pgid, sid, _) in procs.items():
                    if pid not in ours and (ppid in ours or pgid in lead or sid in lead):
                        ours.add(pid)
                        grew = True
            new = [pid for pid in ours if pid not in self.escaped and procs.get(pid, (0, group))[1] != group]
            for pid in new:
                fd = None
                try:
                    fd = os.pidfd_open(pid)
                    if _processes([pid]).get(pid, (None,) * 4)[3] != procs[pid][3]:  # not the one seen: reused
                        os.close(fd)
                        continue
                    signal.pidfd_send_signal(fd, signal.SIGSTOP)
                except (AttributeError, OSError):  # no pidfds here (Linux < 5.3): the pid itself
                    if fd is not None:
                        os.close(fd)
                        continue
                    try:
                        os.kill(pid, signal.SIGSTOP)
                    except OSError:
                        continue
                self.escaped[pid] = fd
            if not new:
                return

    def send(self, msg: dict) -> None:
        try:
            wire.send(self.req, msg)
        except (BrokenPipeError, OSError):
            raise RunnerGone(self.death()) from None

    def drain(self) -> None:
        """Read what the runner printed (kept: its last OUTPUT_KEPT bytes); RunnerGone past OUTPUT_CAP in all."""
        while self.log_r is not None:
            try:
                data = os.read(self.log_r, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:  # every process of the runner has closed it: gone
                os.close(self.log_r)
                self.log_r = None
                return
            self.printed_bytes += len(data)
            self.out += data
            if len(self.out) > 2 * OUTPUT_KEPT:
                del self.out[:-OUTPUT_KEPT]
            if self.printed_bytes > OUTPUT_CAP:
                raise RunnerGone(FLOODED.format(cap=_gib(OUTPUT_CAP)))

    def home_full(self) -> bool:
        """Whether the runner's HOME tmpfs is (nearly) full: the next request's answer might not fit."""
        if not self.home_size:
            return False
        try:
            st = os.statvfs(self.dir)
        except OSError:
            return False
        return st.f_bavail * st.f_frsize < min(self.home_size // 4, REPLY_SLACK)

    def make_room(self, nbytes: int) -> None:
        """Grow the runner's HOME tmpfs (where one is mounted) so that a request's inputs of nbytes, sent as files,
        and its answer fit beside HOME_BYTES of the runner's own."""
        extra = (1 + REPLY_FACTOR) * nbytes  # the inputs, and at most this many bytes of outputs (see REPLY_FACTOR)
        want = HOME_BYTES + extra
        if self.home_size and extra > HOME_BYTES // 4 and want > self.home_size:
            sandbox.resize_tmpfs(self.dir, want)
            self.home_size = want

    def receive(self, timeout: float) -> dict:
        until = time.monotonic() + max(0.0, timeout)
        while True:
            self.drain()
            waits = [self.rep] + ([self.log_r] if self.log_r is not None else [])
            ready, _, _ = select.select(waits, [], [], max(0.0, until - time.monotonic()))
            if self.rep in ready:
                break
            if not ready:
                raise TimeoutError
        timeout = until - time.monotonic()
        try:
            return wire.receive(self.rep, time.monotonic() + max(0.0, timeout))
        except EOFError:
            raise RunnerGone(self.death()) from None
        except (wire.WireError, ValueError) as e:
            raise RunnerGone(f"the grader's process sent a malformed message ({str(e)[:200]})") from None

    def tail(self, n: int = 8) -> str:
        try:
            self.drain()
        except RunnerGone:
            pass
        text = bytes(self.out[-20000:]).decode(errors="replace")
        return "\n".join(text.strip().splitlines()[-n:])

    def death(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        if self.cgroup and sandbox.cgroup_oom_kills(self.cgroup):
            return MEMORY_KILLED.format(cap=_gib(RUNNER_MEMORY))
        how = "no exit code" if code is None else f"signal {-code}" if code < 0 else f"exit code {code}"
        tail = self.tail()
        hint = " An illegal memory access: some thread read or wrote outside its tensor." \
            if "illegal memory access" in tail or "illegal address" in tail else ""
        return f"the grader's process died ({how}) while running your code.{hint}\n{tail}".strip()

    def kill(self) -> None:
        # a stopped process dies of SIGKILL too; its processes that left its group are killed here (in the sandbox
        # they die with its PID namespace anyway)
        for pid, fd in list(self.escaped.items()):
            try:
                signal.pidfd_send_signal(fd, signal.SIGKILL) if fd is not None else os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            self._forget(pid)
        if isinstance(self.proc, _Forked):
            self.proc.kill()
        else:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the whole group: children it started too
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        for fd in (self.req, self.rep) + ((self.log_r,) if self.log_r is not None else ()):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log_r = None
        self._release()
        if self.pool is not None:
            gone = self.proc.gone if isinstance(self.proc, _Forked) else self.proc.poll() is not None
            if gone:  # nothing maps these buffers any more
                self.pool.free()
            else:  # a runner we could not see exit may still map them: never reuse that memory (leak it)
                _LEAKED.append(self.pool)
            self.pool, self.arena = None, None

    def _release(self) -> None:
        """Its HOME (unmounted first, if it is a tmpfs of its own) and its cgroup go."""
        if getattr(self, "home_size", 0):
            sandbox.unmount(self.dir)
            self.home_size = 0
        shutil.rmtree(self.dir, ignore_errors=True)
        if getattr(self, "cgroup", None):
            sandbox.remove_cgroup(self.cgroup)
            self.cgroup = None

    def clear(self) -> None:
        for name in os.listdir(self.dir):
            if name.endswith(".bin"):
                os.unlink(os.path.join(self.dir, name))


def _processes(pids=None) -> dict[int, tuple[int, int, int, int]]:
    """pid -> (parent, process group, session, start time) of every process in /proc (or of `pids`)."""
    out = {}
    for name in pids if pids is not None else os.listdir("/proc"):
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            try:
                data = os.read(fd, 1024)
            finally:
                os.close(fd)
            f = data[data.rindex(b")") + 2:].split()
            out[int(name)] = (int(f[1]), int(f[2]), int(f[3]), int(f[19]))
        except (OSError, ValueError, IndexError):
            continue  # not a process, or gone
    return out


# A runner runs only while its judge has a request outstanding to it: it is stopped (SIGSTOP, all its processes)
# right after each answer or timeout and after it loaded the cells, and continued (SIGCONT) right before the next
# request. In a class (autograder.instructor.classgrade) a judge holds its GPU's lock (shared for a quiet check,
# exclusive for a timed one) around every request and runner start, so no runner's thread or child launches GPU work
# or burns CPU while another submission's timed check has the GPU alone. Two signals a request where the runner is
# confined to its process group (sandbox.confine_to_group); a /proc scan (a few ms) where it is not. Tests switch it
# off only to show what it prevents.
FREEZE = True


UNASKED = ("the grader's process sent an answer nobody asked for (your code wrote to the grader's reply channel?): "
           "a submission may not answer the judge for the grader; this check fails")


# A byte the judge writes over the output arena once the runner has answered a timed batch: an honest runner
# waited for its GPU before it answered, so nothing of it writes there afterwards (autograder.judge.grading).
SEAL = 0xA5


def seal(block):
    """Keep a copy of a lent output arena (a uint8 tensor), then fill it with SEAL and wait for that. The copy is made
    on the GPU (well under a millisecond for the arenas of the course's timed checks: the seal must land soon after
    the answer, since a runner's writes before it are not seen), in host memory where the GPU has no room for it
    (the runner shares the GPU and could fill it: then the seal lands tens of milliseconds later, but still lands)."""
    try:
        saved = block.clone()
    except RuntimeError as e:  # torch.cuda.OutOfMemoryError is one
        if "out of memory" not in str(e).lower():
            raise
        saved = block.to("cpu", copy=True)
    block.fill_(SEAL)
    _wait(block)
    return saved


def unseal(block, saved) -> bool:
    """Whether anything wrote into the arena since seal() (compared in place: nothing to allocate); its contents
    (the outputs) are put back."""
    _wait(block)
    late = bool(block.sub_(SEAL).any())
    block.copy_(saved)
    _wait(block)
    return late


def _wait(t) -> None:
    if t.is_cuda:
        import torch
        torch.cuda.synchronize(t.device)


def _input_bytes(tree) -> int:
    """Bytes of the tensors and arrays in a request's inputs (what goes to the runner's HOME as files)."""
    if isinstance(tree, dict):
        return sum(_input_bytes(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return sum(_input_bytes(v) for v in tree)
    if hasattr(tree, "nbytes") and isinstance(getattr(tree, "nbytes"), int):
        return int(tree.nbytes)
    if hasattr(tree, "element_size") and hasattr(tree, "numel"):
        return int(tree.numel() * tree.element_size())
    return 0


class _Budget:
    """A notebook's time (NOTEBOOK_BUDGET), shared by its Session and that Session's NumPy runner."""

    def __init__(self, seconds: float):
        self.seconds, self.spent = float(seconds), 0.0
        self.hung = 0.0  # seconds spent waiting on cells that hung (against LOAD_BUDGET)

    def left(self) -> float:
        return self.seconds - self.spent

    def why(self) -> str:
        return (f"not run: this notebook's checks used up its time budget ({self.seconds:.0f} s for every check, "
                "start and cell load of the notebook together)")


class Session:
    """One submission, one warm runner, any number of checks (each decided by the judge here); NumPy/Python
    exercises in a second runner of their own, without torch (NUMPY_RUNNERS)."""

    def __init__(self, cells: list[Cell], *, numpy_only: bool = False, budget: _Budget | None = None):
        self.numpy_only = numpy_only
        self.budget = budget or _Budget(NOTEBOOK_BUDGET[mode.MODE])
        self.numpy: Session | None = None  # the Session of this notebook's NumPy-only runner, once needed
        self.cells = list(cells)
        # (shared with the NumPy-only runner's Session: a cell that hung or killed one runner is left out of both)
        self.skipped: dict[int, str] = {}  # cells left out after they hung or killed the runner
        self.source_problems: dict[str, list[str]] = {}  # exercise -> what its source checks found
        self.skip_kind: dict[int, Kind] = {}  # why each was left out: TIMED_OUT, DIED, or FAILED (no budget left)
        self._proc: _Process | None = None
        self._last_numpy = False  # whether the last check was served by the NumPy-only runner (see proc)
        self.errors: list[dict] = []
        self.tampered: list[dict] = []
        self.printed: dict[int, str] = {}  # what each cell printed while it loaded (feedback only)
        self.timed_out: dict[str, str] = {}  # exercise -> the check that ran out of time
        self.n = 0
        self.sent = 0  # bytes of the largest inputs sent (an answer's buffers are capped from it)
        self.no_lending = numpy_only  # True once lending GPU buffers to this session's runner failed: files
        self.sealed = None  # (arena, its saved contents) while a timed batch's outputs are sealed

    @property
    def proc(self) -> _Process | None:
        """The runner that served the last check (this Session's own, or its NumPy-only runner's)."""
        if self._last_numpy and self.numpy is not None:
            return self.numpy.proc
        return self._proc

    @proc.setter
    def proc(self, p: _Process | None) -> None:
        self._proc, self._last_numpy = p, False

    # -- the runner's life --
    def _start(self, until: float | None = None) -> None:
        """Start the runner and load the cells, if it is not running; `until`: where the notebook's time budget
        ends (RunnerGone then, and no cell is blamed)."""
        while self._proc is None:
            p = _Process(self.numpy_only)
            p.send({"cells": [c.to_json() for c in self.cells], "dir": p.dir, "skip": sorted(self.skipped)})
            current = None
            limit = START_TIMEOUT
            per_cell = min(CELL_TIMEOUT[mode.MODE], max(1.0, LOAD_BUDGET[mode.MODE] - self.budget.hung))
            overall = time.monotonic() + START_TIMEOUT + per_cell * (len(self.cells) + 1)
            if until is not None:
                overall = min(overall, until)
            try:
                while True:
                    msg = p.receive(min(limit, overall - time.monotonic()))
                    if "confined" in msg and "loaded" not in msg:  # said before any cell ran (later: ignored)
                        p.confined = current is None and msg.get("confined") is True
                        if current is None:  # no student code has run yet: the worker's descriptor alone
                            held = p.channel_holders()
                            p.channel = frozenset(held) if held else None
                        continue
                    if "cell" in msg and "loaded" not in msg:
                        cell = msg["cell"]
                        if not isinstance(cell, int) or cell <= (-1 if current is None else current) \
                                or cell >= len(self.cells):
                            raise RunnerGone("the grader's process sent a malformed progress message")
                        current, limit = cell, per_cell
                        continue
                    self.errors = [e for e in msg.get("errors", []) if isinstance(e, dict)]
                    self.tampered = [t for t in msg.get("tampered", []) if isinstance(t, dict)]
                    printed = msg.get("printed", {})
                    self.printed = {int(k): str(v)[:4000] for k, v in printed.items()
                                    if str(k).isdigit()} if isinstance(printed, dict) else {}
                    if msg.get("uid") == 0 and msg.get("uid_why") and sandbox.status()[0]:
                        _Zygote.say_once(f"runners keep uid 0 without capabilities: {str(msg['uid_why'])[:300]} "
                                         "(make the course and Python readable to others for user nobody)")
                    p.freeze()  # loaded: it runs again with the judge's next request
                    self._proc = p
                    break
            except (TimeoutError, RunnerGone) as e:
                why = (f"it did not finish in {limit:.0f} s: {HANG_HINT}" if isinstance(e, TimeoutError)
                       else str(e))
                p.kill()
                if isinstance(e, TimeoutError) and until is not None and time.monotonic() >= until - 0.05:
                    raise RunnerGone(self.budget.why()) from None  # the notebook's time, not this cell's fault
                if current is None or current in self.skipped or not 0 <= current < len(self.cells):
                    raise RunnerGone(f"the grader could not start your code: {why}") from None
                self.skipped[current] = f"cell {self.cells[current].origin or current} stopped the grader: {why}"
                self.skip_kind[current] = Kind.TIMED_OUT if isinstance(e, TimeoutError) else Kind.DIED
                if isinstance(e, TimeoutError):
                    self.budget.hung += limit
                if self.budget.hung >= LOAD_BUDGET[mode.MODE]:  # the notebook's budget is spent: no more waiting
                    for later in range(current + 1, len(self.cells)):
                        self.skipped.setdefault(later, (
                            f"cell {self.cells[later].origin or later} not run: the notebook's cells that hung "
                            f"used up its loading budget ({LOAD_BUDGET[mode.MODE]:.0f} s)"))

    def _retire(self) -> None:
        """Kill the runner after its answer: the next check starts a fresh one (its cells loaded again)."""
        if self._proc is not None:
            self._proc.kill()
            self._proc = None

    def close(self) -> None:
        if self.numpy is not None:
            self.numpy.close()
            self.numpy = None
        if self._proc is not None:
            try:
                self._proc.send({"op": "quit"})
            except RunnerGone:
                pass
            self._proc.kill()
            self._proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- what the judge asks --
    def _lender(self, p: _Process, op: str):
        """Lend GPU buffers for this request's inputs (and, for run and bench_prepare, an output arena), or
        None where this judge sends them as files."""
        if not (mode.GPU and op in ("run", "bench_prepare", "memory")) or self.no_lending:
            return None
        from autograder.boundary import gpushare
        if p.pool is None:
            import torch
            total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
            p.pool = gpushare.Pool(cap=max(4 << 30, total // 8))
        p.pool.done()  # the runner has answered every earlier request: their buffers may serve this one
        p.arena = None
        sizes = []
        import torch

        def lend(t):
            handle, block = p.pool.lend(t.numel() * t.element_size())
            raw = t.detach().contiguous().view(-1).view(torch.uint8)
            block[:raw.numel()].copy_(raw)
            sizes.append(raw.numel())
            return {"lent": handle, "size": int(block.numel())}
        return lend, sizes

    def request(self, op: str, ex, inputs, deadline: float, **extra) -> dict:
        p = self._proc
        self.n += 1
        if op not in ("bench_go", "ping"):
            p.clear()
        msg = {"op": op, "exercise": ex.id if ex is not None else "", "n": self.n, **extra}
        lending = None
        if inputs is not None:
            try:
                lending = self._lender(p, op)
                if lending is not None:
                    msg["inputs"] = wire.encode(inputs, p.dir, f"i{self.n}_", lend=lending[0])
                    if op != "memory":  # outputs of a memory check stay the runner's own: their bytes are counted
                        handle, block = p.pool.lend(max(32 << 20, 2 * sum(lending[1]) + (16 << 20)))
                        msg["arena"] = {"lent": handle, "size": int(block.numel())}
                        p.arena = (block, [])
                    import torch
                    torch.cuda.synchronize()  # the runner's process reads them: the copies must be done
            except wire.WireError:
                raise
            except Exception as e:  # noqa: BLE001  (no CuPy, no IPC here: files, as on CPU)
                _Lending.say(f"{type(e).__name__}: {e}")
                self.no_lending = True
                lending, p.arena = None, None
            if lending is None:
                p.make_room(_input_bytes(inputs))
                # a NumPy-only runner has no torch: the judge's CPU tensors go to it as arrays (wire: host)
                msg["inputs"] = wire.encode(inputs, p.dir, f"i{self.n}_", host=self.numpy_only)
            self.sent = max(self.sent, wire.nbytes(msg["inputs"]))
        if p.arena is not None:  # buffers in the arena are claimed afresh by each answer
            p.arena = (p.arena[0], [])
        if p.unasked():  # an answer more than the requests asked for: written by something else than the worker
            raise RunnerGone(UNASKED)
        p.thaw()
        returned = None
        try:
            p.send(msg)
            reply = p.receive(deadline - time.monotonic())
            while len(reply) == 1 and (reply.get("returned") is True or reply.get("synced") is True):
                if reply.get("returned") is True:  # a repeat never moves the drain deadline
                    returned = returned or time.monotonic()
                else:  # the GPU is done: what is left (the audit, the answer) has the check's own deadline
                    returned = None
                until = deadline if returned is None else min(deadline, returned + GPU_DRAIN_S)
                reply = p.receive(until - time.monotonic())
        except TimeoutError:
            if returned is not None and returned + GPU_DRAIN_S < deadline:
                raise DrainTimeout(f"your function returned, but the GPU was still running what it launched "
                                   f"{GPU_DRAIN_S:.0f} s later, on a small case: the kernel was stopped") from None
            raise TimeoutError from None
        finally:
            p.freeze()  # answered (or out of time): it does nothing more until the next request
        if reply.get("n") != self.n:  # an answer to an earlier request: one more was written than the worker's
            raise RunnerGone(UNASKED)
        # A worker whose CUDA context was lost answers, then exits (worker.serve: "fatal"), so its descriptors may be
        # gone by now: on an H100 (2026-11-26) checking after that answer called an illegal address a stolen
        # channel. A fatal answer that is not ok fails its check and retires the runner (killed) whoever wrote it, so
        # it needs no check; every other answer is checked: one not ok (a thief whose answer failed is still caught
        # and killed), and one ok whatever else it says (an ok answer marked "fatal" by a forger, to skip this
        # check, got full marks before: tests/test_attacks.py, attack_forged_fatal_reply).
        fatal_failure = not reply.get("ok") and reply.get("fatal")
        if op not in ("bench_go", "ping") and not fatal_failure:  # (not inside a timed batch's clock)
            p.check_channel()
        if not reply.get("ok") and reply.get("kind") == "transport" and lending is not None:
            # the runner could not map what was lent: say so, and send this and every later request as files
            _Lending.say(str(reply.get("message", ""))[:300])
            self.no_lending, p.arena = True, None
            return self.request(op, ex, inputs, deadline, **extra)
        if not reply.get("ok"):
            message = str(reply.get("message", ""))[:8000]
            raise RunnerFailed(str(reply.get("kind", "raised")), message,
                               fatal=bool(reply.get("fatal")) or any(s in message for s in STICKY))
        # what an answer may carry: outputs and their guard zones are never much larger than the largest inputs
        budget = [REPLY_SLACK + REPLY_FACTOR * self.sent]
        out = {"out": None, "audit": reply.get("audit") if isinstance(reply.get("audit"), str) else None,
               "guards": []}
        guards = reply.get("guards", [])
        if not isinstance(guards, list) or len(guards) > MAX_GUARDS:
            raise RunnerGone("the grader's process sent a malformed guard description")
        for g in guards:
            if not (isinstance(g, dict) and isinstance(g.get("n"), int) and isinstance(g.get("canary"), (int, float))):
                raise RunnerGone("the grader's process sent a malformed guard description")
            out["guards"].append((wire.decode(g.get("buf"), p.dir, mode.DEVICE, budget, arena=p.arena),
                                  g["n"], float(g["canary"])))
        if "out" in reply:  # outputs may be the middles of those guarded buffers, named by index
            from autograder.boundary.guards import GUARD
            out["out"] = wire.decode(reply.get("out"), p.dir, mode.DEVICE, budget,
                                     guarded=[(b, n, GUARD) for b, n, _ in out["guards"]])
        for k in ("measure", "peaks"):
            if isinstance(reply.get(k), dict):
                out[k] = reply[k]
        return out

    def cell_feedback(self) -> dict[int, str]:
        """Per cell: what it printed, or why it failed, when the runner executed it (feedback only)."""
        try:
            self._start()
        except RunnerGone as e:
            return {i: str(e) for i in range(len(self.cells))}
        out = dict(self.printed)
        for e in self.errors:
            i = e.get("cell")
            if isinstance(i, int):
                out[i] = out.get(i, "") + f"this cell raised while grading: {e.get('message', '')}\n"
        for i, why in self.skipped.items():
            out[i] = out.get(i, "") + why + "\n"
        return out

    def _load_problem(self, ex) -> tuple[Kind, str] | None:
        """What stops an exercise before any check: its own cell failed, hung or tampered."""
        for i, why in sorted(self.skipped.items()):
            if defines(self.cells[i], ex.entry):
                return self.skip_kind.get(i, Kind.FAILED), why
        for e in self.errors:
            i = e.get("cell")
            if isinstance(i, int) and 0 <= i < len(self.cells) and defines(self.cells[i], ex.entry):
                return Kind.FAILED, str(e.get("message", ""))
        any_defines = any(defines(c, ex.entry) for c in self.cells)
        for t in self.tampered:
            if set(map(str, t.get("names", []))) & set(ex.entry) or not any_defines:
                changed = ", ".join(sorted(set(map(str, t.get("changed", []))))[:5])
                return Kind.FAILED, (f"your code replaced {changed}: submissions may not monkeypatch torch, numpy "
                                     "or the grader (put back; this check fails)")
        return None

    def check(self, exercise_id: str, check: str, *, seed: int | None = None,
              timeout: float | None = None) -> Verdict:
        ex = registry.get(exercise_id)
        if check not in ex.checks:
            raise KeyError(f"{exercise_id} has no check {check!r}; it has {', '.join(ex.checks)}")
        if ex.kind == "python" and NUMPY_RUNNERS and not self.numpy_only:  # in the notebook's NumPy-only runner
            if self.numpy is None:
                self.numpy = Session(self.cells, numpy_only=True, budget=self.budget)
                self.numpy.skipped, self.numpy.skip_kind = self.skipped, self.skip_kind
            self._last_numpy = True
            return self.numpy.check(exercise_id, check, seed=seed, timeout=timeout)
        self._last_numpy = False
        t0 = time.monotonic()
        try:
            return self._check(ex, check, seed, timeout)
        finally:
            self.budget.spent += time.monotonic() - t0

    def _check(self, ex, check: str, seed: int | None, timeout: float | None) -> Verdict:
        from autograder.judge.grading import run_check
        exercise_id = ex.id
        seed = secrets.randbelow(2**31) if seed is None else seed  # the judge's secret: never sent
        from autograder.declare.exercise import TIMED_CHECKS
        limit = ex.timeout_s[mode.MODE]
        timeout = timeout or (min(limit, QUIET_GPU_TIMEOUT) if mode.GPU and check not in TIMED_CHECKS else limit)
        t0 = time.monotonic()

        def result(kind: Kind, detail: str) -> Verdict:
            return Verdict(exercise_id, check, kind, detail, seconds=time.monotonic() - t0)

        if exercise_id in self.timed_out:  # a hang there would cost another full timeout for nothing
            return result(Kind.TIMED_OUT, f"not run: the {self.timed_out[exercise_id]} check of this exercise timed "
                                          f"out ({HANG_HINT})")
        if self.budget.left() <= 0:
            return result(Kind.TIMED_OUT, self.budget.why())
        if ex.source_checks:  # on the submission's text, in the judge (autograder.judge.source_checks)
            from autograder.judge import source_checks
            if exercise_id not in self.source_problems:
                self.source_problems[exercise_id] = source_checks.problems(ex, self.cells)
            if self.source_problems[exercise_id]:
                return result(Kind.FAILED, "; ".join(self.source_problems[exercise_id]))
        try:
            self._start(until=t0 + self.budget.left())
        except RunnerGone as e:
            return result(Kind.TIMED_OUT if str(e) == self.budget.why() else Kind.DIED, str(e))
        problem = self._load_problem(ex)
        if problem:
            return result(*problem)
        by_budget = self.budget.left() < timeout  # (time spent loading counts against both)
        timeout = min(timeout, self.budget.left())
        deadline = t0 + timeout
        try:
            verdict = run_check(ex, check, _Remote(self, deadline), seed)
        except RunnerFailed as e:
            message = str(e)
            if e.fatal:  # its CUDA context is lost: the next check gets a fresh runner
                self._proc.kill()
                self._proc = None
                message += "\n(the CUDA context of your code's process was lost; later checks run in a fresh one)"
            elif message.startswith(("your code ran out of memory", "your code filled the disk space")):
                self._retire()  # what it holds (a global list, files in HOME) must not cost the next check
            elif self._proc is not None and self._proc.home_full():
                self._retire()
            if e.kind == "missing":
                message += "".join(f"; cell {self.cells[x['cell']].origin} failed: {x.get('message', '')[:300]}"
                                   for x in self.errors if isinstance(x.get("cell"), int)
                                   and 0 <= x["cell"] < len(self.cells))
            return result(Kind.NOT_IMPLEMENTED if e.kind == "not_implemented" else Kind.FAILED, message)
        except TimeoutError as e:
            self._proc.kill()
            self._proc = None
            self.timed_out[exercise_id] = check
            if by_budget and not isinstance(e, DrainTimeout):
                return result(Kind.TIMED_OUT, f"stopped after {timeout:.0f} s: this notebook's time budget "
                                              f"({self.budget.seconds:.0f} s for all its checks) ran out")
            what = str(e) if isinstance(e, DrainTimeout) else f"timed out after {timeout:.0f} s and was stopped"
            return result(Kind.TIMED_OUT, f"{what}: {HANG_HINT}")
        except RunnerGone as e:
            if self._proc is not None:
                self._proc.kill()
                self._proc = None
            return result(Kind.DIED, str(e))
        except Exception as e:  # anything else the runner's answer broke: this check fails, nothing more
            if self._proc is not None:
                self._proc.kill()
                self._proc = None
            return result(Kind.FAILED, f"the grader could not use what your code returned: {type(e).__name__}: "
                                       f"{str(e)[:500]}")
        if self._proc is not None and self._proc.home_full():  # its files would cost the next check: a fresh runner
            self._retire()
        # a failure the judge found names the seed of its inputs (a finding on drawn inputs can be drawn again)
        return replace(verdict, seconds=time.monotonic() - t0, seed=None if verdict.passed else seed)


class _Remote:
    """The runner operations of autograder.judge.grading, carried out by a Session's process."""

    def __init__(self, session: Session, deadline: float):
        self.s, self.deadline = session, deadline

    def run(self, ex, inputs, do_audit):
        return self.s.request("run", ex, inputs, self.deadline, audit=bool(do_audit))

    def bench_prepare(self, ex, sets, audited=True):
        return self.s.request("bench_prepare", ex, list(sets), self.deadline, audit=bool(audited))

    def ping(self) -> float:
        """The judge's cost of one message round trip (the median of five), in seconds."""
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            self.s.request("ping", None, None, self.deadline)
            times.append(time.perf_counter() - t0)
        return sorted(times)[2]

    def bench_go(self, ex, rounds):
        self.s.request("bench_go", ex, None, self.deadline, rounds=int(rounds))

    def bench_collect(self, ex):
        """The timed batch's outputs; "placed": whether every one of them was in the output arena lent with
        bench_prepare (None where none was lent), which is where the seal could see late writes."""
        out = self.s.request("bench_collect", ex, {}, self.deadline)
        p = self.s.proc
        out["placed"] = None if p is None or p.arena is None else len(p.arena[1]) == len(out["guards"])
        return out

    def seal(self) -> bool:
        """Seal the output arena lent with bench_prepare (see runner.seal), if there is one (none where this
        judge sends buffers as files: then nothing is sealed, and unseal says None)."""
        p = self.s.proc
        self.s.sealed = None
        if p is None or p.arena is None:
            return False
        self.s.sealed = (p.arena[0], seal(p.arena[0]))
        return True

    def unseal(self) -> bool | None:
        """Whether the runner's GPU wrote into the sealed arena (see runner.unseal); None if nothing was sealed."""
        sealed, self.s.sealed = self.s.sealed, None
        return None if sealed is None else unseal(*sealed)

    def memory(self, ex, inputs):
        return self.s.request("memory", ex, inputs, self.deadline)


def run_check(exercise_id: str, check: str, cells: list[Cell], *, seed: int | None = None,
              timeout: float | None = None) -> Verdict:
    """One check in a runner of its own (a live check() in a notebook; tests)."""
    with Session(cells) as s:
        return s.check(exercise_id, check, seed=seed, timeout=timeout)
