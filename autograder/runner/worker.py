"""The runner: `python -m autograder.runner.worker REQUEST_FD REPLY_FD` (untrusted: it runs student code).

It executes a submission's cells once, in order, then serves the judge's requests on a private
pair of pipes until told to quit: run the exercise on inputs the judge sent (raw buffers in a
shared directory), time it, or watch its allocations. It answers with output buffers and
measurements; it never sees a seed, a reference or a threshold, and decides nothing. Whatever
the submission prints stays in this process's log, which the judge shows only as feedback.

Messages (autograder.boundary.wire): first, unasked, {"confined": bool, "why"} (whether the seccomp filter that keeps
every process of the runner in its process group is on: sandbox.confine_to_group); then {"cells": [...],
"dir": D} -> progress {"cell": i} before each cell, then {"loaded": true, "errors": [...], "tampered": [...]};
then any number of {"op": "run"|"bench"|"memory", "exercise", "inputs", ...} -> {"ok": true, "out", "guards", ...}
or {"ok": false, "kind", "message"}; {"op": "quit"} ends it.
"""
from __future__ import annotations

import dataclasses
import io
import os
import sys
import traceback


def _user_frames(e: BaseException) -> str:
    """The part of a traceback that lies in the submission's cells."""
    lines = [ln for ln in traceback.format_exception(e) if "/cell" in ln or not ln.startswith("  File")]
    return "".join(lines[-6:]).strip()


def describe(e: BaseException) -> tuple[str, str]:
    """(kind, message) of an exception, as feedback to the student."""
    from autograder.boundary.guards import Failure
    from autograder.declare.submission import MissingName
    from autograder.runner.tamper import Tampered
    from course.errors import CudaCompileError, NeedsGPU, NotImplementedYet
    from autograder.runner import numpy_only
    if isinstance(e, Failure):
        return "failure", str(e)
    if isinstance(e, MemoryError):
        return "raised", f"your code ran out of memory (MemoryError){_memory_limit()}"
    if isinstance(e, OSError) and e.errno == 28:  # ENOSPC: its HOME (a tmpfs of its own) or /dev/shm is full
        return "raised", (f"your code filled the disk space it may write ({e}): the grader's process for your code has "
                          f"{_home_size()} in its HOME, its temporary directory included")
    if isinstance(e, ImportError) and numpy_only.wanted() and (e.name or "").split(".")[0] in numpy_only.FOREIGN:
        return "raised", f"your code imports {e.name}: {numpy_only.WHY}"
    if isinstance(e, Tampered):
        return "tampered", str(e)
    if isinstance(e, (NotImplementedYet, NotImplementedError)):
        return "not_implemented", (f"not implemented yet: {e}" if str(e) and "not implemented" not in str(e)
                                   else str(e) or "not implemented yet: replace `raise NotImplementedError()` "
                                   "with your code")
    if isinstance(e, CudaCompileError):
        return "compile", f"CUDA compile error:\n{e}"
    if isinstance(e, (NeedsGPU, MissingName)):
        return "missing", str(e)
    if type(e).__name__ == "CpuCudaError":  # the CPU layer's report (race, deadlock, crash): already precise
        return "raised", f"your CUDA kernel failed on the CPU execution layer: {e}"
    frames = _user_frames(e)  # they end with the exception's own line: say it once
    if f"{type(e).__name__}: " in frames or frames.endswith(type(e).__name__):
        return "raised", f"your code raised {type(e).__name__}:\n{frames}"
    return "raised", f"your code raised {type(e).__name__}: {e}\n{frames}".strip()


class _CellOutput(io.TextIOBase):
    """A cell's stdout while it loads: the start kept (shown under the cell in the graded notebook), everything passed
    on to the runner's log as it comes (the judge reads that with a cap: a cell that prints without bound is
    stopped there, instead of filling this process's memory)."""
    KEEP = 4000

    def __init__(self, real):
        self.real, self.kept = real, ""

    def writable(self) -> bool:
        return True

    def write(self, s) -> int:
        s = str(s)
        if len(self.kept) < self.KEEP:
            self.kept += s[:self.KEEP - len(self.kept)]
        self.real.write(s)
        return len(s)

    def flush(self) -> None:
        self.real.flush()


def _memory_limit() -> str:
    """The memory this runner may use, as a clause of a message ("" where none is known)."""
    import resource
    limit = os.environ.get("FLASHCOURSE_RUNNER_MEMORY_LIMIT", "")
    if not limit.isdigit():
        soft = resource.getrlimit(resource.RLIMIT_DATA)[0]
        limit = "" if soft == resource.RLIM_INFINITY else str(soft)
    return f": the grader's process for your code may use at most {int(limit) / 2**30:.2g} GiB" if limit else ""


def _home_size() -> str:
    try:
        st = os.statvfs(os.path.expanduser("~"))
        return f"{st.f_blocks * st.f_frsize / 2**20:.0f} MiB"
    except OSError:
        return "a fixed size"


def _guarded(run, snap):
    """The exercise's run, followed by a tamper check (the submission's code runs inside it)."""
    def guarded(*args, **kwargs):
        out = run(*args, **kwargs)
        snap.check()
        return out
    guarded.__wrapped_run__ = run  # the bare run, for timed loops: no grader work may be timed
    guarded.tamper_check = snap.check
    return guarded


class _Forbidden:
    """An import hook: the instructor's reference kernels and known-wrong submissions are not for
    submissions (the sandbox also hides their files; this stops the plain `import` without one)."""
    PREFIXES = ("kernels_ref", "submissions", "autograder.instructor.validate", "autograder.instructor.cli")

    def find_spec(self, name, path=None, target=None):
        if any(name == p or name.startswith(p + ".") for p in self.PREFIXES):
            raise ImportError(f"{name} is not available to submissions")
        return None


_T0 = [0.0]


def _mark(what: str) -> None:
    """Phase times of a runner's start, in its log, when FLASHCOURSE_PROFILE=1."""
    if os.environ.get("FLASHCOURSE_PROFILE") == "1":
        import time
        sys.__stderr__.write(f"[runner {time.perf_counter() - _T0[0]:.2f} s] {what}\n")


def _scrub_judge_parts() -> None:
    """Remove from this process what only the judge needs (input makers, float64 references, output
    checks), before any student code runs: a submission cannot call the grader's reference instead of
    computing. Through the zygote with the sandbox, their source files are hidden as well."""
    from autograder.declare import registry
    judge_only: set[int] = set()
    for ex in registry.all_exercises():
        for k in ("reference", "verify", "make_inputs"):
            judge_only.add(id(getattr(ex, k)))
            object.__setattr__(ex, k, None)
        object.__setattr__(ex, "memory", None)
    for name, mod in list(sys.modules.items()):
        if name.startswith("autograder.declare.exercises.") and mod is not None:
            for k, v in list(vars(mod).items()):
                if id(v) in judge_only:
                    delattr(mod, k)


def _load(hello: dict, reply_fd: int):
    _mark("hello received")
    from autograder.declare import registry
    from autograder.boundary import wire
    from autograder.declare.submission import Cell, load
    from autograder.runner.tamper import Snapshot
    from autograder.runner import numpy_only
    if not numpy_only.wanted():
        import torch._dynamo  # noqa: F401  (imported lazily by the audit; it rewraps torch.manual_seed)
        import torch.profiler  # noqa: F401
        import torch.utils._python_dispatch  # noqa: F401
        import triton.language  # noqa: F401
        _mark("torch, triton and the audit's modules imported")
    registry.all_exercises()
    _scrub_judge_parts()
    _mark("exercises declared")
    for name in [m for m in sys.modules if any(m == p or m.startswith(p + ".") for p in _Forbidden.PREFIXES)]:
        del sys.modules[name]
    sys.meta_path.insert(0, _Forbidden())
    from autograder.runner import execute
    if not numpy_only.wanted():
        execute.bind_primitives()  # what the timed batch waits and replays with: bound before the Snapshot
    snap = Snapshot()  # before any of the submission's code runs
    cells = [Cell(**c) for c in hello["cells"]]
    skip = set(hello.get("skip", []))
    tampered: list[dict] = []
    index = {id(c): i for i, c in enumerate(cells)}

    printed: dict[int, str] = {}
    real = sys.stdout

    def before_cell(cell):
        wire.send(reply_fd, {"cell": index[id(cell)]})
        sys.stdout = _CellOutput(real)  # what the cell prints: shown under it in the graded notebook

    def after_cell(cell, names):
        text, sys.stdout = sys.stdout.kept if isinstance(sys.stdout, _CellOutput) else "", real
        if text:
            printed[index[id(cell)]] = text[:4000]
        changed = snap.restore()
        if changed:
            tampered.append({"cell": index[id(cell)], "names": names[:50], "changed": changed[:20]})

    errors: list = []
    # a NumPy-only runner serves Python exercises: a %%cuda cell is not compiled there
    run = [c for i, c in enumerate(cells) if i not in skip and not (numpy_only.wanted() and c.kind == "cuda")]
    ns = load(run, hello["dir"], after_cell=after_cell, errors=errors, before_cell=before_cell)
    sys.stdout = real
    _mark("cells executed")
    errs = [{"cell": index[id(c)], "kind": describe(e)[0], "message": describe(e)[1][:4000]} for c, e in errors]
    return ns, snap, errs, tampered, printed


def _serve(req: dict, ns: dict, snap, directory: str) -> dict:
    from autograder.runner import execute
    from autograder.declare import registry
    from autograder.boundary import wire
    from course import mode
    op = req.get("op")
    if op == "ping":
        return {"ok": True}
    ex = registry.get(str(req["exercise"]))
    if op == "bench_go":  # the judge's clock is running: nothing but the batch
        execute.op_bench_go(ex, int(req["rounds"]))
        return {"ok": True}
    inputs = wire.decode(req.get("inputs"), directory, mode.DEVICE, lent_ok=True)
    arena = None
    lent = req.get("arena")
    if op in ("run", "bench_prepare") and isinstance(lent, dict) and isinstance(lent.get("size"), int):
        from autograder.boundary import gpushare
        arena = gpushare.Arena(gpushare.open_lent(str(lent.get("lent")), lent["size"]), lent["size"])
    execute.ARENA[0] = arena
    execute.precheck(ex, ns)
    missing = [n for n in ex.entry if n not in ns]
    if missing:
        from autograder.declare.submission import MissingName
        raise MissingName(f"the submission does not define {', '.join(missing)}")
    ex = dataclasses.replace(ex, run=_guarded(ex.run, snap))  # a guarded copy: declarations are immutable
    if op == "run":
        r = execute.op_run(ex, ns, inputs, bool(req.get("audit")))
    elif op == "bench_prepare":
        r = execute.op_bench_prepare(ex, ns, list(inputs), bool(req.get("audit", True)))
    elif op == "bench_collect":
        r = execute.op_bench_collect(ex)
    elif op == "memory":
        r = execute.op_memory(ex, ns, inputs)
    else:
        raise ValueError(f"unknown op {op!r}")
    tag = f"r{req.get('n', 0)}_"
    out = {"ok": True, "audit": r.get("audit")}
    if op == "bench_collect":
        arena = _ARENA_OF.pop(ex.id, None)  # the batch's outputs are in the arena lent with bench_prepare
    elif op == "bench_prepare":
        _ARENA_OF[ex.id] = arena
    execute.ARENA[0] = None
    if arena is not None:  # the judge reads the arena when this answer comes: the GPU must be done with it
        import torch
        torch.cuda.synchronize()

    def place(b, i):
        off = arena.offset_of(b) if arena is not None else None
        if off is not None:
            return {"arena": off, "dtype": str(b.dtype).removeprefix("torch."), "shape": [b.numel()]}
        return wire.encode(b, directory, f"{tag}g{i}_")
    if "out" in r:
        out["guards"] = [{"buf": place(b, i), "n": n, "canary": c} for i, (b, n, c) in enumerate(r["guards"])]
        out["out"] = wire.encode(r["out"], directory, tag + "o", known=_middle_of(r["guards"]))
    for k in ("measure", "peaks"):
        if k in r:
            out[k] = r[k]
    return out


_ARENA_OF: dict = {}  # exercise -> the arena its prepared timed batch's outputs are in


def serve(req_fd: int, reply_fd: int) -> int:
    """Load the submission the judge sends on req_fd, then answer its requests until told to quit; the exit
    status. Called by main (a fresh process) and by autograder.runner.zygote (in a forked child, no exec)."""
    _mark("serving")
    from autograder.runner import numpy_only
    if numpy_only.wanted():  # before anything imports course (its __init__ imports torch)
        numpy_only.prepare()
    from autograder.boundary import wire
    for fd in (req_fd, reply_fd):
        os.set_inheritable(fd, False)  # a process the submission starts does not get the channel
    # before any student code: neither this process nor one it starts can leave its process group, so the judge
    # freezes all of them with one signal between its requests (autograder.judge.session._Process.freeze); said first
    from autograder.boundary import sandbox
    confined, why = sandbox.confine_to_group()
    wire.send(reply_fd, {"confined": confined, "why": why})
    hello = wire.receive(req_fd)
    ns, snap, errors, tampered, printed = _load(hello, reply_fd)
    from course import mode
    if mode.GPU:  # launches are asynchronous: the judge learns when the function returned (runner.GPU_DRAIN_S)
        from autograder.runner import execute
        execute.RETURNED[0] = lambda: wire.send(reply_fd, {"returned": True})
        execute.SYNCED[0] = lambda: wire.send(reply_fd, {"synced": True})
    wire.send(reply_fd, {"loaded": True, "errors": errors, "tampered": tampered, "uid": sandbox.START_UID[0],
                         "uid_why": sandbox.UID_WHY[0] if sandbox.UID_WHY else "",
                         "printed": {str(k): v for k, v in printed.items()}})
    while True:
        try:
            req = wire.receive(req_fd)
        except EOFError:
            return 0
        if req.get("op") == "quit":
            return 0
        try:
            reply = _serve(req, ns, snap, hello["dir"])
        except BaseException as e:  # the submission (or its absence) failed: say what, as feedback
            kind, message = describe(e)
            if type(e).__name__ == "TransportError":  # a lent GPU buffer could not be mapped: the judge resends
                kind = "transport"
            reply = {"ok": False, "kind": kind, "message": message[:8000]}
            if _cuda_lost():
                reply["fatal"] = True
        sys.stdout.flush()
        reply["n"] = req.get("n")  # the request it answers: the judge takes no answer to another (runner.request)
        wire.send(reply_fd, reply)
        if reply.get("fatal"):
            return 3  # a lost CUDA context fails every later call: the judge starts a fresh runner


def _middle_of(guards):
    """An output that is exactly the middle of a guarded buffer goes on the wire as a reference to that
    buffer (sent anyway, for its guard zones): its bytes cross once, not twice."""
    from autograder.boundary.guards import GUARD
    used = set()

    def known(v):
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(v, torch.Tensor) or not v.is_contiguous():
            return None
        for j, (buf, n, _) in enumerate(guards):
            if j not in used and n == v.numel() and buf.dtype == v.dtype and buf.device == v.device \
                    and v.data_ptr() == buf.data_ptr() + GUARD * buf.element_size():
                used.add(j)
                return {"guarded": j, "shape": list(v.shape)}
        return None
    return known


def _cuda_lost() -> bool:
    """After a failure: is this process's CUDA context unusable (illegal address, launch failure: sticky)?"""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return False
    try:
        torch.cuda.synchronize()
        return False
    except Exception:  # noqa: BLE001
        return True


def main(argv: list[str] | None = None) -> int:
    import time
    _T0[0] = time.perf_counter()
    _mark("python started")
    argv = sys.argv if argv is None else argv
    return serve(int(argv[1]), int(argv[2]))


if __name__ == "__main__":
    sys.exit(main())
