"""The judge: everything a grade depends on, decided in a process that never runs student code.

For each case the judge draws the inputs from its own secret seed and computes the float64
reference *before* any student code sees them; the runner gets copies (as raw buffers) and can
overwrite its copies as it likes. The judge verifies every output and its guard zones itself,
applies the thresholds, and writes the verdict. What the runner says is a fact to check (an
output buffer) or a measurement (audit findings, timings, allocation peaks), never a verdict.

A runner is anything with the three operations of autograder.execute: `run`, `bench`,
`memory`. `LocalRunner` runs them in this process (for the trusted reference kernels of
benchmarks and tests); autograder.runner.Session runs them in a sandboxed child process.
"""
from __future__ import annotations

from course import mode

from .execute import Failure, check_guards
from .exercise import TIMED_CHECKS, Case, Exercise
from .registry import threshold_for

__all__ = ["Failure", "LocalRunner", "run_check", "measure_bandwidth"]


class LocalRunner:
    """The runner's operations, in this process: for code the judge trusts (reference kernels)."""

    def __init__(self, ns: dict):
        self.ns = ns

    def run(self, ex: Exercise, inputs: dict, do_audit: bool) -> dict:
        from . import execute
        execute.precheck(ex, self.ns)
        return execute.op_run(ex, self.ns, inputs, do_audit)

    def bench(self, ex: Exercise, inputs: dict, shape, audited: bool = True) -> dict:
        from . import execute
        return execute.op_bench(ex, self.ns, inputs, shape, audited)

    def memory(self, ex: Exercise, inputs: dict) -> dict:
        from . import execute
        execute.precheck(ex, self.ns)
        return execute.op_memory(ex, self.ns, inputs)


def _make(ex: Exercise, case, seed: int, device: str):
    import torch
    gen = torch.Generator(device="cpu").manual_seed(seed)
    shape = case.shape_for(mode.GPU)
    inputs = ex.make_inputs(case, shape, gen, device)
    return shape, inputs


def _verified(ex: Exercise, reply: dict, ref, inputs, case, verify=None) -> None:
    """The judge's verdict on one reply: guards intact, audit clean, output right."""
    check_guards(reply["guards"])
    problems = (verify or ex.verify)(reply["out"], ref, inputs, case)
    if problems:
        raise Failure(problems[0])
    if reply.get("audit"):
        raise Failure(reply["audit"])


def run_check(ex: Exercise, check: str, runner, seed: int) -> str:
    """Run one check; return a one-line summary or raise Failure with what to fix.
    `runner`: a runner (see the module's docstring), or a namespace dict of trusted code."""
    if isinstance(runner, dict):
        runner = LocalRunner(runner)
    if ex.needs_gpu and not mode.GPU:
        raise Failure("needs a GPU: this exercise runs only on a machine with an NVIDIA GPU")
    if check in TIMED_CHECKS:
        return _timed(ex, check, runner, seed)
    if check == "memory":
        return _memory(ex, runner, seed)
    cases = [c for c in ex.cases[check] if mode.GPU or not c.gpu_only]
    done = []
    for i, case in enumerate(cases):
        shape, inputs = _make(ex, case, seed + i, mode.DEVICE)
        ref = ex.reference(inputs)  # before the submission sees (a copy of) the inputs
        reply = runner.run(ex, inputs, i == 0 and ex.kind != "python")
        try:
            _verified(ex, reply, ref, inputs, case)
        except Failure as e:
            raise Failure(f"shape {tuple(shape)}, {case.kind} inputs: {e}") from None
        done.append(f"{tuple(shape)} {case.kind}" + ("" if case.dtype == "float32" else f" {case.dtype}"))
    skipped = len(ex.cases[check]) - len(cases)
    gpu_dtypes = ", ".join(sorted({c.dtype for c in ex.cases[check] if c.gpu_only}))
    note = (f"; {skipped} case(s) graded on a GPU only ({gpu_dtypes}: the Triton interpreter's bf16 tl.dot "
            "is wrong)") if skipped else ""
    return f"{len(done)} cases passed: " + ", ".join(done) + note


def measure_bandwidth(ex: Exercise, runner, seed: int, *, audited: bool = True, shape=None) -> dict:
    """Time the submission at the exercise's benchmark shape (see execute.op_bench); the judge
    verifies the output of the timed runs and turns the times into a fraction of the roofline."""
    if isinstance(runner, dict):
        runner = LocalRunner(runner)
    if not mode.GPU:
        raise Failure("needs a GPU: speed is measured on a real GPU only (CPU mode runs kernels "
                      "in an interpreter, whose speed says nothing about the GPU)")
    b = ex.bench
    case = Case(shape or b.shape, b.kind, dtype=b.dtype)
    shape, inputs = _make(ex, case, seed, "cuda")
    ref = ex.reference(inputs)
    reply = runner.bench(ex, inputs, list(shape), audited)
    try:
        _verified(ex, reply, ref, inputs, case)
    except Failure as e:
        raise Failure(f"the output of the timed runs is wrong: {e}") from None
    f = reply["measure"]
    ms, best = float(f["ms"]), float(f["roof"])
    if not (ms > 0 and best > 0):
        raise Failure(f"the runner reported an impossible time ({ms} ms)")
    m = {"exercise": ex.id, "shape": list(shape), "ms": ms, "device": str(f["device"])[:80], "model": b.model}
    if b.flops is None:
        from course import timing
        got = timing.gbps(b.nbytes(shape), ms)
        m.update(gbps=got, copy_gbps=best, fraction=got / best)
    else:
        got = b.flops(shape, b.kind) / (ms * 1e-3) / 1e12
        m.update(tflops=got, baseline_tflops=best, baseline=b.baseline_name, fraction=got / best)
    return m


def _timed(ex: Exercise, check: str, runner, seed: int) -> str:
    if not mode.GPU:
        measure_bandwidth(ex, runner, seed)  # raises: needs a GPU
    try:  # speed counts only for a kernel that is right
        run_check(ex, "correctness", runner, seed)
    except Failure as e:
        raise Failure(f"not timed: the kernel must first pass its correctness check: {e}") from None
    m = measure_bandwidth(ex, runner, seed)
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


def _memory(ex: Exercise, runner, seed: int) -> str:
    lim = ex.memory
    shape, inputs = _make(ex, lim.case, seed, mode.DEVICE)
    ref = ex.reference(inputs)
    reply = runner.memory(ex, inputs)
    try:  # correct first: no allocation is cheaper than no work
        _verified(ex, reply, ref, inputs, lim.case, lim.verify)
    except Failure as e:
        raise Failure(f"shape {tuple(shape)}, {lim.case.kind} inputs: {e}") from None
    peaks = {str(k): int(v) for k, v in reply["peaks"].items()}
    limit = lim.limit(shape)
    what, worst = max(peaks.items(), key=lambda kv: kv[1])
    line = (f"{what} {worst / 2**20:.2f} MiB during your call at {tuple(shape)}; "
            f"limit {limit / 2**20:.2f} MiB ({lim.what})")
    if worst >= limit:
        raise Failure(line)
    return line
