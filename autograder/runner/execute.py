"""The runner's side of a check: run the submission on inputs the judge made, and report facts.

Nothing here decides a grade. Each operation returns the outputs (and the whole guarded
buffers they live in) for the judge (autograder.judge.grading) to verify, plus measurements
(audit findings, timings, allocation peaks) that the judge compares with its thresholds.

Outputs are allocated inside a larger buffer: the output itself is poisoned with NaN before
every launch (unwritten elements fail) and the guard zones on either side hold a canary
(out-of-bounds writes fail; the judge checks them).
"""
from __future__ import annotations

import contextlib

import numpy as np

from course import mode

from autograder.boundary.graphs import bind_primitives, capture, replay  # noqa: F401  (the runner's timing)
from autograder.boundary.guards import _GRADER, CANARY, GUARD, Failure, _grader_ops, check_guards  # noqa: F401
from autograder.declare.exercise import Exercise

ARENA: list = [None]  # a gpushare.Arena the judge lent for this request's outputs (GPU), or None
# Set by the runner's serve loop (GPU): tell the judge that the submission's function has returned, so that
# what is left of a quiet check is the GPU finishing what was launched (see runner.GPU_DRAIN_S), and that the
# GPU has finished it (what is left then is this process's own work: the audit, the answer).
RETURNED: list = [None]
SYNCED: list = [None]


def _synced() -> None:
    if SYNCED[0] is not None:
        SYNCED[0]()


class Outputs:
    """Factory for poisoned, guarded output tensors (on a GPU carved from the judge's lent arena while it
    has room, so that the judge reads them without a copy through host memory)."""

    def __init__(self, device: str):
        self.device = device
        self.made: list[tuple] = []

    def tensor(self, shape, dtype):
        import torch
        n = int(np.prod(shape))
        with _grader_ops():  # as stored in dtype (1234.5 is 1232 in bf16; fp8 e4m3 tops out at 448: 224)
            canary = torch.tensor(min(CANARY, float(torch.finfo(dtype).max) / 2), dtype=dtype).float().item()
            arena = ARENA[0] if self.device != "cpu" else None
            buf = arena.take((n + 2 * GUARD) * torch.empty((), dtype=dtype).element_size(), dtype) \
                if arena is not None else None
            if buf is None:
                buf = torch.full((n + 2 * GUARD,), canary, dtype=dtype, device=self.device)
            else:
                buf.fill_(canary)
            out = buf[GUARD:GUARD + n].view(shape)
            out.fill_(float("nan"))
        self.made.append((buf, n, canary))
        return out

    def check_guards(self) -> None:
        check_guards(self.made)


# aten ops a wrapper may run besides its own kernels: allocation, views, copies.
_ALLOWED_OPS = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "fill_", "zero_", "copy_", "_to_copy", "clone", "detach", "alias", "view", "_unsafe_view",
    "reshape", "as_strided", "contiguous", "t", "transpose", "permute", "expand", "slice", "select",
    "unsqueeze", "squeeze", "flatten", "lift_fresh", "_local_scalar_dense", "is_same_size", "numel",
    "sym_size", "sym_stride", "sym_numel", "stride", "size", "dim", "resize_", "set_", "unfold",
}


@contextlib.contextmanager
def audit_torch_ops(found: list):
    """Record torch operators that compute (anything beyond allocation and views)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Audit(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.__name__.split(".")[0]
            if name not in _ALLOWED_OPS and not _GRADER["depth"]:
                found.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Audit():
        yield


def gpu_kernels_run(fn) -> list[str]:
    """Names of the GPU kernels that fn() launched, from the profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
        _synced()
    names = []
    for e in prof.events():
        if getattr(e, "device_type", None) is not None and "CUDA" in str(e.device_type):
            names.append(e.name)
    return names


def _own_kernel_names(ex: Exercise, ns: dict) -> set[str]:
    """Kernels the submission defines: Triton functions and CUDA kernels in its namespace."""
    from course.cuda import CudaKernel
    names = set(ex.harness_kernels)
    for k, v in ns.items():
        if isinstance(v, CudaKernel):
            names.add(v.name)
        elif type(v).__name__ in ("JITFunction", "InterpretedFunction"):
            names.add(getattr(getattr(v, "fn", None), "__name__", k))
    return names


_LAUNCHERS = ("JITFunction", "InterpretedFunction", "Autotuner", "Heuristics")


@contextlib.contextmanager
def counting_triton_launches(ns: dict):
    """Count launches of the submission's own @triton.jit kernels (what `kernel[grid](...)` calls: its run
    method, looked up at launch time) while the block runs; yields a one-element list."""
    count, patched = [0], []
    for v in {id(v): v for v in ns.values() if type(v).__name__ in _LAUNCHERS}.values():
        had, bound = v.__dict__.get("run"), v.run

        def run(*args, _bound=bound, **kwargs):
            count[0] += 1
            return _bound(*args, **kwargs)
        try:
            v.run = run
            patched.append((v, had))
        except (AttributeError, TypeError):
            pass
    try:
        yield count
    finally:
        for v, had in patched:
            if had is None:
                v.__dict__.pop("run", None)
            else:
                v.run = had


def audited(ex: Exercise, ns: dict, call):
    """Run the graded call once, watched (the output graded is the one watched: code that behaves well only
    when it is called a second time gains nothing): (its result, what the audit found or None). The call may
    use only the submission's kernels: no PyTorch operator computes, no foreign GPU kernel runs, and a
    Triton exercise's wrapper launches its own @triton.jit kernels."""
    ops: list[str] = []
    box, ran = [], None
    # a NumPy/Python exercise in its own runner (autograder.runner.numpy_only): no torch there to audit, nor to use
    watch = contextlib.nullcontext() if _torchless(ex) else audit_torch_ops(ops)
    with watch, (counting_triton_launches(ns) if ex.kind == "triton"
                                else contextlib.nullcontext([1])) as launches:
        if mode.GPU and ex.kind in ("triton", "cuda"):
            ran = gpu_kernels_run(lambda: box.append(call()))
        else:
            box.append(call())
    try:
        _audit_findings(ex, ns, ops, ran, launches[0])
    except Failure as e:
        return box[0], str(e)
    return box[0], None


def audit(ex: Exercise, ns: dict, call) -> None:
    """Raise Failure if the call used anything but the submission's own kernels (see audited)."""
    _, found = audited(ex, ns, call)
    if found:
        raise Failure(found)


def _audit_findings(ex: Exercise, ns: dict, ops: list, ran, launches: int) -> None:
    if ops:
        uniq = sorted(set(ops))
        raise Failure(f"your code computed with PyTorch ({', '.join(uniq[:6])}): the exercise asks for "
                      "your own kernel to do the work; allocate and launch only")
    if ex.kind == "triton" and not launches:
        raise Failure("no Triton kernel of yours was launched: the wrapper must do the work by launching "
                      "your @triton.jit kernel (kernel[grid](...))")
    if ran is not None:
        own = _own_kernel_names(ex, ns)
        # PyTorch's fill kernels write a constant: the grader's own (canary and NaN poison in the outputs' guarded
        # buffers, seen by the profiler in a lent arena) and a submission's fill_ (an allowed op) compute nothing.
        # (A kernel of the submission's own CUDA cell counts as its own anyway: see "Trusted by measurement".)
        # Likewise a device-to-device copy (copy_ and clone are allowed ops; the grader copies the logits of an
        # in-place exercise into the output it lends): the profiler names it "Memcpy DtoD (Device -> Device)".
        ran = [k for k in ran if not (k.startswith("void at::native::") and "at::native::FillFunctor<" in k)
               and not k.startswith("Memcpy DtoD")]
        foreign = sorted({k for k in ran if k and not any(k.startswith(o) for o in own)})
        if foreign:
            raise Failure(f"GPU kernels that are not yours ran: {', '.join(foreign[:4])}; "
                          "the exercise asks for your own kernel to do the work")
        if not ran:
            raise Failure("no GPU kernel ran: the output must come from a kernel")


def _torchless(ex: Exercise) -> bool:
    """A NumPy/Python exercise served by a runner that has no torch (autograder.runner.numpy_only)."""
    import sys
    return ex.kind == "python" and "torch" not in sys.modules


def precheck(ex: Exercise, ns: dict) -> None:
    """Raise what a student should read first: a stub still in place, a name not defined, an entry of a CUDA
    exercise that is not a kernel (or device function) compiled from CUDA source."""
    if _torchless(ex):
        return  # neither kernels nor CUDA stubs in a NumPy-only runner (course.cuda needs torch)
    from course.cuda import CompileFailed, CudaKernel, DeviceFunction, _StubKernel
    from course.errors import NotImplementedYet
    for name in ex.entry:
        obj = ns.get(name)
        if isinstance(obj, _StubKernel):
            raise NotImplementedYet(obj.why)
        if ex.kind == "cuda" and name in ns and type(obj) not in (CudaKernel, DeviceFunction, CompileFailed):
            raise Failure(f"`{name}` must be a CUDA kernel from a %%cuda cell, and it is a {type(obj).__name__}: "
                          "this exercise grades your CUDA C++ (define it with __global__ in a %%cuda cell)")
        if isinstance(obj, DeviceFunction) and not obj.implemented:
            raise NotImplementedYet(f"CUDA device function {name} is not implemented yet (or calls one "
                                    "that is not): replace NOT_IMPLEMENTED() with your code")


def _sync() -> None:
    if mode.GPU:
        import torch
        torch.cuda.synchronize()


def op_run(ex: Exercise, ns: dict, inputs: dict, do_audit: bool) -> dict:
    """One run on the judge's inputs, watched if asked: the output, its guarded buffers, what the audit saw."""
    outs = Outputs(mode.DEVICE)

    def call():
        out = ex.run(ns, inputs, outs)
        if RETURNED[0] is not None:
            RETURNED[0]()
        return out
    if do_audit:
        out, found = audited(ex, ns, call)
    else:
        out, found = call(), None
    _sync()
    _synced()
    return {"out": out, "guards": outs.made, "audit": found}


def _tensors(out) -> list:
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else []
    return [t for t in items if isinstance(t, torch.Tensor)]


def _poison(out) -> None:
    for t in _tensors(out):
        t.fill_(float("nan") if t.is_floating_point() else 0)


_PREPARED: dict = {}


def op_bench_prepare(ex: Exercise, ns: dict, input_sets: list, audit_first: bool = True) -> dict:
    """Get ready for a timed batch over several input sets (rotating buffers, together well over
    L2): one output per set (guarded), a check of the submission's work (audit), a CUDA graph of one
    round, and the runner's own estimate of the time per call (feedback, never graded; since the twenty-third
    session timed with L2 not flushed, so below the judge's time where an input set fits in L2)."""
    from course import timing
    _PREPARED.clear()  # an earlier batch that never ran (its audit failed) lets go of its buffers
    import time
    bare = getattr(ex.run, "__wrapped_run__", ex.run)  # bare: the runner's tamper check is not timed
    outs, made = [], []
    t, phases = [time.perf_counter()], {}

    def lap(name):
        now = time.perf_counter()
        phases[name] = round(now - t[0], 3)
        t[0] = now
    found = None
    for k, inputs in enumerate(input_sets):
        o = Outputs("cuda")
        if k == 0 and audit_first:  # the first call watched, as a graded call is (the timed ones are not)
            out, found = audited(ex, ns, lambda: ex.run(ns, inputs, o))
        else:
            out = ex.run(ns, inputs, o)  # through the runner's guard
        outs.append(out)
        made.extend(o.made)
    _sync()
    lap("first_calls")
    calls = [(lambda i=i: bare(ns, input_sets[i], _Reuse(outs[i]))) for i in range(len(input_sets))]
    # a record only (runner_ms); L2 not flushed: the flush (course.timing.flush_l2) launches a Triton kernel of the
    # course's, which need not compile in the submission's process
    estimate = timing.bench(calls[0], reps=10, flush=False)
    lap("estimate")
    graph = capture(calls)
    lap("capture")
    for out in outs:
        _poison(out)
    # the submission's code ran bare (unguarded) in the estimate and the capture: check for tampering now, so that
    # nothing it changed there is in place when the timed batch runs (with a graph, none of its Python runs then)
    getattr(ex.run, "tamper_check", lambda: None)()
    bind_primitives()[0]()
    _PREPARED[ex.id] = {"calls": calls, "graph": graph, "outs": outs, "made": made}
    return {"audit": found, "measure": {"runner_ms": estimate, "graph": graph is not None, "phases": phases,
                                        "persisting_l2_off": no_persisting_l2()}}


def no_persisting_l2() -> bool:
    """Set aside no L2 for persisting accesses (cudaLimitPersistingL2CacheSize = 0): an access-policy window
    that the submission set on its stream, captured into the graph, would otherwise keep part of an input
    set in L2 from one round to the next. Whether the limit is 0 now."""
    try:
        import cupy
        cupy.cuda.runtime.deviceSetLimit(6, 0)  # 6: cudaLimitPersistingL2CacheSize
        return cupy.cuda.runtime.deviceGetLimit(6) == 0
    except Exception:  # noqa: BLE001  (a GPU without the feature, or no CuPy: nothing to reset)
        return False


def op_bench_go(ex: Exercise, rounds: int) -> dict:
    """The timed batch: `rounds` rounds over every input set, then wait for the GPU. The judge's
    clock runs around this whole request; no Python of the submission runs between the reset of the
    persisting-L2 limit and a replayed graph."""
    p = _PREPARED[ex.id]
    no_persisting_l2()
    replay(p["graph"], p["calls"], rounds)
    return {}


def op_bench_collect(ex: Exercise) -> dict:
    """The outputs of the timed batch (one per input set), for the judge to verify."""
    p = _PREPARED.pop(ex.id)
    getattr(ex.run, "tamper_check", lambda: None)()
    return {"out": list(p["outs"]), "guards": p["made"], "audit": None}


def _rss_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_rss_peak() -> int | None:
    """Reset this process's peak resident memory (VmHWM) to its current size; that size in bytes, or None
    where the kernel does not allow it. A peak measured this way sees every allocator (NumPy, an anonymous
    mmap, a C extension), not one mechanism."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    now = _rss_kib("VmRSS")
    return None if now is None else now * 1024


def op_memory(ex: Exercise, ns: dict, inputs: dict) -> dict:
    """Run once, watching that very call (the output the judge verifies is the one watched: a kernel that
    materialises only on a first call gains nothing): tensors made by torch ops, the GPU's allocated-memory
    peak, NumPy's allocations via tracemalloc, and for NumPy exercises the process's peak resident memory."""
    import gc
    import tracemalloc
    outs = Outputs(mode.DEVICE)
    seen = {"bytes": 0}
    if mode.GPU:
        import torch
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    gc.collect()
    rss0 = _reset_rss_peak() if ex.kind == "python" else None
    tracemalloc.start()
    stopped = False
    try:
        with contextlib.nullcontext() if _torchless(ex) else largest_allocation(seen):
            out = ex.run(ns, inputs, outs)
        _sync()
        stopped = not tracemalloc.is_tracing()
        traced = 0 if stopped else tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    hwm = _rss_kib("VmHWM") if rss0 is not None else None
    peaks = {"largest tensor": seen["bytes"], "NumPy/Python peak": traced}
    if hwm is not None:
        peaks["process memory peak"] = max(0, hwm * 1024 - rss0)
    if mode.GPU:
        torch.cuda.synchronize()
        peaks["GPU memory peak"] = torch.cuda.max_memory_allocated() - before
    return {"out": out, "guards": outs.made, "peaks": peaks,
            "audit": "your code stopped the grader's allocation tracing (tracemalloc)" if stopped else None}

@contextlib.contextmanager
def largest_allocation(seen: dict):
    """seen["bytes"]: the largest tensor any torch op made inside (the grader's own excepted)."""
    from torch.utils._python_dispatch import TorchDispatchMode
    import torch

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if not _GRADER["depth"]:
                for t in (out if isinstance(out, (tuple, list)) else (out,)):
                    if isinstance(t, torch.Tensor):
                        seen["bytes"] = max(seen["bytes"], t.numel() * t.element_size())
            return out

    with Watch():
        yield


class _Reuse:
    """An Outputs stand-in that hands back the same (already guarded) tensors, in the order the run
    asked for them (a run that returns a dict or tuple of outputs gets each back in turn)."""

    def __init__(self, t):
        self.items = list(t.values()) if isinstance(t, dict) else list(t) if isinstance(t, (tuple, list)) else [t]
        self.i = 0

    def tensor(self, shape, dtype):
        t = self.items[self.i % len(self.items)]
        self.i += 1
        return t
