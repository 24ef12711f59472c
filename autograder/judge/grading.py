"""The judge: everything a grade depends on, decided in a process that never runs student code.

For each case the judge draws the inputs from its own secret seed and computes the float64
reference *before* any student code sees them; the runner gets copies (as raw buffers) and can
overwrite its copies as it likes. The judge verifies every output and its guard zones itself,
applies the thresholds, and writes the verdict (an autograder.judge.verdict.Verdict: data, whose
sentence is its render()). What the runner says is a fact to check (an output buffer) or a
measurement (audit findings, timings, allocation peaks), never a verdict.

A runner is anything with the three operations of autograder.runner.execute: `run`, `bench`,
`memory`. autograder.runner.local.LocalRunner runs them in the caller's process (for the trusted
reference kernels of benchmarks and tests); autograder.judge.session.Session runs them in a sandboxed
child process. The judge imports neither: it is handed one.
"""
from __future__ import annotations

import os

from course import mode

from autograder.boundary.guards import GUARD, Failure, check_guards
from autograder.declare.exercise import TIMED_CHECKS, Case, Exercise
from autograder.declare.registry import awaits_calibration, calibrated_here, threshold_for
from autograder.judge.verdict import Measurement, Verdict, failed, not_graded, passed

__all__ = ["Failure", "run_check", "measure_bandwidth", "measurement"]


def _make(ex: Exercise, case, seed: int, device: str):
    import torch
    gen = torch.Generator(device="cpu").manual_seed(seed)
    shape = case.shape_for(mode.GPU)
    inputs = ex.make_inputs(case, shape, gen, device)
    return shape, inputs


def _tensors_of(out) -> list:
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else []
    return [t for item in items for t in _tensors_of(item)]


def _in_guarded_buffers(ex: Exercise, out, guards) -> None:
    """A kernel's every output must be the middle of one of the guarded buffers the runner handed back
    (so a runner whose output factory was replaced cannot hand back outputs whose guards nobody checks)."""
    if ex.kind == "python":
        return
    import torch
    pool = list(guards)
    for t in _tensors_of(out):
        raw = t.detach().contiguous().view(-1).view(torch.uint8)
        for j, (buf, n, _) in enumerate(pool):
            mid = buf[GUARD:GUARD + n]
            if n == t.numel() and mid.dtype == t.dtype and torch.equal(mid.contiguous().view(torch.uint8), raw):
                del pool[j]
                break
        else:
            raise Failure("an output is not one of the grader's guarded output buffers: allocate outputs "
                          "through the grader's factory as the launch contract says")


def _verified(ex: Exercise, reply: dict, ref, inputs, case, verify=None) -> None:
    """The judge's verdict on one reply: guards intact, audit clean, output right."""
    check_guards(reply["guards"])
    _in_guarded_buffers(ex, reply["out"], reply["guards"])
    problems = (verify or ex.verify)(reply["out"], ref, inputs, case)
    if problems:
        raise Failure(problems[0])
    if reply.get("audit"):
        raise Failure(reply["audit"])


# What a dtype needs of a GPU (compute capability): bfloat16 kernels from Ampere (8.0), fp8 from Ada (8.9).
NEEDS_CAPABILITY = {"bfloat16": (8, 0), "float8_e4m3fn": (8, 9), "float8_e5m2": (8, 9)}


def capability() -> tuple[int, int] | None:
    """The GPU's compute capability; FLASHCOURSE_CAPABILITY=7.5 simulates one (tests, and an instructor who
    wants to see what an older GPU's class would get). None in CPU mode without a simulation."""
    sim = os.environ.get("FLASHCOURSE_CAPABILITY")
    if sim:
        major, _, minor = sim.partition(".")
        return int(major), int(minor or 0)
    if not mode.GPU:
        return None
    import torch
    return tuple(torch.cuda.get_device_capability())


def cannot_run(ex: Exercise, dtype: str) -> str | None:
    """Why this GPU cannot run a case of this dtype for this exercise, or None."""
    cap = capability()
    if cap is None:
        return None
    need = max(NEEDS_CAPABILITY.get(dtype, (0, 0)), tuple(ex.min_capability) or (0, 0))
    if cap >= need:
        return None
    what = f"{dtype} kernels need" if NEEDS_CAPABILITY.get(dtype, (0, 0)) == need else f"{ex.id} needs"
    return (f"{what} a GPU of compute capability {need[0]}.{need[1]} or newer; this one is "
            f"{cap[0]}.{cap[1]} (the same for every student graded here)")


def run_check(ex: Exercise, check: str, runner, seed: int) -> Verdict:
    """Run one check; return the judge's Verdict (passed, failed with what to fix, or not graded here).
    `runner`: a runner (see the module's docstring). What the runner's
    port raises (the process died, timed out, the submission raised) is left to the caller (runner.Session)."""
    try:
        return _judge(ex, check, runner, seed)
    except Failure as e:
        return failed(ex.id, check, str(e))


def _judge(ex: Exercise, check: str, runner, seed: int) -> Verdict:
    if ex.needs_gpu and not mode.GPU:
        raise Failure("needs a GPU: this exercise runs only on a machine with an NVIDIA GPU")
    if check in TIMED_CHECKS:
        why = cannot_run(ex, ex.bench.dtype) if ex.bench else None
        if why:
            return not_graded(ex.id, check, why)
        return _timed(ex, check, runner, seed)
    if check == "memory":
        why = cannot_run(ex, ex.memory.case.dtype) if ex.memory else None
        if why:
            return not_graded(ex.id, check, why)
        return _memory(ex, runner, seed)
    cases = [c for c in ex.cases[check] if mode.GPU or not c.gpu_only]
    beyond = {c.dtype: cannot_run(ex, c.dtype) for c in cases}
    if cases and all(beyond.values()):
        return not_graded(ex.id, check, next(iter(beyond.values())))
    n_beyond = sum(1 for c in cases if beyond[c.dtype])
    cases = [c for c in cases if not beyond[c.dtype]]
    done = []
    for i, case in enumerate(cases):
        shape, inputs = _make(ex, case, seed + i, mode.DEVICE)
        ref = ex.reference(inputs)  # before the submission sees (a copy of) the inputs
        reply = runner.run(ex, inputs, ex.kind != "python")  # every case watched (a fallback on one dtype too)
        try:
            _verified(ex, reply, ref, inputs, case)
        except Failure as e:
            raise Failure(f"shape {tuple(shape)}, {case.kind} inputs: {e}") from None
        done.append(f"{tuple(shape)} {case.kind}" + ("" if case.dtype == "float32" else f" {case.dtype}"))
    gpu_only = [c for c in ex.cases[check] if c.gpu_only and not mode.GPU]
    gpu_dtypes = ", ".join(sorted({c.dtype for c in gpu_only}))
    note = (f"; {len(gpu_only)} case(s) graded on a GPU only ({gpu_dtypes}: the Triton interpreter's bf16 tl.dot "
            "is wrong)") if gpu_only else ""
    lacking = sorted({why for why in beyond.values() if why})
    if lacking:
        note += f"; {n_beyond} case(s) not graded: " + "; ".join(lacking)
    return passed(ex.id, check, f"{len(done)} cases passed: " + ", ".join(done) + note)


TARGET_BATCH_S = 0.25  # the judge's clock runs around a batch this long: message costs are negligible
MAX_SET_BYTES = 8 << 30  # rotating input sets are capped at this much GPU memory in all


def _l2_bytes() -> int:
    import torch
    return int(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size)


def _nbytes(inputs) -> int:
    import torch
    vals = inputs.values() if isinstance(inputs, dict) else inputs
    return sum(v.numel() * v.element_size() for v in vals if isinstance(v, torch.Tensor))


def _judge_batch_s(calls, rounds: int) -> float:
    """Seconds for `rounds` rounds of `calls` in this (the judge's) process, timed exactly as the
    runner's batch is: a CUDA graph of one round, replayed, wall clock around it."""
    import time

    from autograder.boundary.graphs import capture, replay
    graph = capture(calls)
    replay(graph, calls, 1)  # warm
    t0 = time.perf_counter()
    replay(graph, calls, rounds)
    return time.perf_counter() - t0


def _roofline_s(ex: Exercise, sets: list, shape, rounds: int) -> float:
    """The judge's own measurement of the roofline over as many sets: copies of as many bytes
    (bandwidth), or PyTorch's operator on the same inputs (throughput)."""
    import torch
    b = ex.bench
    if b.flops is None:
        half = b.nbytes(shape) // 2
        pairs = [(torch.empty(half, dtype=torch.uint8, device="cuda").random_(),
                  torch.empty(half, dtype=torch.uint8, device="cuda")) for _ in sets]
        calls = [(lambda s=s, d=d: d.copy_(s)) for s, d in pairs]
    else:
        calls = [b.baseline(inputs) for inputs in sets]
    return _judge_batch_s(calls, rounds)


MEASURED: list[dict] = []  # every measurement this process made (flashcourse bench --grading reads them)


def measure_bandwidth(ex: Exercise, runner, seed: int, *, audited: bool = True, shape=None) -> dict:
    """Time the submission at the exercise's benchmark shape, with the judge's clock.

    The judge draws several input sets (together at least 4x the L2 cache: each call starts cold),
    computes their references, and asks the runner to prepare (one output per set, a CUDA graph of
    one round). Then it times, on its own clock, a request that runs R rounds over every set: the
    wall time of that request over R x sets calls (a message round trip is included: measured and
    reported as the overhead, never subtracted, since the runner could slow it down on purpose).
    The roofline (a copy of as many bytes, or PyTorch's operator) is measured by the judge in its own
    process the same way, before and after (for a copy also with CUDA events, L2 flushed: the fastest
    of these counts); the output arena is sealed while the second one runs (runner.seal: a runner
    that answered before its GPU was done is caught writing). Finally every output of the timed batch
    is verified."""
    import math
    import time
    if not mode.GPU:
        raise Failure("needs a GPU: speed is measured on a real GPU only (CPU mode runs kernels "
                      "in an interpreter, whose speed says nothing about the GPU)")
    from course import timing
    b = ex.bench
    clock = [time.perf_counter()]
    phases = {}  # seconds of each step of this check (where a timed check spends its time; feedback only)

    def lap(name):
        now = time.perf_counter()
        phases[name] = round(phases.get(name, 0.0) + now - clock[0], 3)
        clock[0] = now
    case = Case(shape or b.shape, b.kind, dtype=b.dtype)
    shape, first = _make(ex, case, seed, "cuda")
    per_set = max(1, _nbytes(first) + (b.nbytes(shape) if b.nbytes else 0) // 2)
    # Sets that together hold 4 x L2, no flush between rounds. Lines a kernel loads with the evict_last policy outlive
    # ordinary traffic (benchmarks/gpu_2026-11-29_s23/e), so a submission could try to keep the first rows of each set
    # in L2 for the next round: on an H200 that gained nothing here (s24/b: a pinned row copy's small gain over the
    # unpinned one was the same with an L2 flush between rounds; through this function +0.4% at most, or 5% slower
    # with the other rows evict_first, s24/a; attack_evict_last_residency, s24/h)
    n_sets = min(max(2, math.ceil(4 * _l2_bytes() / per_set)), max(1, MAX_SET_BYTES // per_set), 16)
    sets = [first] + [_make(ex, case, seed + 7919 * k, "cuda")[1] for k in range(1, n_sets)]
    refs = [ex.reference(inputs) for inputs in sets]  # before the runner sees a copy of any of them
    lap("inputs_references")
    prep = runner.bench_prepare(ex, sets, audited)
    lap("prepare")
    if prep.get("audit"):
        raise Failure(prep["audit"])
    # rounds: enough for TARGET_BATCH_S at the roofline's speed (a slower kernel only takes longer)
    est = _roofline_s(ex, sets, shape, 1) / n_sets
    rounds = int(min(2000, max(3, math.ceil(TARGET_BATCH_S / (n_sets * max(est, 1e-6))))))
    before = _roofline_s(ex, sets, shape, rounds)
    ping = runner.ping()
    lap("roofline")
    t0 = time.perf_counter()
    runner.bench_go(ex, rounds)
    wall = time.perf_counter() - t0
    # The runner's answer stops the clock, and it answers when it says its GPU is done; that is its word. The judge
    # checks it: the outputs of the batch lie in the arena it lent, and it fills that arena with a seal now. If the
    # runner's GPU was still running the batch, its kernels overwrite some of the seal while the judge measures its
    # roofline again, and the judge sees it when it unseals (then the outputs are put back). Unsealed before the
    # collect, whose answer's outputs are read out of the arena (the runner stays frozen between its requests).
    lap("timed_batch")
    sealed = runner.seal()
    try:
        after = _roofline_s(ex, sets, shape, rounds)
    finally:
        late = runner.unseal()
    lap("roofline")
    if late:
        raise Failure("the runner answered the timed batch while its GPU was still running it (outputs were written "
                      "after the answer, so the judge's clock stopped early): the wait for the GPU was skipped or "
                      "forged")
    reply = runner.bench_collect(ex)
    if sealed and reply.get("placed") is False:  # honest outputs always fit: the arena is twice the inputs' size
        raise Failure("the outputs of the timed batch were not all in the output arena the judge lent (moved out of "
                      "it), where the judge checks that nothing writes them after the runner's answer")
    lap("collect")
    outs = reply["out"]
    if not isinstance(outs, list) or len(outs) != n_sets:
        raise Failure("the runner did not hand back one output per input set")
    for k, (inputs, ref, out) in enumerate(zip(sets, refs, outs)):
        try:
            _verified(ex, {"out": out, "guards": reply["guards"], "audit": None}, ref, inputs, case)
        except Failure as e:
            raise Failure(f"the output of the timed runs is wrong (input set {k + 1} of {n_sets}): {e}") from None
    lap("verify")
    calls = rounds * n_sets
    ms = max(wall, 1e-9) / calls * 1e3  # the round trip is not subtracted: the runner could slow it on purpose
    roof_ms = min(before, after) / calls * 1e3  # the better of two: one slow roofline must not flatter
    if b.flops is None:  # and the copy timed the older way too (CUDA events, L2 flushed before each):
        # on an H100 the batched 512 MiB copies of the 1024x131072 shape ran at 2426 GB/s against 2965
        # GB/s timed this way; a roofline must never be the slower measurement
        roof_ms = min(roof_ms, b.nbytes(shape) / (timing.copy_gbps(b.nbytes(shape)) * 1e9) * 1e3)
        lap("copy_events")
    measure = prep.get("measure", {})
    m = {"exercise": ex.id, "shape": list(shape), "ms": ms, "device": _device_name(), "model": b.model,
         "sets": n_sets, "rounds": rounds, "overhead": ping / max(wall, 1e-9),
         "runner_ms": measure.get("runner_ms"), "graph": bool(measure.get("graph")), "phases": phases,
         "persisting_l2_off": measure.get("persisting_l2_off") is True, "sealed": sealed,
         "runner_phases": {str(k): float(v) for k, v in (measure.get("phases") or {}).items()
                           if isinstance(v, (int, float))} if isinstance(measure.get("phases"), dict) else {}}
    MEASURED.append(m)
    del MEASURED[:-16]
    if b.flops is None:
        got, best = timing.gbps(b.nbytes(shape), ms), timing.gbps(b.nbytes(shape), roof_ms)
        m.update(gbps=got, copy_gbps=best, fraction=got / best)
    else:
        got = b.flops(shape, b.kind) / (ms * 1e-3) / 1e12
        best = b.flops(shape, b.kind) / (roof_ms * 1e-3) / 1e12
        m.update(tflops=got, baseline_tflops=best, baseline=b.baseline_name, fraction=got / best)
    return m


def _device_name() -> str:
    import torch
    return torch.cuda.get_device_name()


def measurement(ex: Exercise, m: dict, need: float, calibrated: bool) -> Measurement:
    """A timed check's Measurement, from measure_bandwidth's numbers and the bar applied to them."""
    b = ex.bench
    if b.flops is None:
        unit, value, roof, roof_name = "GB/s", m["gbps"], m["copy_gbps"], "copy bandwidth"
    else:
        unit, value, roof, roof_name = "TFLOP/s", m["tflops"], m["baseline_tflops"], m["baseline"]
    return Measurement(unit=unit, value=float(value), roof=float(roof), roof_name=str(roof_name),
                       fraction=float(m["fraction"]), need=float(need), calibrated=bool(calibrated),
                       device=str(m["device"]), shape=tuple(m["shape"]), case=b.kind, dtype=b.dtype,
                       model=str(m["model"]), ms=float(m["ms"]), rounds=int(m["rounds"]), sets=int(m["sets"]),
                       overhead=float(m["overhead"]), graph=bool(m["graph"]))


AWAITS_CALIBRATION = ("its speed bar has not been measured on a GPU yet (the exercise awaits a calibration by the "
                      "course's maintainers), so this check is not graded: 0 points, for everyone alike")


def _timed(ex: Exercise, check: str, runner, seed: int) -> Verdict:
    if not mode.GPU:
        measure_bandwidth(ex, runner, seed)  # raises: needs a GPU
    if awaits_calibration(ex.id, check):
        return not_graded(ex.id, check, AWAITS_CALIBRATION)
    first = run_check(ex, "correctness", runner, seed)  # speed counts only for a kernel that is right
    if not first.passed:
        return failed(ex.id, check, f"not timed: the kernel must first pass its correctness check: {first.render()}")
    m = measurement(ex, measure_bandwidth(ex, runner, seed), threshold_for(ex.id, check),
                    calibrated_here(ex.id, check))
    if m.fraction > ex.bench.max_fraction:
        return failed(ex.id, check, "faster than the roofline allows, so the kernel skipped work", m)
    if m.fraction < m.need:
        return failed(ex.id, check, "", m)
    return passed(ex.id, check, measurement=m)


def _memory(ex: Exercise, runner, seed: int) -> Verdict:
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
        return failed(ex.id, "memory", line)
    return passed(ex.id, "memory", line)
