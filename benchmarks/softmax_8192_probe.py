"""Softmax 8192 x 8192 float32 on the H200: which of the one-row kernel's choices make Liger-Kernel's kernel faster?

    python benchmarks/softmax_8192_probe.py OUT.json

liger_function_probe.py (H200, archived run gpu_2026-11-28_s15/b) read, in one process, Liger-Kernel's
softmax kernel at 97.5-98.1% of copy (CUDA events) and 99.9-100.6 (the profiler's kernel durations) against 95.8-96.1
and 97.3 for ours (Chapter 3's rows kernel, 32 warps): a difference in the kernels, not in the clocks or the host.
The two kernels hold one row a program in registers and differ in four things, each a switch here:
warps (Liger 16, ours 32), the load's cache operator (".ca", Liger; ours the default), the store's (".cs",
streaming, Liger; ours the default) and the arithmetic (Liger exp(x - m) and e / d; ours exp2((x - m) log2 e) and
e * (1 / d)). Every candidate's output is checked by the exercise against float64 first; timed in the report's
way (course.timing.bench, 3 interleaved rounds, each in one order: sweeplib.time_rounds, not the report's
rotating order; torch and torch.compile beside them as in the report) and by the profiler's kernel durations
(liger_function_probe.profiled_ms; divided by the events-timed copy, so that column reads higher than the events'
one: compare within a column).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time


import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import sweeplib  # noqa: E402
from kernels_ref import report  # noqa: E402
from liger_function_probe import profiled_ms  # noqa: E402


@triton.jit
def row_cand(x_ptr, y_ptr, cols, x_stride, y_stride, BLOCK: tl.constexpr, CA: tl.constexpr, CS: tl.constexpr,
             EXP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    if CA:
        x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=-float("inf"), cache_modifier=".ca")
    else:
        x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    if EXP:
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
    else:
        e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
        y = e * (1.0 / tl.sum(e, axis=0))
    if CS:
        tl.store(y_ptr + row * y_stride + c, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")
    else:
        tl.store(y_ptr + row * y_stride + c, y.to(y_ptr.dtype.element_ty), mask=mask)


def cand_call(x, warps, ca, cs, exp):
    y = torch.empty_like(x)
    n, cols = x.shape

    def call():
        row_cand[(n,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(cols), CA=ca, CS=cs,
                       EXP=exp, num_warps=warps)
        return y
    return call


def name(w, ca, cs, exp):
    return f"w{w}" + (" ca" if ca else "") + (" cs" if cs else "") + (" exp/div" if exp else "")


CANDS = [(w, ca, cs, False) for w in (16, 32) for ca in (False, True) for cs in (False, True)] + [
    (16, True, True, True), (16, False, False, True), (8, False, False, False)]


def main(argv):
    if not sweeplib.gpu_args(argv, __doc__):
        return 2
    from course import timing
    t0 = time.time()
    doc = sweeplib.report_doc(report, profiler_pct={})
    case = report.Case("softmax", (8192, 8192), "float32")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = report.make_inputs(case, "cuda")
        impls = report.calls(case, inputs, {}, tmp, "cuda")
        impls["flashcourse"] = report.checked(case, inputs, impls["flashcourse"])
        for c in CANDS:
            impls[name(*c)] = report.checked(case, inputs, cand_call(inputs["x"], *c))
        report.warm(impls, report.WARM_S, torch.cuda.synchronize)
        sweeplib.time_rounds(report, case, impls, timing.bench, 3, doc)
        nbytes = 2 * 8192 * 8192 * 4
        ok = [k for k, v in impls.items() if not isinstance(v, Exception)]
        for rnd in range(0 if os.environ.get("PROBE_NVTX") else 2):  # (the profiler and ncu exclude each other)
            for k in report.round_order(ok, rnd):
                ms = profiled_ms(impls[k])
                doc["profiler_pct"].setdefault(k, []).append(round(100 * nbytes / (ms * 1e-3) / 1e9
                                                                   / doc["copy_gbps"], 1))
        if os.environ.get("PROBE_NVTX"):  # for Nsight Compute (--nvtx --nvtx-include "probe/"): after the timed
            # rounds, four calls of each of these, L2 flushed before each, inside NVTX ranges named probe
            for k in ("liger", "w16 ca cs exp/div", "w16", "flashcourse"):
                for _ in range(4):
                    timing.flush_l2()
                    torch.cuda.nvtx.range_push("probe")
                    impls[k]()
                    torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
    doc["events_pct"] = sweeplib.pct_by_impl(doc)
    doc["elapsed_s"] = round(time.time() - t0, 1)
    with open(argv[1], "w") as f:
        json.dump(doc, f, indent=1)
    ev = next(iter(doc["events_pct"].values()))
    for k in sorted(ev, key=lambda k: -sorted(ev[k])[1]):
        print(f"   {k:22s} events {ev[k]}  profiler {doc['profiler_pct'].get(k)}")
    print(f"copy {doc['copy_gbps']:.0f} GB/s; done in {doc['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
