"""GPU sweep for Chapter 5's warp-per-row CUDA norms (issue 15 item 2): is the fixed RMSNorm fast reference
(kernels_ref/ch05_fused_norms/rmsnorm_rows.cu) at >= 90% of copy at 65536 x 1024 bf16, and which of its variants
is best, next to layernorm_rows.cu and torch. (The kernel before the fix, timed beside them in the seventh session's
run at 67.0% of copy, was benchmarks/norms_cuda_sweep_before.cu until commit 4f7a298; its records stay in
benchmarks/gpu_2026-11-26_s7/norms_sweep.json.)

    python benchmarks/norms_cuda_sweep.py OUT.json

One process, about 20-40 s on an H100. Measures the copy bandwidth (course.timing.copy_gbps(1 << 30)), then per shape
times (course.timing.bench: CUDA events, L2 flushed, median) each kernel with the exercise's launch (grid (rows,),
256 threads) unless the record's "grid" says otherwise. Kernels are compiled as the course compiles a %%cuda cell
(course.cuda.compile_cuda: NVRTC, -arch of this GPU); a variant is the file's notebook part with `#define`s in
front (RMSR_MIN_BLOCKS: __launch_bounds__ blocks per SM; RMSR_MAX_ROWS: rows per warp; RMSR_WARP_VEC: uint4 per
lane; for layernorm_rows.cu LNR_PERSIST, LNR_PREFETCH, LNR_GB_REGS, LNR_ROWS_PER_WARP, LNR_WARP_VEC, LNR_MIN_BLOCKS
and LNR_MAX_THREADS, described in that file and at LN_VARIANTS below). Before it is timed, every output is checked
by its exercise's own verify (ch05.rmsnorm_vec_cuda: bf16 rounded once, within 0.5 ulp of the float64 reference;
ch05.layernorm_cuda for LayerNorm) on the exercise's adversarial inputs at the timed shape: a wrong one gets an
error record and no time. torch's F.rms_norm and F.layer_norm are timed either way, their check's verdict recorded
("check"). GB/s and "pct" use the report's byte model (kernels_ref/report.py, the exercise's Bench.nbytes: read x
once + write y once). Each record is printed as it comes; the JSON is rewritten after each one:

    {"gpu", "copy_gbps", "records": [{"impl", "variant", "shape", "dtype", "grid", "threads", "defines",
                                      "registers", "spill_bytes", "ms", "gbps", "pct"} or {..., "error"}]}

Reading it: "rmsnorm_rows" variant "default" is the file as committed.
"grid=groups" launches one block per group of rows a block takes (no block returns at once; rows wider than the
warp path still get a block per row): how much the exercise's one-block-per-row launch costs. "persist/T/B"
(LayerNorm only) launches T threads a block, B blocks per SM ("resident_per_sm": how many its registers let stay).
If a variant beats "default" by more than noise (a few %) at 65536 x 1024 without losing at the other shapes, put
its defines as the file's defaults (and its ptxas numbers in the comment).
"""
from __future__ import annotations

import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import course  # noqa: E402
from autograder import registry  # noqa: E402
from autograder.exercise import Case  # noqa: E402
from autograder.submission import notebook_part  # noqa: E402
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
# The seventh session ran the variants on the exercise's grid ("rows") and only the default on "groups" (94.5% at
# 65536 x 1024, the report's launch since); the ninth runs the lighter variants on "groups" too, every impl warmed
# for 0.2 s before it is timed.
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
    # tenth session, for the H200 (89.1% in its first report): more bytes in flight per SM
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
# LayerNorm (layernorm_rows.cu, as committed): "groups" is the report's launch (a block per 8 rows; 16 with
# LNR_ROWS_PER_WARP 2 up to 1024 floats), "rows" the exercise's; "persist/THREADS/B" a grid of B blocks per SM
# (sm_count() x B) for the persistent variants (LNR_PERSIST 1: a warp loops over rows warp, + all the grid's warps,
# ...), which take any grid; rows off the warp path (wider than 32 * LNR_WARP_VEC * 4 floats, or not float4) get a
# block per row on every launch, as in the report.
LN_VARIANTS = [("default, grid=groups", {}, "groups"), ("default", {}, "rows"),
               # a block per row on the block path (LNR_WARP_VEC 2: rows over 256 floats), 256 or 128 threads
               ("block path, 256 threads", {"LNR_WARP_VEC": 2}, "rows"),
               ("block path, 128 threads", {"LNR_WARP_VEC": 2}, "rows/128")]
# Added for the H200: in report run benchmarks/gpu_2026-11-27_s11/n (benchmarks/results/nvidia_h200.json)
# the default on its grid of groups read 96.3% of copy at 65536 x 1024 fp32, Liger-Kernel's Triton LayerNorm 97.9 and
# torch.compile 98.1 (on an H100 ours and Liger's both 98.4). The default keeps at most 2 blocks of 8 warps per SM
# (96 registers, sized for its 2048-float path), each warp's loads idle while it reduces and stores, and gamma and
# beta are re-read (8 KB from L1/L2) for every 4 KB row. The variants below: persistent warps with the next row's
# loads issued before the current row is normalised (LNR_PREFETCH float4 a lane of the 8 of a 1024-float row),
# gamma/beta in registers (LNR_GB_REGS), two rows a warp (LNR_ROWS_PER_WARP 2), or more warps per SM
# (LNR_WARP_VEC 8: rows over 1024 floats to the block path, fewer registers). Registers from nvcc 13.0 -arch=sm_90
# -Xptxas -v without a GPU (the default, unchanged: 96), every one 0 bytes of spills; the B of "persist/T/B" is
# what those registers let stay resident (65536 / (T x registers rounded up to 8)).
LN_VARIANTS += [
    ("persist, prefetch 8, gamma/beta regs, 128 x 3",  # 165 registers (LNR_MIN_BLOCKS 3 caps them at 168)
     {"LNR_PERSIST": 1, "LNR_MAX_THREADS": 128, "LNR_MIN_BLOCKS": 3}, "persist/128/3"),
    ("persist, gamma/beta regs, no prefetch, 256 x 2",  # 128 registers
     {"LNR_PERSIST": 1, "LNR_PREFETCH": 0, "LNR_MIN_BLOCKS": 2}, "persist/256/2"),
    ("persist, prefetch 8, gamma/beta L1, 256 x 2",  # 124 registers
     {"LNR_PERSIST": 1, "LNR_GB_REGS": 0, "LNR_MIN_BLOCKS": 2}, "persist/256/2"),
    ("persist, warp_vec=8, prefetch 4, g/b L1, 256 x 3",  # 80 registers (prefetch 6: 80; 8 spills at 80)
     {"LNR_PERSIST": 1, "LNR_WARP_VEC": 8, "LNR_GB_REGS": 0, "LNR_PREFETCH": 4, "LNR_MIN_BLOCKS": 3},
     "persist/256/3"),
    ("persist, warp_vec=8, prefetch 2, g/b L1, 256 x 4",  # 64 registers (prefetch 4 spills at 64)
     {"LNR_PERSIST": 1, "LNR_WARP_VEC": 8, "LNR_GB_REGS": 0, "LNR_PREFETCH": 2, "LNR_MIN_BLOCKS": 4},
     "persist/256/4"),
    ("persist, warp_vec=8, no prefetch, g/b L1, 256 x 4",  # 64 registers
     {"LNR_PERSIST": 1, "LNR_WARP_VEC": 8, "LNR_GB_REGS": 0, "LNR_PREFETCH": 0, "LNR_MIN_BLOCKS": 4},
     "persist/256/4"),
    ("rows_per_warp=2, grid=groups", {"LNR_ROWS_PER_WARP": 2}, "groups"),  # 96 registers (min_blocks 3 spills)
    # not persistent, the same occupancy as the two above (4 blocks of 8 warps per SM: as many warps as Liger's
    # 4-warp blocks): how much of a difference is the occupancy alone
    ("warp_vec=8 min_blocks=4, grid=groups", {"LNR_WARP_VEC": 8, "LNR_MIN_BLOCKS": 4}, "groups"),  # 64 registers
]
# Twelfth session, after run gpu_2026-11-27_s12/c on an H200 (every variant above behind the default's 95.9% at 65536 x
# 1024; persistent 83.1-91.9, two rows a warp 94.1, 32 warps an SM 94.6): smaller blocks on the same warp path, so a
# block's 4 (or 2) rows finish together and the next block starts sooner ("groups/T": T threads, a row a warp).
LN_VARIANTS += [
    ("default, 128 threads, grid=groups", {}, "groups/128"),  # 96 registers: 5 blocks (20 warps) an SM
    ("default, 64 threads, grid=groups", {}, "groups/64"),  # 96 registers: 10 blocks (20 warps) an SM
    ("warp_vec=8 min_blocks=8, 128 threads, grid=groups",  # 64 registers
     {"LNR_WARP_VEC": 8, "LNR_MAX_THREADS": 128, "LNR_MIN_BLOCKS": 8}, "groups/128"),
]
# Then (s12/d: those 95.4-95.5) a block per row as Liger-Kernel's kernel (97.6% in the placement probe, s12/e: 4-warp
# programs, a row each, gamma and beta loaded first), on the block path sized for the row (LNR_BLOCK_VEC float4 a
# thread: 1024 floats) so that its registers let more blocks stay; LNR_GB_FIRST loads gamma and beta with x.
# (With LNR_MIN_BLOCKS 12 at 128 threads, 40 registers, it spills 32 bytes: left out.)
LN_VARIANTS += [
    ("block path, 128 threads, block_vec=2", {"LNR_WARP_VEC": 2, "LNR_BLOCK_VEC": 2}, "rows/128"),  # 32 registers
    ("block path, 128 threads, block_vec=2, gb first",  # 48 registers
     {"LNR_WARP_VEC": 2, "LNR_BLOCK_VEC": 2, "LNR_GB_FIRST": 1}, "rows/128"),
    ("block path, 256 threads, block_vec=1, gb first",  # 32 registers
     {"LNR_WARP_VEC": 2, "LNR_BLOCK_VEC": 1, "LNR_GB_FIRST": 1}, "rows"),
]


def source(path: str, defines: dict) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in defines.items()) + notebook_part(path)


def threads_for(launch: str) -> int:
    return int(launch.split("/")[1]) if "/" in launch else THREADS


def sm_count() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def resident_per_sm(registers: int, threads: int) -> int:
    """Blocks of `threads` a Hopper SM holds at `registers` a thread (64 K registers allocated 256 a warp, 64 warps,
    32 blocks; 256 B of shared memory a block does not bind)."""
    per_warp = -(-max(registers, 1) * 32 // 256) * 256
    return min(65536 // per_warp // (threads // 32), 2048 // threads, 32)


def ln_grid(launch: str, rows: int, cols: int, defines: dict) -> int:
    """layernorm_rows.cu's grid for a launch kind (see LN_VARIANTS); rows off the warp path: a block per row."""
    vec = defines.get("LNR_WARP_VEC", 16)
    if launch.startswith("rows") or not (cols % 4 == 0 and cols <= 32 * vec * 4):
        return rows
    if launch.startswith("persist/"):
        return sm_count() * int(launch.split("/")[2])
    assert launch.split("/")[0] == "groups", launch
    two = defines.get("LNR_ROWS_PER_WARP", 1) == 2 and cols <= 32 * min(vec, 8) * 4
    group = threads_for(launch) // 32 * (2 if two else 1)  # "groups/T": T-thread blocks, a row a warp
    return (rows + group - 1) // group


def grid_for(launch: str, rows: int, cols: int, defines: dict) -> int:
    if launch.startswith("rows"):
        return rows
    if launch == "narrow":
        return (rows + 7) // 8
    from kernels_ref.report import RMSR_MAX_ROWS, RMSR_WARP_VEC  # the file's defaults (until the tenth session
    vec = defines.get("RMSR_WARP_VEC", RMSR_WARP_VEC)  # this assumed 2 rows a warp: 2 grids left rows out)
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
            print(f"{r['impl']:14} {r['variant']:50} {str(tuple(r['shape'])):14} ERROR {r['error'][:150]}", flush=True)
        else:
            regs = f"{r['registers']} regs, {r['spill_bytes']} B local" if "registers" in r else ""
            print(f"{r['impl']:14} {r['variant']:50} {str(tuple(r['shape'])):14} {r['gbps']:6.0f} GB/s "
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
            try:
                k = kernel(LN, defines, "layernorm_welford")
            except Exception as e:  # noqa: BLE001
                record({"impl": "layernorm_rows", "variant": variant, "shape": list(shape), "dtype": "float32",
                        "defines": defines, "error": f"compile: {type(e).__name__}: {str(e)[:300]}"})
                continue
            grid, threads = ln_grid(launch, rows, cols, defines), threads_for(launch)
            if "LNR_MIN_BLOCKS" in defines:  # __launch_bounds__(LNR_MAX_THREADS, ...): more threads fail to launch
                assert threads <= defines.get("LNR_MAX_THREADS", 256), (variant, threads)
            extra = {"grid": grid, "threads": threads, "defines": defines}
            if launch.startswith("persist/"):  # fewer resident than asked: the grid runs in more than one wave
                extra["resident_per_sm"] = resident_per_sm(k.resources.registers, threads)

            def ln_launch(k=k, grid=grid, threads=threads):
                k((grid,), (threads,), (x, g, b, y, rows, cols, eps))
                return y

            def ln_check(ln_launch=ln_launch):
                y.fill_(float("nan"))
                return ln_launch()
            timed(ex, case, inputs, ref, "layernorm_rows", variant, ln_check, ln_launch, k, extra)
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
