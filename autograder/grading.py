"""Running one check of one exercise against a loaded submission (inside a worker).

Outputs are allocated by the grader inside a larger buffer: the output itself is
poisoned with NaN before every launch (unwritten elements fail) and the guard zones
on either side hold a canary (out-of-bounds writes fail).
"""
from __future__ import annotations

import contextlib

import numpy as np

from course import mode

from .exercise import TIMED_CHECKS, Case, Exercise
from .registry import threshold_for

GUARD = 4096  # elements on each side of an output
CANARY = 1234.5


class Failure(AssertionError):
    pass


class Outputs:
    """Factory for poisoned, guarded output tensors."""

    def __init__(self, device: str):
        self.device = device
        self.made: list[tuple] = []

    def tensor(self, shape, dtype):
        import torch
        n = int(np.prod(shape))
        with _grader_ops():  # as stored in dtype (1234.5 is 1232 in bf16; fp8 e4m3 tops out at 448: 224)
            canary = torch.tensor(min(CANARY, float(torch.finfo(dtype).max) / 2), dtype=dtype).float().item()
            buf = torch.full((n + 2 * GUARD,), canary, dtype=dtype, device=self.device)
            out = buf[GUARD:GUARD + n].view(shape)
            out.fill_(float("nan"))
        self.made.append((buf, n, canary))
        return out

    def check_guards(self) -> None:
        for buf, n, canary in self.made:
            zones = (("before", buf[:GUARD]), ("after", buf[GUARD + n:]))
            for where, zone in zones:
                hit = (zone.float() != canary).nonzero()
                if len(hit):
                    raise Failure(
                        f"out-of-bounds write: {len(hit)} element(s) written just {where} the output "
                        f"tensor ({n} elements); check your masks and index bounds")


# aten ops a wrapper may run besides its own kernels: allocation, views, copies.
_ALLOWED_OPS = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "fill_", "zero_", "copy_", "_to_copy", "clone", "detach", "alias", "view", "_unsafe_view",
    "reshape", "as_strided", "contiguous", "t", "transpose", "permute", "expand", "slice", "select",
    "unsqueeze", "squeeze", "flatten", "lift_fresh", "_local_scalar_dense", "is_same_size", "numel",
    "sym_size", "sym_stride", "sym_numel", "stride", "size", "dim", "resize_", "set_", "unfold",
}


_GRADER = {"depth": 0}


@contextlib.contextmanager
def _grader_ops():
    """Torch ops the grader itself runs inside an audited call are not the student's."""
    _GRADER["depth"] += 1
    try:
        yield
    finally:
        _GRADER["depth"] -= 1


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


def audit(ex: Exercise, ns: dict, call) -> None:
    """The grader's run of the submission may use only the submission's kernels."""
    ops: list[str] = []
    with audit_torch_ops(ops):
        call()
    if ops:
        uniq = sorted(set(ops))
        raise Failure(f"your code computed with PyTorch ({', '.join(uniq[:6])}): the exercise asks for "
                      "your own kernel to do the work; allocate and launch only")
    if mode.GPU and ex.kind in ("triton", "cuda"):
        own = _own_kernel_names(ex, ns)
        ran = gpu_kernels_run(call)
        foreign = sorted({k for k in ran if k and not any(k.startswith(o) for o in own)})
        if foreign:
            raise Failure(f"GPU kernels that are not yours ran: {', '.join(foreign[:4])}; "
                          "the exercise asks for your own kernel to do the work")
        if not ran:
            raise Failure("no GPU kernel ran: the output must come from a kernel")


def _make(ex: Exercise, case, seed: int, device: str):
    import torch
    gen = torch.Generator(device="cpu").manual_seed(seed)
    shape = case.shape_for(mode.GPU)
    inputs = ex.make_inputs(case, shape, gen, device)
    return shape, inputs


def _run_verified(ex: Exercise, ns: dict, case, seed: int, device: str, do_audit: bool) -> str:
    shape, inputs = _make(ex, case, seed, device)
    outs = Outputs(device)
    out = ex.run(ns, inputs, outs)
    if mode.GPU:
        import torch
        torch.cuda.synchronize()
    outs.check_guards()
    problems = ex.verify(out, ex.reference(inputs), inputs, case)
    if problems:
        raise Failure(f"shape {tuple(shape)}, {case.kind} inputs: " + problems[0])
    if do_audit:  # the same call again, output reused, so that only the submission's work is seen
        audit(ex, ns, lambda: ex.run(ns, inputs, _Reuse(out)))
    return f"{tuple(shape)} {case.kind}" + ("" if case.dtype == "float32" else f" {case.dtype}")


def run_check(ex: Exercise, check: str, ns: dict, seed: int) -> str:
    """Run one check; return a one-line summary or raise Failure with what to fix."""
    from course.cuda import DeviceFunction, _StubKernel
    from course.errors import NotImplementedYet
    device = mode.DEVICE
    for name in ex.entry:
        obj = ns.get(name)
        if isinstance(obj, _StubKernel):
            raise NotImplementedYet(obj.why)
        if isinstance(obj, DeviceFunction) and not obj.implemented:
            raise NotImplementedYet(f"CUDA device function {name} is not implemented yet (or calls one "
                                    "that is not): replace NOT_IMPLEMENTED() with your code")
    if ex.needs_gpu and not mode.GPU:
        raise Failure("needs a GPU: this exercise runs only on a machine with an NVIDIA GPU")
    if check in TIMED_CHECKS:
        return _timed(ex, check, ns, seed)
    if check == "memory":
        return _memory(ex, ns, seed)
    cases = [c for c in ex.cases[check] if mode.GPU or not c.gpu_only]
    done = []
    for i, case in enumerate(cases):
        done.append(_run_verified(ex, ns, case, seed + i, device, do_audit=(i == 0 and ex.kind != "python")))
    skipped = len(ex.cases[check]) - len(cases)
    gpu_dtypes = ", ".join(sorted({c.dtype for c in ex.cases[check] if c.gpu_only}))
    note = (f"; {skipped} case(s) graded on a GPU only ({gpu_dtypes}: the Triton interpreter's bf16 tl.dot "
            "is wrong)") if skipped else ""
    return f"{len(done)} cases passed: " + ", ".join(done) + note


def measure_bandwidth(ex: Exercise, ns: dict, seed: int, *, audited: bool = True, shape=None) -> dict:
    """Time the submission at the exercise's benchmark shape, next to its roofline measured in the
    same process: a copy of as many bytes (bandwidth), or PyTorch's op on the same inputs (throughput).

    The output is allocated once (guarded), poisoned, then overwritten by every timed run;
    it is checked after timing, so the timed runs are the ones that must be right."""
    from course import timing
    if not mode.GPU:
        raise Failure("needs a GPU: speed is measured on a real GPU only (CPU mode runs kernels "
                      "in an interpreter, whose speed says nothing about the GPU)")
    import torch
    b = ex.bench
    case = Case(shape or b.shape, b.kind, dtype=b.dtype)
    shape, inputs = _make(ex, case, seed, "cuda")
    outs = Outputs("cuda")
    held = {}

    run = getattr(ex.run, "__wrapped_run__", ex.run)  # bare: the worker's tamper check is not timed

    def call():
        held["out"] = run(ns, inputs, outs if "out" not in held else _Reuse(held["out"]))

    held["out"] = ex.run(ns, inputs, outs)  # the first run goes through the worker's guard
    if audited:
        audit(ex, ns, call)
    held["out"].fill_(float("nan"))
    if b.flops is None:
        nbytes = b.nbytes(shape)
        roof = lambda: timing.copy_gbps(nbytes)  # noqa: E731
    else:
        base = b.baseline(inputs)
        roof = lambda: b.flops(shape, b.kind) / (timing.bench(base) * 1e-3) / 1e12  # noqa: E731
    before = roof()  # the roofline is the better of two measurements around the kernel:
    torch.cuda.synchronize()  # one slow run of it must not make the kernel look faster
    ms = timing.bench(call)
    best = max(before, roof())
    getattr(ex.run, "tamper_check", lambda: None)()
    outs.check_guards()
    problems = ex.verify(held["out"], ex.reference(inputs), inputs, case)
    if problems:
        raise Failure("the output of the timed runs is wrong: " + problems[0])
    m = {"exercise": ex.id, "shape": list(shape), "ms": ms, "device": torch.cuda.get_device_name(),
         "model": b.model}
    if b.flops is None:
        got = timing.gbps(nbytes, ms)
        m.update(gbps=got, copy_gbps=best, fraction=got / best)
    else:
        got = b.flops(shape, b.kind) / (ms * 1e-3) / 1e12
        m.update(tflops=got, baseline_tflops=best, baseline=b.baseline_name, fraction=got / best)
    return m


def _timed(ex: Exercise, check: str, ns: dict, seed: int) -> str:
    if not mode.GPU:
        measure_bandwidth(ex, ns, seed)  # raises: needs a GPU
    try:  # speed counts only for a kernel that is right
        run_check(ex, "correctness", ns, seed)
    except Failure as e:
        raise Failure(f"not timed: the kernel must first pass its correctness check: {e}") from None
    m = measure_bandwidth(ex, ns, seed)
    need = threshold_for(ex.id, check)
    at = f"at {tuple(m['shape'])} {ex.bench.kind} {ex.bench.dtype} on {m['device']}"
    if check == "bandwidth":
        line = (f"{m['gbps']:.0f} GB/s = {100 * m['fraction']:.0f}% of the copy bandwidth "
                f"({m['copy_gbps']:.0f} GB/s) {at}; bytes = {m['model']}; needs >= {100 * need:.0f}%")
    else:
        line = (f"{m['tflops']:.0f} TFLOP/s = {m['fraction']:.2f}x {m['baseline']} ({m['baseline_tflops']:.0f} "
                f"TFLOP/s, same run) {at}; FLOPs = {m['model']}; needs >= {need:.2f}x")
    if m["fraction"] > ex.bench.max_fraction:
        raise Failure(line + ": faster than the roofline allows, so the kernel skipped work")
    if m["fraction"] < need:
        raise Failure(line)
    return line


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


def _memory(ex: Exercise, ns: dict, seed: int) -> str:
    """Run at the memory case, then again watching allocations: tensors made by torch ops, the
    GPU's allocated-memory peak, and (Python exercises) NumPy's allocations via tracemalloc."""
    import tracemalloc
    lim = ex.memory
    device = mode.DEVICE
    shape, inputs = _make(ex, lim.case, seed, device)
    outs = Outputs(device)
    out = ex.run(ns, inputs, outs)  # correct first: no allocation is cheaper than no work
    if mode.GPU:
        import torch
        torch.cuda.synchronize()
    outs.check_guards()
    problems = (lim.verify or ex.verify)(out, ex.reference(inputs), inputs, lim.case)
    if problems:
        raise Failure(f"shape {tuple(shape)}, {lim.case.kind} inputs: " + problems[0])
    seen = {"bytes": 0}
    limit = lim.limit(shape)
    if mode.GPU:
        import torch
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    tracemalloc.start()
    try:
        with largest_allocation(seen):
            ex.run(ns, inputs, _Reuse(out))
        if not tracemalloc.is_tracing():
            raise Failure("your code stopped the grader's allocation tracing (tracemalloc)")
        traced = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    peaks = {"largest tensor": seen["bytes"], "NumPy/Python peak": traced}
    if mode.GPU:
        torch.cuda.synchronize()
        peaks["GPU memory peak"] = torch.cuda.max_memory_allocated() - before
    what, worst = max(peaks.items(), key=lambda kv: kv[1])
    line = (f"{what} {worst / 2**20:.2f} MiB during your call at {tuple(shape)}; "
            f"limit {limit / 2**20:.2f} MiB ({lim.what})")
    if worst >= limit:
        raise Failure(line)
    return line


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
