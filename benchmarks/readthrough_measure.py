"""Measurements behind some of the chapters' claims, in one process on one GPU:

(a) Chapter 3 exercise 4 at its timed shape (4096 x 2048 float32): the warp-per-row online softmax written the two-pass
    way only (no row-in-registers path), one float and one float4 at a time, next to the reference and to the variant
    that follows the text without its options (submissions/ch03_online_softmax/
    variant_warp_registers_md_push.py), as % of a copy of as many bytes; L2 flushed before each call (as
    course.timing does) and, for comparison, not flushed (the 32 MiB input then stays in L2 between calls).
(b) memory latency: one thread follows a random chain of indices (each load's address is the previous load's value),
    one 128-byte line per hop, loads through L2 only (__ldcg), over buffers from 1 MiB (in L2) to 1 GiB (memory):
    ns per load. Buffers up to 64 MiB are warmed by a full walk of the chain first, so those that fit stay in L2;
    the random hops over large buffers also miss the TLB, which is part of what a random access costs.
(c) L2: a read-only kernel (Triton, sums the buffer) over buffers of 8 MiB to 512 MiB: GB/s read with L2 flushed
    before each call (cold), without flushing (warm: the previous call's read may still be in L2), and reading the
    buffer twice in a row after a flush (the second read is the one L2 can serve).
(d) the cost of re-reading a row: a Triton row softmax that loads the row once (kept in registers) against the same
    kernel loading it a second time for the write (through a second pointer to the same tensor, so the compiler cannot
    merge the loads), and a tiled two-pass softmax (4096-column tiles) for rows too long for registers; 256 MiB of
    float32 per input, rows from 1024 to 262 144 columns. `hidden` = the share of the second read's time that did not
    show: 1 - (t_twice - t_once) / (t_once / 2), t_once/2 being one read's worth of the once-kernel's traffic.
(e) Chapter 4 exercise 2 at its throughput shape (B 4, H 32, T 4096, D 128, causal, bfloat16): the reference and the
    variant written as the text describes it (submissions/ch04_flash_attention/
    variant_triton_taught_order.py), in TFLOP/s and as a multiple of PyTorch's SDPA flash backend (the check's
    baseline; its bar is 0.90x).

Every kernel's output is checked (against torch or an exact expectation) before it is timed; a wrong one gets a
record with "error" and no speed. Times: course.timing.bench (CUDA events, median; L2 flushed unless said).

    python benchmarks/readthrough_measure.py OUT.json        # on a GPU, about a minute
    python benchmarks/readthrough_measure.py --cpu-smoke     # no GPU: every kernel on tiny inputs, nothing timed
"""
from __future__ import annotations

import datetime
import json
import os
import sys

if "--cpu-smoke" in sys.argv:
    os.environ["FLASHCOURSE_MODE"] = "cpu"  # before course, triton: the Triton interpreter and the CPU CUDA layer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import course  # noqa: E402,I001  (first: sets the mode, and the Triton interpreter before triton is imported)
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from course import timing  # noqa: E402
from course.cuda import _nvrtc_compile, compile_cuda  # noqa: E402

SMOKE = not course.GPU
DEV = course.DEVICE
RECORDS: list[dict] = []
MiB = 2**20


def emit(rec: dict) -> None:
    RECORDS.append(rec)
    print(json.dumps(rec), flush=True)


_COPY: dict[int, float] = {}


def copy_gbps(nbytes: int) -> float | None:
    if SMOKE:
        return None
    if nbytes not in _COPY:
        _COPY[nbytes] = round(timing.copy_gbps(nbytes), 1)
    return _COPY[nbytes]


def read(rel: str) -> str:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------- (a) Chapter 3, exercise 4

MD_OPS = read("kernels_ref/ch03_online_softmax/md_ops.cu")
WARP_REF = read("kernels_ref/ch03_online_softmax/online_softmax_warp.cu")

WARP_TWO_PASS_SCALAR = r"""
extern "C" __global__ void online_softmax_warp(const float* __restrict__ x, float* __restrict__ y,
                                               int rows, int cols) {
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float m = -INFINITY, d = 0.f;
    for (int c = lane; c < cols; c += 32) md_push(m, d, xr[c]);   // pass 1: (m, d)
    warp_merge_md(m, d);
    float inv = 1.f / d;
    for (int c = lane; c < cols; c += 32) yr[c] = __expf(xr[c] - m) * inv;  // pass 2: read again, write
}
"""

WARP_TWO_PASS_FLOAT4 = r"""
extern "C" __global__ void online_softmax_warp(const float* __restrict__ x, float* __restrict__ y,
                                               int rows, int cols) {
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float m = -INFINITY, d = 0.f;
    if ((cols & 3) == 0) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll 4
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            md_push(m, d, v.x); md_push(m, d, v.y); md_push(m, d, v.z); md_push(m, d, v.w);
        }
        warp_merge_md(m, d);
        float inv = 1.f / d;
        #pragma unroll 4
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            y4[c] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
                                __expf(v.z - m) * inv, __expf(v.w - m) * inv);
        }
    } else {
        for (int c = lane; c < cols; c += 32) md_push(m, d, xr[c]);
        warp_merge_md(m, d);
        float inv = 1.f / d;
        for (int c = lane; c < cols; c += 32) yr[c] = __expf(xr[c] - m) * inv;
    }
}
"""


def _taught_variant() -> str:
    from autograder.instructor.submissions import for_chapter
    w = next(s for s in for_chapter("ch03_online_softmax") if s.name == "variant_warp_registers_md_push")
    return w.apply(WARP_REF)


def softmax_ok(y, x) -> tuple[bool, float]:
    err = float((y.double() - torch.softmax(x.double(), dim=-1)).abs().max())
    return err <= 1e-5, err


def measure_warp() -> None:
    rows, cols = (48, 2048) if SMOKE else (4096, 2048)
    x = torch.randn(rows, cols, device=DEV) * 4
    x[0, 5] = 80.0  # one row with a dominant entry
    y = torch.empty_like(x)
    nbytes = 2 * x.numel() * 4
    kernels = {"reference (row in registers, max then sum)": WARP_REF,
               "taught variant (row in registers, md_push per value; scalar two-pass otherwise)": _taught_variant(),
               "two-pass only, one float at a time": WARP_TWO_PASS_SCALAR,
               "two-pass only, float4": WARP_TWO_PASS_FLOAT4}
    grid = ((rows + 7) // 8,)
    for name, src in kernels.items():
        rec = {"what": "ch03 ex4 warp per row", "kernel": name, "shape": [rows, cols], "bytes": nbytes}
        try:
            mod = compile_cuda(MD_OPS + "\n" + src)
            k = mod.online_softmax_warp
            rec["registers"] = mod.report["online_softmax_warp"].registers if mod.report else None
            y.zero_()
            k(grid, (256,), (x, y, rows, cols))
            if course.GPU:
                torch.cuda.synchronize()
            ok, err = softmax_ok(y, x)
            rec["max_abs_err"] = err
            if not ok:
                rec["error"] = f"wrong output: max |y - softmax| = {err:.3g}"
                emit(rec)
                continue
            if not SMOKE:
                cp = copy_gbps(nbytes)
                fn = lambda k=k: k(grid, (256,), (x, y, rows, cols))  # noqa: E731
                g = timing.gbps(nbytes, timing.bench(fn))
                g_hot = timing.gbps(nbytes, timing.bench(fn, flush=False))
                rec.update(copy_gbps=cp, gbps=round(g, 1), pct_copy=round(100 * g / cp, 1),
                           gbps_l2_not_flushed=round(g_hot, 1), pct_copy_l2_not_flushed=round(100 * g_hot / cp, 1))
        except Exception as e:  # a record, not a crash: the other measurements still run
            rec["error"] = f"{type(e).__name__}: {e}"[:500]
        emit(rec)


# ---------------------------------------------------------------- (b) latency: a pointer chase

CHASE = r"""
#ifndef LOAD
#define LOAD(p) __ldcg(p)
#endif
// One thread follows the chain: each load's address is the previous load's value.
extern "C" __global__ void chase(const unsigned* __restrict__ next, unsigned* out, int steps, unsigned start) {
    unsigned i = start;
    for (int s = 0; s < steps; ++s) i = LOAD(next + i);
    out[0] = i;
}
"""
LINE = 32  # indices per 128-byte line: one hop per line


def make_chain(nbytes: int, gen):
    """next[order[j] * LINE] = order[j + 1] * LINE (cyclic); returns (next, order)."""
    n_lines = nbytes // 128
    order = torch.randperm(n_lines, generator=gen, device="cpu").to(DEV)
    nxt = torch.zeros(n_lines * LINE, dtype=torch.int32, device=DEV)
    nxt[order * LINE] = (torch.roll(order, -1) * LINE).to(torch.int32)
    return nxt, order


def measure_latency() -> None:
    if SMOKE:  # NVRTC compiles the GPU source; the CPU layer runs it with plain loads
        _nvrtc_compile(course.cuda.PRELUDE + CHASE, "sm_90")
        mod = compile_cuda("#define LOAD(p) (*(p))\n" + CHASE)
        sizes = [64 * 1024, 256 * 1024]
    else:
        mod = compile_cuda(CHASE)
        sizes = [s * MiB for s in (1, 4, 16, 24, 32, 48, 64, 128, 256, 1024)]
    gen = torch.Generator().manual_seed(0)
    out = torch.zeros(4, dtype=torch.int32, device=DEV)
    for nbytes in sizes:
        rec = {"what": "latency, pointer chase", "buffer_bytes": nbytes, "hop_bytes": 128,
               "load": "__ldcg (L2, not L1)"}
        try:
            nxt, order = make_chain(nbytes, gen)
            n_lines = order.numel()
            steps = min(n_lines, 1 << 17) if not SMOKE else 300
            start = int(order[0]) * LINE
            ok = True
            if nbytes <= 64 * MiB:  # warm L2 with a whole walk of the chain, which must end back at the start
                mod.chase((1,), (1,), (nxt, out, n_lines, start))
                ok = int(out[0]) == start
            mod.chase((1,), (1,), (nxt, out, steps, start))
            ok = ok and int(out[0]) == int(order[steps % n_lines]) * LINE
            rec["steps"] = steps
            if not ok:
                rec["error"] = "the chase did not end where the chain says"
                emit(rec)
                continue
            if not SMOKE:
                ms = timing.bench(lambda: mod.chase((1,), (1,), (nxt, out, steps, start)), warmup=2, reps=7,
                                  flush=False)
                rec["ns_per_load"] = round(ms * 1e6 / steps, 1)
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:500]
        emit(rec)


# ---------------------------------------------------------------- (c) L2: reading a buffer cold, warm, twice

@triton.jit
def read_sum_kernel(x_ptr, out_ptr, n, per_prog, BLOCK: tl.constexpr):
    """Program p sums x[p * per_prog : (p + 1) * per_prog] (per_prog a multiple of BLOCK)."""
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(pid * per_prog, pid * per_prog + per_prog, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + idx, mask=idx < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


def measure_l2() -> None:
    BLOCK = 4096 if not SMOKE else 256
    programs = (torch.cuda.get_device_properties(0).multi_processor_count * 4) if not SMOKE else 8
    sizes = [s * MiB for s in (8, 16, 24, 32, 40, 48, 64, 128, 512)] if not SMOKE else [64 * 1024]
    out = torch.empty(programs, device=DEV)
    for nbytes in sizes:
        n = nbytes // 4
        per_prog = triton.cdiv(triton.cdiv(n, programs), BLOCK) * BLOCK
        rec = {"what": "L2, read-only kernel", "buffer_bytes": nbytes, "programs": programs, "BLOCK": BLOCK,
               "num_warps": 8}
        try:
            x = torch.rand(n, device=DEV)

            def once():
                read_sum_kernel[(programs,)](x, out, n, per_prog, BLOCK=BLOCK, num_warps=8)

            def twice():
                once()
                once()

            once()
            got, want = float(out.double().sum()), float(x.double().sum())
            if abs(got - want) > 1e-5 * want:
                rec["error"] = f"wrong sum: {got} against {want}"
                emit(rec)
                continue
            if not SMOKE:
                cold = timing.gbps(nbytes, timing.bench(once))
                warm = timing.gbps(nbytes, timing.bench(once, flush=False))
                two = timing.gbps(2 * nbytes, timing.bench(twice))
                rec.update(read_gbps_cold=round(cold, 1), read_gbps_warm=round(warm, 1),
                           read_twice_gbps_after_flush=round(two, 1),
                           second_read_gbps=round(nbytes / (2 * nbytes / two - nbytes / cold), 1))
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:500]
        emit(rec)


# ---------------------------------------------------------------- (d) re-reading a row

@triton.jit
def softmax_row_kernel(x_ptr, x2_ptr, y_ptr, n_cols, BLOCK: tl.constexpr, REREAD: tl.constexpr):
    """One program per row, the whole row in one BLOCK. REREAD: load it again (through x2_ptr) for the write."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    d = tl.sum(tl.exp(x - m), axis=0)
    if REREAD:
        x = tl.load(x2_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    tl.store(y_ptr + row * n_cols + cols, tl.exp(x - m) / d, mask=mask)


@triton.jit
def softmax_tiled_kernel(x_ptr, y_ptr, n_cols, TILE: tl.constexpr):
    """One program per row, TILE columns at a time: pass 1 online (m, d) per lane, pass 2 re-reads and writes."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, TILE)
    m = tl.full([TILE], -float("inf"), tl.float32)
    d = tl.zeros([TILE], tl.float32)
    for start in range(0, n_cols, TILE):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        base = tl.where(m_new == -float("inf"), 0.0, m_new)
        d = d * tl.exp(m - base) + tl.exp(x - base)
        m = m_new
    m_row = tl.max(m, axis=0)
    d_row = tl.sum(d * tl.exp(m - m_row), axis=0)
    inv = 1.0 / d_row
    for start in range(0, n_cols, TILE):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=-float("inf"))
        tl.store(y_ptr + row * n_cols + start + cols, tl.exp(x - m_row) * inv, mask=mask)


def _warps(block: int) -> int:
    return 4 if block <= 2048 else (8 if block <= 8192 else 16)


def measure_reread() -> None:
    total = 256 * MiB if not SMOKE else 64 * 1024
    widths = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144) if not SMOKE else (256, 1024, 4096)
    tile = 4096 if not SMOKE else 512
    reg_limit = 16384 if not SMOKE else 1024
    for cols in widths:
        rows = max(1, total // (4 * cols))
        x = torch.randn(rows, cols, device=DEV) * 4
        y = torch.empty_like(x)
        nbytes = 2 * x.numel() * 4
        cp = copy_gbps(nbytes)
        variants = {}
        if cols <= reg_limit:
            block = triton.next_power_of_2(cols)
            for reread in (False, True):
                variants["row in registers, " + ("read twice" if reread else "read once")] = (
                    lambda reread=reread, block=block: softmax_row_kernel[(rows,)](
                        x, x, y, cols, BLOCK=block, REREAD=reread, num_warps=_warps(block)))
        variants[f"tiled two-pass ({tile}-column tiles, 8 warps), read twice"] = (
            lambda: softmax_tiled_kernel[(rows,)](x, y, cols, TILE=tile, num_warps=8))
        times = {}
        for name, fn in variants.items():
            rec = {"what": "re-read a row", "kernel": name, "shape": [rows, cols], "row_bytes": 4 * cols,
                   "bytes": nbytes, "copy_gbps": cp}
            try:
                y.zero_()
                fn()
                ok, err = softmax_ok(y, x)
                rec["max_abs_err"] = err
                if not ok:
                    rec["error"] = f"wrong output: max |y - softmax| = {err:.3g}"
                    emit(rec)
                    continue
                if not SMOKE:
                    ms = timing.bench(fn)
                    times[name] = ms
                    g = timing.gbps(nbytes, ms)
                    rec.update(ms=round(ms, 4), gbps=round(g, 1), pct_copy=round(100 * g / cp, 1))
                    once = times.get("row in registers, read once")
                    if once and "read twice" in name:
                        rec["hidden"] = round(1 - (ms - once) / (once / 2), 3)
            except Exception as e:
                rec["error"] = f"{type(e).__name__}: {e}"[:500]
            emit(rec)


# ---------------------------------------------------------------- (e) Chapter 4 exercise 2, the taught variant

def _load_patched(rel: str, chapter: str, variant: str, name: str):
    """The reference module with a variant's patch applied (Triton needs its kernels in a file)."""
    import importlib.util
    import tempfile

    from autograder.instructor.submissions import for_chapter
    w = next(s for s in for_chapter(chapter) if s.name == variant)
    path = os.path.join(tempfile.mkdtemp(prefix="readthrough-"), f"{name}.py")
    with open(path, "w") as f:
        f.write(w.apply(read(rel)))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure_flash() -> None:
    """TFLOP/s at the throughput check's shape, next to SDPA's flash backend (its baseline, bar 0.90x)."""
    import torch.nn.functional as F

    from kernels_ref.ch04_flash_attention import flash_attention_triton as ref
    var = _load_patched("kernels_ref/ch04_flash_attention/flash_attention_triton.py", "ch04_flash_attention",
                        "variant_triton_taught_order", "flash_taught")
    B, H, T, D = (4, 32, 4096, 128) if not SMOKE else (1, 1, 200, 64)
    dt = torch.bfloat16 if not SMOKE else torch.float16  # the interpreter's bf16 tl.dot is wrong
    gen = torch.Generator(device=DEV).manual_seed(0)
    q, k, v = (torch.randn(B, H, T, D, device=DEV, dtype=dt, generator=gen) for _ in range(3))
    o = torch.empty_like(q)
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    flops = 4 * B * H * T * T * D / 2
    fns = {"reference": lambda: ref.flash_attention(q, k, v, o, True),
           "taught variant (launch-order tiles, int32 offsets, default num_stages)":
               lambda: var.flash_attention(q, k, v, o, True)}
    if not SMOKE:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        def sdpa():
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, is_causal=True)
        fns["sdpa flash"] = sdpa
    base = None
    for name, fn in fns.items():
        rec = {"what": "ch04 ex2 flash attention, causal", "kernel": name, "shape": [B, H, T, D], "dtype": str(dt)}
        try:
            if name != "sdpa flash":
                o.zero_()
                fn()
                err = float((o.float() - want).abs().max())
                rec["max_abs_err"] = err
                if not err <= 2e-2:
                    rec["error"] = f"wrong output: max |o - attention| = {err:.3g}"
                    emit(rec)
                    continue
            if not SMOKE:
                ms = timing.bench(fn)
                rec["tflops"] = round(flops / (ms * 1e-3) / 1e12, 1)
                if name == "sdpa flash":
                    base = rec["tflops"]
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:500]
        emit(rec)
    if base:
        for r in RECORDS:
            if r["what"].startswith("ch04") and "tflops" in r:
                r["x_sdpa_flash"] = round(r["tflops"] / base, 3)
        print(json.dumps({"sdpa_flash_tflops": base, "bar": "0.90x sdpa flash"}), flush=True)


def main() -> int:
    out = next((a for a in sys.argv[1:] if not a.startswith("--")), None)
    if not SMOKE and not out:
        print(__doc__)
        return 2
    t0 = datetime.datetime.now()
    head = {"gpu": torch.cuda.get_device_name() if course.GPU else "CPU smoke (nothing timed)",
            "date": t0.strftime("%Y-%m-%d"), "torch": torch.__version__, "triton": triton.__version__}
    if course.GPU:
        head["l2_bytes"] = torch.cuda.get_device_properties(0).L2_cache_size
        head["copy_gbps"] = round(timing.copy_gbps(512 * MiB), 1)  # 256 MiB read + 256 MiB written
    print(json.dumps(head), flush=True)
    for part in (measure_warp, measure_latency, measure_l2, measure_reread, measure_flash):
        part()
    head["seconds"] = round((datetime.datetime.now() - t0).total_seconds(), 1)
    head["records"] = RECORDS
    bad = [r for r in RECORDS if "error" in r]
    print(f"{len(RECORDS)} records, {len(bad)} with an error, {head['seconds']} s", flush=True)
    if out:
        with open(out, "w") as f:
            json.dump(head, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
