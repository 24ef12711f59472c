"""GPU sweep for Chapter 5's warp-per-row CUDA norms: is the RMSNorm fast reference
(kernels_ref/ch05_fused_norms/rmsnorm_rows.cu) at >= 90% of copy at 65536 x 1024 bf16, and which of its variants is
best, next to layernorm_rows.cu and torch. (The kernel it replaced, timed beside them on an H100 at 67.0% of copy,
was benchmarks/norms_cuda_sweep_before.cu until commit 4f7a298; its records stay in archived run
gpu_2026-11-26_s7/norms_sweep.json.)

    python benchmarks/norms_cuda_sweep.py OUT.json

One process, about 20-40 s on an H100. Measures the copy bandwidth (course.timing.copy_gbps(1 << 30)), then per shape
times (course.timing.bench: CUDA events, L2 flushed, median) each kernel with the exercise's launch (grid (rows,),
256 threads) unless the record's "grid" says otherwise. Kernels are compiled as the course compiles a %%cuda cell
(course.cuda.compile_cuda: NVRTC, -arch of this GPU); a variant is the file's notebook part with `#define`s in
front (RMSR_MIN_BLOCKS: __launch_bounds__ blocks per SM; RMSR_MAX_ROWS: rows per warp; RMSR_WARP_VEC: uint4 per
lane). Before it is timed, every output is checked by its exercise's own verify (ch05.rmsnorm_vec_cuda: bf16 rounded
once, within 0.5 ulp of the float64 reference; ch05.layernorm_cuda for LayerNorm) on the exercise's adversarial
inputs at the timed shape: a wrong one gets an error record and no time. torch's F.rms_norm and F.layer_norm are
timed either way, their check's verdict recorded ("check"). GB/s and "pct" use the report's byte model
(kernels_ref/report.py, the exercise's Bench.nbytes: read x once + write y once). Each record is printed as it comes;
the JSON is rewritten after each one:

    {"gpu", "copy_gbps", "records": [{"impl", "variant", "shape", "dtype", "grid", "defines", "registers",
                                      "spill_bytes", "ms", "gbps", "pct"} or {..., "error"}]}

Reading it: "rmsnorm_rows" variant "default" is the file as committed.
"grid=groups" launches one block per group of rows a block takes (no block returns at once; rows wider than the
warp path still get a block per row): how much the exercise's one-block-per-row launch costs. If a variant beats
"default" by more than noise (a few %) at 65536 x 1024 without losing at the other shapes, put its defines as the
file's defaults (and its ptxas numbers in the comment).
"""
from __future__ import annotations

import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import course  # noqa: E402
from autograder.declare import registry  # noqa: E402
from autograder.declare.exercise import Case  # noqa: E402
from autograder.declare.submission import notebook_part  # noqa: E402
from course import timing  # noqa: E402
from course.cuda import compile_cuda  # noqa: E402

RMS = os.path.join(ROOT, "kernels_ref/ch05_fused_norms/rmsnorm_rows.cu")
LN = os.path.join(ROOT, "kernels_ref/ch05_fused_norms/layernorm_rows.cu")
RMS_SHAPES = [(65536, 1024), (32768, 2048), (65536, 1536), (16384, 4096)]  # most important first
LN_SHAPES = [(65536, 1024), (32768, 2048)]
THREADS = 256
DEVICE = "cuda"  # a CPU dry run of this script (its logic only) patches this

# (variant, source file, defines, launch): launch "rows" is the exercise's grid (rows,); "groups" is one block per
# group of rows a working block takes (16 for <= 1024 values with 2 rows a warp, else 8). Register counts from
# nvcc 13.0 -arch=sm_90 without a GPU: default 80 (no spills); MIN_BLOCKS=1: 86; 2: 86; 4: 64 with 68 B of spills
# (the 1-row 8-uint4 path); MAX_ROWS=1: 80; MAX_ROWS=1 MIN_BLOCKS=4: 64 + spills; WARP_VEC=4 MAX_ROWS=1: 57 (rows
# over 1024 values then take the block path).
# On an H100, archived run gpu_2026-11-26_s7 has the variants on the exercise's grid ("rows") and only the default on
# "groups" (94.5% at 65536 x 1024; "groups" is now the report's launch), gpu_2026-11-26_s9 the lighter variants on
# "groups" too. Every impl is warmed for 0.2 s before it is timed.
RMS_VARIANTS = [
    ("default, grid=groups", RMS, {}, "groups"),
    ("rmsnorm_narrow, grid=groups", RMS, {}, "narrow"),  # the file's second kernel (rows of <= 1024 values)
    ("warp_vec=4 max_rows=1 min_blocks=4, grid=groups", RMS,
     {"RMSR_WARP_VEC": 4, "RMSR_MAX_ROWS": 1, "RMSR_MIN_BLOCKS": 4}, "groups"),
    ("min_blocks=4, grid=groups", RMS, {"RMSR_MIN_BLOCKS": 4}, "groups"),
    ("max_rows=1, grid=groups", RMS, {"RMSR_MAX_ROWS": 1}, "groups"),
    ("warp_vec=4 max_rows=1 min_blocks=3, grid=groups", RMS,
     {"RMSR_WARP_VEC": 4, "RMSR_MAX_ROWS": 1, "RMSR_MIN_BLOCKS": 3}, "groups"),
    ("default", RMS, {}, "rows"),
    # for the H200 (89.1% in its report of 2026-11-26): more bytes in flight per SM
    ("max_rows=2, grid=groups", RMS, {"RMSR_MAX_ROWS": 2}, "groups"),
    ("max_rows=2 min_blocks=4, grid=groups", RMS, {"RMSR_MAX_ROWS": 2, "RMSR_MIN_BLOCKS": 4}, "groups"),
    ("warp_vec=4 max_rows=1 min_blocks=6, grid=groups", RMS,
     {"RMSR_WARP_VEC": 4, "RMSR_MAX_ROWS": 1, "RMSR_MIN_BLOCKS": 6}, "groups"),
    # a small block per row, as torch.compile's kernel (94.7% on the H200 where ours took 89.1): RMSR_WARP_VEC 2 sends
    # rows over 512 values to the block path; "rows/128": the exercise's grid with 128-thread blocks
    ("block path, 128 threads, min_blocks=5", RMS, {"RMSR_WARP_VEC": 2, "RMSR_MIN_BLOCKS": 5}, "rows/128"),
    ("block path, 64 threads, min_blocks=5", RMS, {"RMSR_WARP_VEC": 2, "RMSR_MIN_BLOCKS": 5}, "rows/64"),
    ("block path, 128 threads, min_blocks=7", RMS, {"RMSR_WARP_VEC": 2, "RMSR_MIN_BLOCKS": 7}, "rows/128"),
    ("block path, 256 threads, min_blocks=4", RMS, {"RMSR_WARP_VEC": 2, "RMSR_MIN_BLOCKS": 4}, "rows"),
]
# LayerNorm (layernorm_rows.cu, as committed): "groups" is the report's launch (a block per 8 rows), "rows" the
# exercise's
LN_VARIANTS = [("default, grid=groups", {}, "groups"), ("default", {}, "rows"),
               # a block per row on the block path (LNR_WARP_VEC 2: rows over 256 floats), 256 or 128 threads
               ("block path, 256 threads", {"LNR_WARP_VEC": 2}, "rows"),
               ("block path, 128 threads", {"LNR_WARP_VEC": 2}, "rows/128"),
               # the file's layernorm_narrow (rows of <= 1024 floats, the report's launch there): a 128-thread block a
               # row, 2 float4 a thread, 32 registers
               ("layernorm_narrow", {}, "narrow/128")]
# LayerNorm variants tried for the H200 (its report, archived run gpu_2026-11-27_s11/n: layernorm_rows.cu 96.3% at 65536
# x 1024, Liger-Kernel 97.9, torch.compile 98.1). Lost there, and removed from the file (code and variants in git
# history, commit 3dcc014; archived run gpu_2026-11-27_s12/c, d and f): persistent warps with the next row prefetched
# and gamma/beta in registers or from L1 (83.1-91.9%), two rows a warp (94.0-94.1), 128- and 64-thread blocks on the
# warp path (95.4-95.5), more warps an SM on it (94.4-94.7), gamma and beta loaded with x on the narrow block path
# (91.9), all against the default's 95.9 on its grid of groups. Won: the block path sized for the row, 128 threads, 2
# float4 a thread (97.3%, gpu_2026-11-27_s12/f): the file's layernorm_narrow.


def source(path: str, defines: dict) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in defines.items()) + notebook_part(path)


def threads_for(launch: str) -> int:
    return int(launch.split("/")[1]) if "/" in launch else THREADS


def grid_for(launch: str, rows: int, cols: int, defines: dict) -> int:
    if launch.startswith("rows"):
        return rows
    if launch == "narrow":
        return (rows + 7) // 8
    from kernels_ref.report import RMSR_MAX_ROWS, RMSR_WARP_VEC  # the file's defaults (a version of this function
    vec = defines.get("RMSR_WARP_VEC", RMSR_WARP_VEC)  # that assumed 2 rows a warp left rows out of 2 grids)
    if cols // 8 > 32 * vec:  # the block path: a block per row whatever the launch
        return rows
    two = defines.get("RMSR_MAX_ROWS", RMSR_MAX_ROWS) >= 2 and cols // 8 <= 32 * vec // 2
    group = 16 if two else 8
    return (rows + group - 1) // group


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else "norms_cuda_sweep.json"
    if not course.GPU:
        print("norms_cuda_sweep needs a GPU")
        return 2
    t0 = time.time()
    result = {"gpu": torch.cuda.get_device_name(), "copy_gbps": timing.copy_gbps(1 << 30), "records": []}
    copy = result["copy_gbps"]
    print(f"{result['gpu']}: copy {copy:.0f} GB/s", flush=True)

    def record(r: dict) -> None:
        result["records"].append(r)
        if "error" in r:
            print(f"{r['impl']:14} {r['variant']:36} {str(tuple(r['shape'])):14} ERROR {r['error'][:150]}", flush=True)
        else:
            regs = f"{r['registers']} regs, {r['spill_bytes']} B local" if "registers" in r else ""
            print(f"{r['impl']:14} {r['variant']:36} {str(tuple(r['shape'])):14} {r['gbps']:6.0f} GB/s "
                  f"{r['pct']:5.1f}%  {r['ms'] * 1e3:7.1f} us  {regs} {r.get('check', '')}", flush=True)
        with open(out, "w") as f:
            json.dump(result, f, indent=1)

    modules = {}

    def kernel(path, defines, name):
        key = (path, tuple(sorted(defines.items())))
        if key not in modules:
            modules[key] = compile_cuda(source(path, defines))
        return getattr(modules[key], name)

    def timed(ex, case, inputs, ref, impl, variant, check_fn, time_fn, k=None, extra=None):
        """Check check_fn's output with the exercise's verify (ours: a wrong one is not timed), then time time_fn."""
        shape = list(case.shape)
        base = {"impl": impl, "variant": variant, "shape": shape, "dtype": case.dtype, **(extra or {})}
        if k is not None:
            base.update(registers=k.resources.registers, spill_bytes=k.resources.stack_bytes)
        torch_op = impl.startswith("F.")
        try:
            y = check_fn()
            torch.cuda.synchronize()
            bad = ex.verify(y, ref, inputs, case)
        except Exception as e:  # noqa: BLE001  (a variant that fails to launch: say so, go on)
            record({**base, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            return
        if bad and not torch_op:
            record({**base, "error": "wrong: " + "; ".join(bad)[:300]})
            return
        if torch_op:
            base["check"] = "check: " + ("; ".join(bad)[:200] if bad else "passes")
        from kernels_ref.report import warm
        warm({variant: time_fn}, 0.2, torch.cuda.synchronize)  # untimed first (the report's order effect)
        ms = timing.bench(time_fn)
        gbps = timing.gbps(ex.bench.nbytes(case.shape), ms)
        record({**base, "ms": ms, "gbps": gbps, "pct": 100 * gbps / copy})

    def rms_shape(ex, shape):
        rows, cols = shape
        case = Case(shape, "adversarial", dtype="bfloat16")
        inputs = ex.make_inputs(case, shape, torch.Generator().manual_seed(15), DEVICE)
        ref = ex.reference(inputs)
        x, g, eps = inputs["x"], inputs["gamma"], float(inputs["eps"])
        y = torch.empty_like(x)
        for variant, path, defines, launch in RMS_VARIANTS:
            if launch == "narrow" and cols > 1024:
                continue
            try:
                k = kernel(path, defines, "rmsnorm_narrow" if launch == "narrow" else "rmsnorm_vec")
            except Exception as e:  # noqa: BLE001
                record({"impl": "rmsnorm_rows", "variant": variant, "shape": list(shape), "dtype": "bfloat16",
                        "defines": defines, "error": f"compile: {type(e).__name__}: {str(e)[:300]}"})
                continue
            grid, threads = grid_for(launch, rows, cols, defines), threads_for(launch)

            def launch_fn(k=k, grid=grid, threads=threads):
                k((grid,), (threads,), (x, g, y, rows, cols, eps))
                return y

            def check_fn(launch_fn=launch_fn):
                y.fill_(float("nan"))  # a row never written shows
                return launch_fn()

            timed(ex, case, inputs, ref, "rmsnorm_rows", variant, check_fn, launch_fn, k,
                  {"grid": grid, "threads": threads, "defines": defines})
        torch_rms = lambda: F.rms_norm(x, (cols,), g, eps)  # noqa: E731
        timed(ex, case, inputs, ref, "F.rms_norm", "torch", torch_rms, torch_rms)

    def ln_shape(ex, shape):
        rows, cols = shape
        case = Case(shape, "adversarial")
        inputs = ex.make_inputs(case, shape, torch.Generator().manual_seed(15), DEVICE)
        ref = ex.reference(inputs)
        x, g, b, eps = inputs["x"], inputs["gamma"], inputs["beta"], float(inputs["eps"])
        y = torch.empty_like(x)
        for variant, defines, launch in LN_VARIANTS:
            k = kernel(LN, defines, "layernorm_narrow" if launch.startswith("narrow") else "layernorm_welford")
            warp_cols = 32 * defines.get("LNR_WARP_VEC", 16) * 4
            grid = (rows + 7) // 8 if launch == "groups" and cols <= warp_cols else rows  # wider: a block per row
            threads = threads_for(launch)

            def ln_launch(k=k, grid=grid, threads=threads):
                k((grid,), (threads,), (x, g, b, y, rows, cols, eps))
                return y

            def ln_check(ln_launch=ln_launch):
                y.fill_(float("nan"))
                return ln_launch()
            timed(ex, case, inputs, ref, "layernorm_rows", variant, ln_check, ln_launch, k,
                  {"grid": grid, "threads": threads, "defines": defines})
        torch_ln = lambda: F.layer_norm(x, (cols,), g, b, eps)  # noqa: E731
        timed(ex, case, inputs, ref, "F.layer_norm", "torch", torch_ln, torch_ln)

    for shape in RMS_SHAPES:
        rms_shape(registry.get("ch05.rmsnorm_vec_cuda"), shape)
        torch.cuda.empty_cache()
    for shape in LN_SHAPES:
        ln_shape(registry.get("ch05.layernorm_cuda"), shape)
        torch.cuda.empty_cache()

    print(f"\n{result['gpu']}, copy {copy:.0f} GB/s, {time.time() - t0:.0f} s; fastest first per shape:")
    for impl, shapes in (("rmsnorm_rows", RMS_SHAPES), ("layernorm_rows", LN_SHAPES)):
        for shape in shapes:
            ok = sorted((r for r in result["records"] if r["shape"] == list(shape) and r["impl"] == impl
                         and "pct" in r), key=lambda r: -r["pct"])
            print(f"  {impl} {shape}: " + ", ".join(f"{r['variant']} {r['pct']:.1f}%" for r in ok))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
