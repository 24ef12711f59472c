"""`flashcourse bench --report` on a GPU: our reference kernels against torch eager, torch.compile, Liger-Kernel
and (attention) SDPA's flash and cuDNN backends, in one process and one run, every implementation timed the same
way (`course.timing.bench`: CUDA events, L2 flushed before each call, median of 30; every impl of a case first runs
untimed for WARM_S seconds, see warm) on the same inputs; bandwidth
as a percentage of a device-to-device copy measured in the same run (before and after, the faster counts). Our
kernel's output is first checked by its exercise against the float64 reference (a wrong one gets an error record).

    python -m kernels_ref.report [--json PATH] [--no-render] [--ptxas torch|triton]
    python -m kernels_ref.report --only KERNEL,... --json PATH --no-render [--ptxas torch|triton]

Writes benchmarks/results/<gpu>.json (the format: autograder.instructor.bench_report), then the plots and
BENCHMARKS.md's section from every report there. A peer that is not installed (Liger-Kernel: the `bench` extra, or
its wheel) or that fails on a shape gets a record with its error instead of numbers.

One ptxas compiles every Triton kernel of the report (see pin_ptxas), and the JSON's "versions" names it.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass

import torch

import course
from autograder.instructor import bench_report
from autograder.declare import registry
from autograder.declare.exercise import Case as ExCase
from kernels_ref.bench import TORCH_OPS, fast_reference_source, namespace, reference_source

EPS = 1e-5  # the exercises' eps, as in TORCH_OPS
COPY_BYTES = 1 << 30  # the copy's size (read + write); every case below moves 256 MiB or more


@dataclass(frozen=True)
class Case:
    kernel: str
    shape: tuple
    dtype: str
    causal: bool | None = None  # attention_fwd only


CASES = [Case("softmax", s, dt) for s, dt in (((1024, 131072), "float32"), ((2048, 131072), "bfloat16"),
                                                 ((4096, 32768), "bfloat16"), ((8192, 8192), "float32"),
                                                 ((16384, 4096), "bfloat16"))]
CASES += [Case("rmsnorm", (16384, 4096), "bfloat16"), Case("rmsnorm", (4096, 16384), "bfloat16"),
          Case("layernorm", (32768, 4096), "float32"), Case("layernorm", (32768, 4096), "bfloat16"),
          Case("add_rmsnorm", (16384, 4096), "bfloat16"),
          Case("layernorm_cuda", (65536, 1024), "float32"), Case("rmsnorm_cuda", (65536, 1024), "bfloat16")]
CASES += [Case("attention_fwd", (4, 32, T, D), "bfloat16", causal)
          for D in (64, 128) for causal in (False, True) for T in (1024, 2048, 4096, 8192, 16384)]

REFERENCES = {"rmsnorm": "ch05.rmsnorm_triton", "layernorm": "ch05.layernorm_triton",
              "add_rmsnorm": "ch05.add_rmsnorm_triton", "layernorm_cuda": "ch05.layernorm_cuda",
              "rmsnorm_cuda": "ch05.rmsnorm_vec_cuda", "attention_fwd": "ch04.flash_attention_triton"}
ARRAYS = {"add_rmsnorm": 4}  # tensors of x's size read or written per call (x, residual in; y, sum out); else 2


def reference_for(case: Case) -> str:
    """The exercise whose reference kernel is ours for this case (the fastest where there are several)."""
    if case.kernel == "softmax":  # Chapter 3's fast reference (kernels_ref.bench.FAST_REFERENCES), which reads x
        # once at every width and dtype: rows up to 32768 columns in one program, longer ones split over programs or,
        # on Hopper, over a thread-block cluster (softmax_split_rows.CONFIGS). 8192 float32 too, where Chapter 1's row
        # kernel (8 warps) used to be taken: Chapter 3's (32 warps there) matched or led it in three interleaved
        # rounds, 98.8-98.9 against 98.7-98.8% of copy on an H100 (archived run gpu_2026-11-27_s11/i), 95.9-96.1
        # against 95.3-95.9 on an H200 (gpu_2026-11-27_s12/c; Liger-Kernel 95.6-95.7 there)
        return "ch03.online_softmax_triton"
    return REFERENCES[case.kernel]


def make_inputs(case: Case, device: str) -> dict:
    """The reference exercise's own inputs (plain random rows, not the graded adversarial ones)."""
    ex = registry.get(reference_for(case))
    kind = "randn" if case.causal is None else ("causal" if case.causal else "full")
    return ex.make_inputs(ExCase(case.shape, kind, dtype=case.dtype), case.shape, torch.Generator().manual_seed(0),
                          device)


class Outputs:
    """The exercise's output factory (`ex.run(ns, inputs, outs)`), one buffer per shape reused by every call."""

    def __init__(self, device: str):
        self.device, self.made = device, {}

    def tensor(self, shape, dtype):
        key = (tuple(shape), dtype)
        if key not in self.made:
            self.made[key] = torch.empty(key[0], dtype=dtype, device=self.device)
        return self.made[key]


def _attempt(make):
    """make(), or the exception that says why it cannot be made (recorded as the impl's error)."""
    try:
        return make()
    except Exception as e:  # noqa: BLE001  (a peer that is missing or cannot load: its record says why)
        return e


def _rmsnorm_rows_launch(ns, inputs, outs):
    """rmsnorm_rows.cu on its own grid: one block of 8 warps per 8 rows (one row a warp; 16 rows, two a warp, up
    to 1024 columns where RMSR_MAX_ROWS is 2) up to 2048 columns, a block per row beyond (the kernel takes either
    grid). The exercise's launch, a block per row, leaves 7 of 8 blocks with nothing to do: 87.6% of copy at 65536
    x 1024 against 94.5% on this grid (H100, archived run gpu_2026-11-26_s7/norms_sweep.json; one row a warp 95.3%,
    gpu_2026-11-26_s9/g). Rows of at most 1024 values take the file's rmsnorm_narrow instead (the same warp path
    sized for those rows: more blocks an SM; see its comment for the measurements)."""
    x = inputs["x"]
    rows, cols = x.shape
    y = outs.tensor(x.shape, torch.bfloat16)
    n8 = cols // 8
    aligned = all(t.data_ptr() % 16 == 0 for t in (x, inputs["gamma"], y))  # else the kernel takes a block a row
    args = (x, inputs["gamma"], y, rows, cols, float(inputs["eps"]))
    if cols % 8 == 0 and aligned and 0 < n8 <= 128:
        ns["rmsnorm_narrow"](((rows + 7) // 8,), (256,), args)
        return y
    warp_n8 = 32 * RMSR_WARP_VEC  # uint4 a warp holds: wider rows take the block path
    two = RMSR_MAX_ROWS >= 2 and n8 <= warp_n8 // 2  # two rows a warp where the kernel does it
    group = 1 if cols % 8 or n8 > warp_n8 or not aligned else (16 if two else 8)
    ns["rmsnorm_vec"](((rows + group - 1) // group,), (256,), args)
    return y


def _layernorm_rows_launch(ns, inputs, outs):
    """layernorm_rows.cu on its own grid: rows of at most 1024 floats take the file's layernorm_narrow, a 128-thread
    block a row (97.3% of copy at 65536 x 1024 on an H200 against 95.9 for the warp path below:
    archived run gpu_2026-11-27_s12/f); up to 2048 float columns one block of 8 warps per 8 rows (a row a warp), a
    block per row beyond or where float4 loads cannot be used (the kernel takes either grid). The exercise's
    launch, a block per row, starts 8 times the blocks, 7 of 8 of which return at once."""
    x = inputs["x"]
    rows, cols = x.shape
    y = outs.tensor(x.shape, torch.float32)
    aligned = all(t.data_ptr() % 16 == 0 for t in (x, inputs["gamma"], inputs["beta"], y))
    args = (x, inputs["gamma"], inputs["beta"], y, rows, cols, float(inputs["eps"]))
    if cols % 4 == 0 and cols <= 1024 and aligned:
        ns["layernorm_narrow"]((rows,), (128,), args)
        return y
    warp_path = cols % 4 == 0 and cols <= 2048 and aligned
    ns["layernorm_welford"](((rows + 7) // 8 if warp_path else rows,), (256,), args)
    return y


# rmsnorm_rows.cu's rows per warp (its #define RMSR_MAX_ROWS, read from the file): the launch's groups follow it
def _cu_define(name: str) -> int:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ch05_fused_norms", "rmsnorm_rows.cu")) as f:
        m = re.search(rf"#define {name} (\d+)", f.read())
    if m is None:
        raise RuntimeError(f"kernels_ref/ch05_fused_norms/rmsnorm_rows.cu no longer defines {name}: "
                           "kernels_ref/report.py's launch of it reads that define")
    return int(m.group(1))


RMSR_MAX_ROWS, RMSR_WARP_VEC = _cu_define("RMSR_MAX_ROWS"), _cu_define("RMSR_WARP_VEC")
OWN_LAUNCH = {"ch05.rmsnorm_vec_cuda": _rmsnorm_rows_launch,  # fast references timed on their own grids (above)
              "ch05.layernorm_cuda": _layernorm_rows_launch}


def ours(case: Case, inputs: dict, loaded: dict, tmp: str, device: str):
    """Our reference kernel through the exercise's own launch (`ex.run`), or the fast reference's own grid where
    OWN_LAUNCH names one; its cells loaded once per exercise."""
    ex = registry.get(reference_for(case))
    if ex.id not in loaded:
        fast = fast_reference_source(ex)
        loaded[ex.id] = namespace(ex, fast[1] if fast else reference_source(ex), tmp)
    ns, outs = loaded[ex.id], Outputs(device)
    run = OWN_LAUNCH.get(ex.id) if fast_reference_source(ex) else None
    return (lambda: run(ns, inputs, outs)) if run else (lambda: ex.run(ns, inputs, outs))


def torch_op(case: Case):
    """PyTorch's op for the case as op(x, r, w, b) (kernels_ref.bench's table, keyed by the reference exercise)."""
    ex = registry.get(reference_for(case))
    return (TORCH_OPS.get(ex.id) or TORCH_OPS[ex.chapter])[1]


_COMPILED: dict = {}


def compiled_op(case: Case):
    op = torch_op(case)
    if op not in _COMPILED:
        _COMPILED[op] = torch.compile(op, dynamic=False)
    return _COMPILED[op]


def liger_op(kernel: str):
    """Liger-Kernel's forward as op(x, r, w, b); ImportError where it is not installed."""
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    rms = lambda x, r, w, b: LigerRMSNormFunction.apply(x, w, EPS)
    ln = lambda x, r, w, b: LigerLayerNormFunction.apply(x, w, b, EPS)
    return {"softmax": lambda x, r, w, b: LigerSoftmaxFunction.apply(x), "rmsnorm": rms, "rmsnorm_cuda": rms,
            "layernorm": ln, "layernorm_cuda": ln,
            "add_rmsnorm": lambda x, r, w, b: LigerFusedAddRMSNormFunction.apply(x, r, w, EPS)}[kernel]


def sdpa(inputs: dict, backend: str):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def call():
        with sdpa_kernel(getattr(SDPBackend, backend)):
            return F.scaled_dot_product_attention(inputs["q"], inputs["k"], inputs["v"], is_causal=inputs["causal"])
    return call


def calls(case: Case, inputs: dict, loaded: dict, tmp: str, device: str) -> dict:
    """impl -> a call without arguments, or the exception that says why there is none."""
    mine = _attempt(lambda: ours(case, inputs, loaded, tmp, device))
    if case.kernel == "attention_fwd":
        return {"flashcourse": mine, "sdpa-flash": sdpa(inputs, "FLASH_ATTENTION"),
                "sdpa-cudnn": sdpa(inputs, "CUDNN_ATTENTION")}
    args = (inputs["x"], inputs.get("residual"), inputs.get("gamma"), inputs.get("beta"))
    out = {"flashcourse": mine}
    for impl, make in (("torch", lambda: torch_op(case)), ("torch.compile", lambda: compiled_op(case)),
                       ("liger", lambda: liger_op(case.kernel))):
        op = _attempt(make)
        out[impl] = op if isinstance(op, Exception) else (lambda op=op: op(*args))
    return out


def checked(case: Case, inputs: dict, call):
    """Our call, once its output passed the exercise's own check against its float64 reference (the grader's
    tolerance); else the exception that says what is wrong (recorded as our error: a wrong kernel's speed is no
    result). The fast references are checked here on the shapes they are timed at, not only in their tests."""
    if isinstance(call, Exception):
        return call
    try:
        ex = registry.get(reference_for(case))
        kind = "randn" if case.causal is None else ("causal" if case.causal else "full")
        out = call()
        problems = ex.verify(out, ex.reference(inputs), inputs, ExCase(case.shape, kind, dtype=case.dtype))
    except Exception as e:  # noqa: BLE001  (it crashed: recorded as the error)
        return e
    return AssertionError("wrong output: " + "; ".join(problems)[:250]) if problems else call


ROUNDS = 3  # timed passes over a case's impls, interleaved, each in its own order (ORDER); a record keeps the median
# ORDER: why the rounds change the impls' order. What runs beside a kernel can move its reading: on an H100 (archived
# run gpu_2026-11-27_s13/d, best of two rounds) liger_gap_sweep.py read the softmax 16384 x 4096 bfloat16 impls at
# 96.2-96.6% of copy alone and 99.4-100.1% with torch and torch.compile interleaved. (One mechanism, found on an H200,
# gpu_2026-11-29_s23/c-f: lines torch.compile's kernels load with evict_last outlived the old L2 flush, and the impl
# timed right after it read part of its input from L2; course.timing.flush_l2 now evicts them. Not rechecked on an
# H100.) With one order for all rounds, ours was always timed first and Liger-Kernel always right after torch.compile; a
# rotation (A B C, B C A, ...) changes the first impl but keeps every impl's neighbours, and a seeded shuffle left cuDNN
# right after ours in all three attention rounds. round_order: as given, reversed, rotated by half, and so on.


def round_order(names: list, k: int) -> list:
    """The order of round k: names, reversed in odd rounds, rotated by k // 2 half-lengths. For 2 to 4 impls and 3
    rounds no impl holds one position, or follows one impl, in every round (tests/test_bench_report.py)."""
    shift = (k // 2) * max(len(names) // 2, 1) % max(len(names), 1)
    order = list(names[shift:]) + list(names[:shift])
    return order[::-1] if k % 2 else order


def measure(case: Case, impl_calls: dict, bench, rounds: int = ROUNDS) -> list[dict]:
    """One record per impl: the median of `rounds` interleaved bench(call) passes, in ms (all of them kept in
    "ms_rounds"), turned into GB/s (pct_copy filled in later) or TFLOP/s; or the error of a call that could not be
    made or failed. Why interleaved rounds: a GPU's clock and temperature drift within a case's seconds, and one
    pass per impl gives whichever impl ran in the better moment the edge (two H100 reports run back to back gave
    0.90-1.21x and 0.85-1.09x cuDNN for the same attention kernel; archived run gpu_2026-11-26_s10/j and k)."""
    times: dict = {impl: [] for impl in impl_calls}
    errors: dict = {}
    for k in range(rounds):
        for impl in round_order(list(impl_calls), k):  # each round in its own order (ORDER)
            call = impl_calls[impl]
            if impl in errors:
                continue
            try:
                if isinstance(call, Exception):
                    raise call
                times[impl].append(bench(call))
            except Exception as e:  # noqa: BLE001  (not installed, or fails on this shape: recorded, never a crash)
                errors[impl] = (f"{type(e).__name__}: {e}".strip().splitlines() or [type(e).__name__])[0][:300]
    out = []
    for impl in impl_calls:
        r = {"kernel": case.kernel, "shape": list(case.shape), "dtype": case.dtype}
        if case.causal is not None:
            r["causal"] = case.causal
        r["impl"] = impl
        if impl == "flashcourse":
            own = reference_for(case) in OWN_LAUNCH and fast_reference_source(registry.get(reference_for(case)))
            r["ref"] = reference_for(case) + (" on its own grid" if own else "")
        if impl in errors:
            r["error"] = errors[impl]
            out.append(r)
            continue
        ms = statistics.median(times[impl])
        r["ms_rounds"] = times[impl]
        if case.kernel == "attention_fwd":
            flops = registry.get(REFERENCES["attention_fwd"]).bench.flops(case.shape, "causal" if case.causal
                                                                          else "full")
            r.update(gbps=None, pct_copy=None, tflops=flops / (ms * 1e-3) / 1e12)
        else:
            nbytes = ARRAYS.get(case.kernel, 2) * case.shape[0] * case.shape[1] * _itemsize(case.dtype)
            r.update(gbps=nbytes / (ms * 1e-3) / 1e9, pct_copy=None, tflops=None)
        out.append(r)
    return out


def _itemsize(dtype: str) -> int:
    return torch.empty((), dtype=getattr(torch, dtype)).element_size()


PTXAS_CHOICES = ("torch", "triton")
# Triton's own: the one students' kernels and Liger-Kernel's get in a process without torch.compile. Side by side on
# an H100 (archived run gpu_2026-11-27_s13/b, one process per ptxas) no difference stood out of the noise: the
# Triton kernels' softmax and norms within 0.4 points of copy, our attention 0.99-1.04x, cuDNN's (no ptxas of ours)
# 0.99-1.03x between the same two processes.
DEFAULT_PTXAS = "triton"


def ptxas_paths() -> dict:
    """choice -> the ptxas it names: torch's (torch/bin/ptxas, shipped with CUDA builds of torch) and Triton's own."""
    import triton
    return {"torch": os.path.join(os.path.dirname(torch.__file__), "bin", "ptxas"),
            "triton": os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")}


def pin_ptxas(choice: str | None) -> str | None:
    """Make one ptxas compile every Triton kernel of this process; its path, or None where the chosen one is
    missing (then nothing is pinned: the caller stops).
    Why: torch.compile (inductor, on its first compile) sets TRITON_PTXAS_PATH to torch/bin/ptxas for the rest of
    the process, where it was unset. In a report that did not pin it, our first case's kernel and every kernel
    compiled before the first torch.compile call (ours, with Triton's ptxas) met the peers compiled after it
    (Liger-Kernel's, inductor's, with torch's): on the device's torch 2.11 / triton 3.6, CUDA 13.0's ptxas against
    12.8's. Inductor leaves a set TRITON_PTXAS_PATH alone, so pinning it before anything compiles makes it one for
    all. choice None: a TRITON_PTXAS_PATH the caller set, else DEFAULT_PTXAS; a named choice wins over it."""
    if choice is None and os.environ.get("TRITON_PTXAS_PATH"):
        return os.environ["TRITON_PTXAS_PATH"]
    path = ptxas_paths()[choice or DEFAULT_PTXAS]
    if not os.access(path, os.X_OK):
        return None
    os.environ["TRITON_PTXAS_PATH"] = path
    return path


def _ptxas_version(path: str | None) -> str | None:
    import subprocess
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return m.group(1) if m else None


def _versions() -> dict:
    from importlib import metadata

    import triton
    path = os.environ.get("TRITON_PTXAS_PATH")
    out = {"torch": torch.__version__, "triton": triton.__version__, "ptxas": _ptxas_version(path),
           "ptxas_path": path}
    try:
        out["liger-kernel"] = metadata.version("liger-kernel")
    except metadata.PackageNotFoundError:
        out["liger-kernel"] = None
    return out


WARM_S = 0.2  # seconds each impl of a case runs, untimed, before the case's timed pass (see warm)


def warm(impl_calls: dict, seconds: float = WARM_S, sync=None) -> dict:
    """Run each callable impl for about `seconds`, untimed, before any of the case is timed; impl -> calls made.
    Why: the impl timed first in a case used to be the slow one. In a placement probe on an H100 (archived run
    gpu_2026-11-26_s9/e/placement_probe.json) our softmax 16384x4096 bf16 measured 96.3% of copy in its
    first timed pass and 99.8% in the second, RMSNorm 96.1 / 99.5 and 96.0 / 98.8; the same kernel writing to fresh
    or differently placed outputs measured 98.8-100.0, Liger-Kernel (timed fourth) 98.1-99.3. Ours, timed first,
    had looked 2-4 points behind Liger-Kernel on these shapes. timing.bench's 5 warm-up calls are too short for it."""
    made = {}
    for impl, call in impl_calls.items():
        if isinstance(call, Exception):
            continue
        n, t0 = 0, time.perf_counter()
        try:
            while True:
                call()
                n += 1
                if sync is not None:
                    sync()
                if time.perf_counter() - t0 >= seconds:
                    break
        except Exception:  # noqa: BLE001  (measure records the failure when it calls it again)
            pass
        made[impl] = n
    return made


def run(cases, *, gpu: str, bench, copy_gbps, device: str = "cuda", log=print, warm_s: float = WARM_S) -> dict:
    """The report of `cases`: copy bandwidth (before and after: the faster counts), then every case's records."""
    copy = copy_gbps(COPY_BYTES)
    records, loaded = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            inputs = make_inputs(case, device)
            impls = calls(case, inputs, loaded, tmp, device)
            impls["flashcourse"] = checked(case, inputs, impls["flashcourse"])
            warm(impls, warm_s, torch.cuda.synchronize if device == "cuda" else None)
            for r in measure(case, impls, bench):
                records.append(r)
                log(_line(r))
            del inputs
            if device == "cuda":
                torch.cuda.empty_cache()
    copy = max(copy, copy_gbps(COPY_BYTES))
    for r in records:
        if r.get("gbps") is not None:
            r["pct_copy"] = 100 * r["gbps"] / copy
    return {"gpu": gpu, "date": datetime.date.today().isoformat(), "copy_gbps": copy, "versions": _versions(),
            "records": records}


def _line(r: dict) -> str:
    what = (f"{r['kernel']:14} {'x'.join(map(str, r['shape'])):16} {r['dtype']:9} "
            + ("" if "causal" not in r else "causal " if r["causal"] else "full   ") + f"{r['impl']:14}")
    if "error" in r:
        return f"{what} error: {r['error'][:100]}"
    return f"{what} {r['tflops']:7.0f} TFLOP/s" if r["tflops"] is not None else f"{what} {r['gbps']:7.0f} GB/s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="where the report goes (default: benchmarks/results/<gpu>.json)")
    ap.add_argument("--no-render", action="store_true", help="write the JSON only (no plots, no BENCHMARKS.md)")
    ap.add_argument("--only", help="the cases of these kernels only (comma-separated: softmax, rmsnorm, layernorm, "
                                   "add_rmsnorm, layernorm_cuda, rmsnorm_cuda, attention_fwd); needs --json and "
                                   "--no-render")
    ap.add_argument("--ptxas", choices=PTXAS_CHOICES,
                    help=f"the ptxas of every Triton kernel of the run (default: TRITON_PTXAS_PATH if set, else "
                         f"{DEFAULT_PTXAS}'s; see pin_ptxas)")
    args = ap.parse_args(argv)
    cases = CASES
    if args.only:
        kernels = set(args.only.split(","))
        unknown = kernels - {c.kernel for c in CASES}
        if unknown or not args.json or not args.no_render:
            ap.error(f"unknown kernels {sorted(unknown)}" if unknown else
                     "--only writes a partial report: name --json and --no-render")
        cases = [c for c in CASES if c.kernel in kernels]
    if not course.GPU:
        print("the benchmark report needs a GPU; `flashcourse bench --render` rebuilds it from the committed JSON")
        return 2
    from course import timing
    gpu = torch.cuda.get_device_name()
    ptxas = pin_ptxas(args.ptxas)
    if ptxas is None:
        print(f"no {args.ptxas or DEFAULT_PTXAS} ptxas at {ptxas_paths()[args.ptxas or DEFAULT_PTXAS]}: name the other "
              "(--ptxas) or set TRITON_PTXAS_PATH (one ptxas must compile every Triton kernel: see pin_ptxas)")
        return 2
    print(f"{gpu}: {len(cases)} cases, impls timed with course.timing.bench; every Triton kernel compiled by "
          f"{ptxas}", flush=True)
    doc = run(cases, gpu=gpu, bench=timing.bench, copy_gbps=timing.copy_gbps,
              log=lambda s: print(s, flush=True))
    path = args.json or bench_report.report_path(gpu)
    bench_report.write(doc, path)
    print(f"copy {doc['copy_gbps']:.0f} GB/s; wrote {path}")
    if not args.no_render:
        for p in bench_report.render():
            print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
