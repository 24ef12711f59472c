"""Reference, fast path of Chapter 3's exercise 6 (online_softmax_triton): softmax that reads x once and writes y
once at every width, picking a kernel by the row's width and dtype (CONFIGS). Not a notebook cell: the notebook's
solution is online_softmax_triton.py (two reads of x, one write), which this file falls back to only for what the
exercise's contract does not promise (another dtype, rows that are not contiguous).

    rows up to 32768 columns   rows_kernel: the whole row in one program's registers (as Chapter 1's kernel, which
                               keeps up to 8192 float32 columns; half precision is loaded as is, computed in float32)
    longer rows, on a GPU       split_rows_kernel: each row cut into K chunks over K programs (below); float16 and
                               bfloat16: softmax_long_rows.py's K programs a row that read their part twice, the
                               second time from L2 (faster there: see CONFIGS)
    longer rows, elsewhere      two_pass_kernel (Triton's interpreter, CPU tensors, or K above the SM count)

Why split: one program per row cannot hold a 131072-column row on chip (512 KiB of float32, twice an SM's register
file), so the online kernel reads x twice; its ceiling is 2/3 of copy (measured 60-73%). Here a row is cut into
K = ceil(cols / CHUNK) chunks and each chunk is one ticket:

    load the chunk once into registers (x, masked past the row's end with -inf)
    m = max(chunk), e = exp(x - m), d = sum(e)             the chunk's partial (m, d)
    publish (m, d); count it into the row's counter       release: the partial is visible before the count
    wait until the row's counter reaches K                 acquire: the other K - 1 partials are visible after
    M = max m_k, D = sum d_k exp(m_k - M)                   the row's statistics, from the K partials
    y = e * exp(m - M) / D                                  from the registers it still holds: x is not read again

With HOLD_X, x (in its own dtype: half the registers of float32 exponentials for float16/bfloat16) is what waits,
and e = exp(x - m) is computed a second time after the wait; still one read of x.

The exponentials are exp2 of (x - m) * log2 e: the difference is taken first, in natural units, so a large row
(x near 1000) loses no bits to scaling x before the subtraction. A chunk whose columns are all -inf keeps m = -inf;
its exponentials use 0 as the base (no (-inf) - (-inf)), so e = d = 0 and its scale exp(-inf - M) is 0. A row that
is all -inf gives NaN, as torch.softmax and the online reference do (in every kernel here).

Co-residency. A program that waits holds its chunk in registers and its SM slot until the K - 1 others of its row
have published; if one of them could not start until the waiter left, both would wait forever. Programs therefore
do not take the row named by their block index: each takes a ticket from an atomic counter when it is running
(ticket t = chunk t % K of row t // K), so tickets are handed out in order to programs that are already on an SM.
When a program waits on row r, every ticket before its own is held by a running program, so the only tickets of
row r that may not be taken yet are later ones; all earlier rows have all their programs running, never wait for
anything that is not running, and finish, freeing programs (or slots) for the next tickets. The chain can only
stall if the waiting programs of one row fill every slot on the GPU, i.e. if K exceeds the programs that can be
resident at once. Every SM can hold at least one program of a kernel that launches, so K <= the SM count is
enough (checked: else the two-pass kernel). Nothing relies on the order in which the hardware starts blocks, nor on
the grid's size (programs that are not resident yet take no ticket until they run). It does assume the GPU is this
kernel's while it runs: under MPS limits, or with other work holding SMs, fewer programs may be resident than the
count assumes.

The grid is persistent: SMs x PER_SM programs (CONFIGS), or SMs x the programs per SM that fit (registers, shared
memory, threads: from the compiled kernel) where PER_SM is not given, each looping ticket after ticket. Asking for
more than fit is harmless (late blocks find no ticket and leave); fewer only costs bandwidth.

Register budget. CHUNK / (32 * warps) values per thread are live across the wait (float32 exponentials; with
HOLD_X, x in its own dtype). ptxas for sm_90a, compiled here without a GPU (Triton 3.7.1, pointers, columns and
strides specialised as multiples of 16 as a launch on these shapes does; no spills unless said): float32 CHUNK 16384,
4 warps: 212 registers (2 programs an SM); 32768, 8 warps: 209 (1); 8192, 4 warps: 114; 8192, 8 warps: 75. bfloat16
16384, 4 warps: 173 (2 an SM); 32768, 8 warps: 254 (1); 8192, 4 warps: 96. 32768 at 4 warps spills. HOLD_X gave the
same counts (ptxas keeps the loaded half-precision values unpacked), so its gain, if any, is not registers. The rows
kernel: float32 8192 columns, 8 warps: 53; 32768, 32 warps: 51; bfloat16 32768, 32 warps: 62; 16 warps: 128.
Measured on an H100 (archived run gpu_2026-11-26_s7/split_diag.log, % of copy, HOLD e): fewer warps and bigger
chunks win: float32 131072 columns, CHUNK 16384, 4 warps, 2 per SM 87.4% (8 warps 81.3%, 16 warps 65.5%; CHUNK
8192 at its best 75.8%); bfloat16 131072, 16384, 4 warps, 4 per SM 73.1%; bfloat16 32768 (K = 2) 76.8%. Hence
CONFIGS' split entries. HOLD_X, the rows kernel and the two-pass kernel were then timed by
benchmarks/softmax_fast_sweep.py on an H100 (the same run's softmax_sweep.json; the numbers beside CONFIGS).

Counters, per call. ws (int32, cached per device and stream, zero between calls) holds the ticket counter ws[0],
an exit counter ws[1] and one counter per row ws[2 + row]. They reset themselves, so no memset is launched:
each program of a row adds 1 when it publishes and 1 more after it has read the partials; the one whose second
add returns 2K - 1 (every program of the row has passed its wait) sets the row's counter back to 0. A program that
finds no ticket adds 1 to the exit counter (acq_rel, after its last ticket add); the last of the grid's programs
sets both back to 0. The partials (rows x K x (m, d), float32) are written before they are read in every call,
so they need no reset. Two streams get two counter sets; calls on one stream are ordered by the stream.

Triton's interpreter runs programs one after another, so a wait for another program never ends there: K = 1
(CHUNK >= cols) runs the real path; for K > 1, PHASE = 1 then PHASE = 2 (two launches: publish, then reload the
chunk, wait (already satisfied), merge and write) checks the tickets, the tail mask, the merge and the counters on
a CPU. PHASE = 0, the GPU path, is the fused one; it ran on an H100 (the sweep above, exact results, no hang)."""
import os

import torch
import triton
import triton.language as tl

from kernels_ref.ch03_online_softmax import online_softmax_triton as reference
from kernels_ref.ch03_online_softmax import softmax_cluster as cluster
from kernels_ref.ch03_online_softmax import softmax_long_rows as long_rows
from kernels_ref.ch03_online_softmax.softmax_long_rows import publish, wait_partials

LOG2E = 1.4426950408889634
# CONFIGS: per dtype, (widest row, config) in order of width; a row takes the first entry at least as wide as itself.
# kernel "rows": ROWS rows per program, each whole in registers (x read once); "two_pass": one program per row,
# BLOCK-column tiles, pass 1 a scalar online (m, d), pass 2 reads the row again (from L2, if it stayed there);
# "split": the split-row kernel below, CHUNK columns per ticket, PER_SM programs per SM, HOLD "e" (the float32
# exponentials wait in registers) or "x" (x in its own dtype waits; the exponentials are recomputed after).
# Measured on an H100 80GB HBM3, side by side in one process (archived run gpu_2026-11-26_s7/softmax_sweep.json,
# course.timing.bench, % of a copy measured in the same run; every output checked against torch.softmax first):
#   float32 8192: rows, 32 warps 99.3% (8 warps 98.9, Chapter 1's kernel 98.7, Liger-Kernel 98.8)
#   bfloat16 4096: rows, 4 warps, 2 rows a program 96.3% (1 row, 8 warps 95.9; Liger-Kernel 95.6)
#   bfloat16 32768: two_pass, BLOCK 16384, 16 warps 98.4% (the row is 64 KiB: its second read comes from L2;
#     rows, 16 warps 96.6; split 76.6; Liger-Kernel 93.6). CONFIGS takes 8 warps: see _MID.
#   float32 131072: split, CHUNK 16384, 4 warps, 3 per SM 88.0% (2 per SM 87.1; HOLD x 87.4; the two-read
#     reference 64.3; two_pass 65.5)
#   bfloat16 131072: split, CHUNK 16384, 4 warps, 4 per SM, HOLD x 73.4% (HOLD e 73.3; two_pass 67.1; 64.4 for
#     the two-read reference). Short of 90%: a 256 KiB row is too long for L2 to keep between passes and, split,
#     each program waits for its row's others with its chunk in registers.
# Widths between the measured ones take the neighbouring entries' choice (not measured: 1024, 2048, 16384).
# benchmarks/softmax_fast_sweep.py times the candidates; its records carry these dicts ("config") to copy here.
_ROWS = ((1024, {"kernel": "rows", "warps": 4, "rows": 4}), (2048, {"kernel": "rows", "warps": 4, "rows": 2}),
         (4096, {"kernel": "rows", "warps": 4, "rows": 2}), (8192, {"kernel": "rows", "warps": 8, "rows": 1}),
         (16384, {"kernel": "rows", "warps": 16, "rows": 1}))
# float32 rows of 4097-8192 columns: 32 warps measured fastest at 8192 (narrower rows keep _ROWS' entries)
_F32 = tuple((w, {"kernel": "rows", "warps": 32, "rows": 1} if w == 8192 else c) for w, c in _ROWS)
# bfloat16 32768 on an H200 (archived run gpu_2026-11-26_s10/a/fast.json): BLOCK 16384 with 16 warps 81.3%, with 8
# warps 96.1%; on an H100 the same day (gpu_2026-11-26_s10/c) 98.4 and 97.7%. One table serves both: 8 warps.
_MID = ((32768, {"kernel": "two_pass", "block": 16384, "warps": 8}),)
# Half precision past 32768 columns: softmax_long_rows.py's kernel, "long_rows", in place of "split": each row cut
# into parts of PART columns (K = ceil(cols / PART) programs a row), two reads of the part with the second from L2,
# nothing held in registers across the wait, 3 programs of 8 warps an SM. bfloat16 131072: 79.1, 78.9, 78.8, 78.5%
# in four runs on H100s (archived runs gpu_2026-11-26_s8/sweeps, gpu_2026-11-26_s8/rerun, gpu_2026-11-26_s9/b,
# gpu_2026-11-26_s9/c, each softmax_long_rows_sweep.json) against 73.2-73.4% for the split kernel in the same runs;
# 262144: 73.1, 73.0, 73.6, 73.4% against 70.4-70.7%. float32 stays on "split" (87.2-87.7% there against 84.8-85.3%
# for the best long_rows).
# float16 takes bfloat16's choice (same element size; not measured).
_LONG_HALF = ((None, {"kernel": "long_rows", "part": 32768, "block": 8192, "warps": 8, "per_sm": 3}),)
CONFIGS = {
    torch.float32: _F32 + _MID + ((None, {"kernel": "split", "chunk": 16384, "warps": 4, "per_sm": 3,
                                          "hold": "e"}),),
    torch.float16: _ROWS + _MID + _LONG_HALF,
    torch.bfloat16: _ROWS + _MID + _LONG_HALF,
}
WAITS = ("split", "long_rows")  # kernels whose programs wait for each other (GPU only, K <= SMs)
NO_WAIT = {"kernel": "two_pass", "block": 4096, "warps": 8}  # where the split kernel may not run (see splits)
SPLIT_ABOVE = 32768  # columns: the split kernel takes longer rows (with CONFIGS as they are)
# Columns past which Hopper takes the cluster kernel (benchmarks/softmax_cluster_sweep.py, H100, archived run
# gpu_2026-11-27_s11/a, b and l): it led at the widths measured past 32768, 131072 (float32 and bfloat16) and 262144
# (bfloat16), all in gpu_2026-11-27_s11/l: float32 131072 99.7-100.1% of copy against 79.3 for CONFIGS' choice;
# bfloat16 131072 96.9-97.0 against 78.2; bfloat16 262144 88.5 against 73.5. At 32768 and below CONFIGS' kernels
# stayed ahead (the kernel's first version, gpu_2026-11-27_s11/a: bfloat16 32768 97.6 against 91.9; float32 8192
# 99.3 against 96.2; bfloat16 4096 96.0 against 91.1). Widths between are not timed (softmax_cluster.config_for
# gives them only as many blocks as they fill);
# float32 past 131072 has no cluster entry and stays on the Triton path.
CLUSTER_ABOVE = 32768
# The cluster kernel is CUDA: the Triton exercise's audit (no Triton kernel launched) rightly fails it, so
# tests/test_softmax_split_rows.py grades the Triton paths with this off, and tests/test_softmax_cluster.py checks
# the cluster path on the exercise's own cases.
CLUSTER = True


@triton.jit
def rows_kernel(x_ptr, y_ptr, rows, cols, x_row_stride, y_row_stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """ROWS whole rows per program in registers: max, exp2, sum, scale; x read once, y written once."""
    c = tl.arange(0, BLOCK)
    if ROWS == 1:
        row = tl.program_id(0).to(tl.int64)
        mask = c < cols
        x = tl.load(x_ptr + row * x_row_stride + c, mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)  # a row of -inf: NaN, as torch.softmax
        y = e * (1.0 / tl.sum(e, axis=0))
        tl.store(y_ptr + row * y_row_stride + c, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        r = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
        mask = (r[:, None] < rows) & (c[None, :] < cols)
        x = tl.load(x_ptr + r[:, None] * x_row_stride + c[None, :], mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.exp2((x - tl.max(x, axis=1)[:, None]) * 1.4426950408889634)
        y = e * (1.0 / tl.sum(e, axis=1))[:, None]
        tl.store(y_ptr + r[:, None] * y_row_stride + c[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def two_pass_kernel(x_ptr, y_ptr, cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    """One program per row. Pass 1: a scalar online (m, d), one exponential per element; pass 2 reads the row again
    (hoping to find it in L2: evict_last in pass 1) and writes."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    m = -float("inf")
    d = 0.0
    for start in range(0, cols, BLOCK):
        c = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + c, mask=c < cols, other=-float("inf"), eviction_policy="evict_last").to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        base = tl.where(m_new == -float("inf"), 0.0, m_new)  # nothing finite yet: no (-inf) - (-inf)
        d = d * tl.exp2((m - base) * 1.4426950408889634) + tl.sum(tl.exp2((x - base) * 1.4426950408889634), axis=0)
        m = m_new
    inv = 1.0 / d  # a row of -inf: d = 0, y = 0 * inf = NaN, as torch.softmax
    base = tl.where(m == -float("inf"), 0.0, m)
    for start in range(0, cols, BLOCK):
        c = start + tl.arange(0, BLOCK)
        mask = c < cols
        x = tl.load(x_row + c, mask=mask, other=-float("inf"), eviction_policy="evict_first").to(tl.float32)
        tl.store(y_row + c, (tl.exp2((x - base) * 1.4426950408889634) * inv).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def split_rows_kernel(x_ptr, y_ptr, part_ptr, ws_ptr, rows, cols, x_row_stride, y_row_stride, n_programs,
                      K: tl.constexpr, KP: tl.constexpr, CHUNK: tl.constexpr, PHASE: tl.constexpr = 0,
                      HOLD_X: tl.constexpr = False):
    """Persistent: each program takes tickets (ws[0]) until none is left; ticket t is chunk t % K of row t // K.
    HOLD_X: x (its own dtype) waits in registers and the exponentials are computed again after the wait."""
    tickets = rows * K
    t = tl.atomic_add(ws_ptr, 1)
    while t < tickets:
        row = t // K
        k = t - row * K
        c = k * CHUNK + tl.arange(0, CHUNK)
        mask = c < cols
        xr = tl.load(x_ptr + row.to(tl.int64) * x_row_stride + c, mask=mask, other=-float("inf"))
        if HOLD_X:  # the max is exact in any dtype: no float32 copy of the chunk needs to be live at once
            m = tl.max(xr, axis=0).to(tl.float32)
        else:
            m = tl.max(xr.to(tl.float32), axis=0)
        x = xr.to(tl.float32)
        base = tl.where(m == -float("inf"), 0.0, m)  # all -inf: e = 0, no NaN
        e = tl.exp2((x - base) * 1.4426950408889634)
        cnt = ws_ptr + 2 + row
        if PHASE != 2:  # publish the chunk's (m, d), then count it (release: the partial first)
            publish(part_ptr, t, cnt, m, tl.sum(e, axis=0))
        if PHASE != 1:  # the row's other programs hold earlier tickets or take the next ones: they are running
            ms, ds = wait_partials(part_ptr, cnt, row, K, KP)
            kk = tl.arange(0, KP)
            big_m = tl.max(ms, axis=0)
            big_d = tl.sum(tl.where(kk < K, ds * tl.exp2((ms - big_m) * 1.4426950408889634), 0.0), axis=0)
            scale = tl.exp2((m - big_m) * 1.4426950408889634) / big_d  # a chunk of -inf: 0; a row of -inf: NaN
            if HOLD_X:
                e = tl.exp2((xr.to(tl.float32) - base) * 1.4426950408889634)
            tl.store(y_ptr + row.to(tl.int64) * y_row_stride + c, (e * scale).to(y_ptr.dtype.element_ty),
                     mask=mask)
            left = tl.atomic_add(cnt, 1)  # second add: past the wait; the row's last one resets its counter
            tl.atomic_xchg(cnt, 0, mask=left == 2 * K - 1)
        t = tl.atomic_add(ws_ptr, 1)
    done = tl.atomic_add(ws_ptr + 1, 1, sem="acq_rel")  # after this program's last ticket add
    tl.atomic_xchg(ws_ptr, 0, mask=done == n_programs - 1)  # the grid's last program: counters back to 0
    tl.atomic_xchg(ws_ptr + 1, 0, mask=done == n_programs - 1)


_WORKSPACE: dict = {}  # (device, stream) -> int32 counters, zero between calls (the kernel resets them)
_FIT: dict = {}  # (device, dtype, CHUNK, warps, K, HOLD_X) -> programs per SM


def _counters(x, rows):
    key = (x.device, torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0)
    ws = _WORKSPACE.get(key)
    if ws is None or ws.numel() < rows + 2:
        ws = torch.zeros(max(rows, 1024) + 2, dtype=torch.int32, device=x.device)
        _WORKSPACE[key] = ws
    return ws


def _sm_count(device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _programs_per_sm(args, k, chunk, warps, device, hold_x=False) -> int:
    """How many programs of this configuration an SM holds at once (registers, shared memory, threads)."""
    key = (device, args[0].dtype, chunk, warps, k, hold_x)
    if key not in _FIT:
        props = torch.cuda.get_device_properties(device)
        threads = getattr(props, "max_threads_per_multi_processor", 2048)
        fit = max(1, min(threads // (32 * warps), 32))
        try:
            kern = split_rows_kernel.warmup(*args, K=k, KP=triton.next_power_of_2(k), CHUNK=chunk, PHASE=0,
                                            HOLD_X=hold_x, num_warps=warps, grid=(1,))
            kern._init_handles()
            regs = getattr(props, "regs_per_multiprocessor", 65536)
            per_warp = -(-kern.n_regs * 32 // 256) * 256  # registers are given to a warp 256 at a time
            fit = min(fit, regs // (per_warp * warps))
            shared = kern.metadata.shared
            if shared:
                fit = min(fit, getattr(props, "shared_memory_per_multiprocessor", 233472) // shared)
        except Exception:  # noqa: BLE001  (an API that moved: the thread limit is an overestimate, which is safe)
            pass
        _FIT[key] = max(1, fit)
    return _FIT[key]


def softmax_split_rows(x, y, chunk=None, warps=None, programs=None, phases=False, hold="e", per_sm=None):
    """softmax(x) along each row into y, each row split into chunks of `chunk` columns held in registers.
    programs: the persistent grid (default: SMs x per_sm, or SMs x what fits when per_sm is None). hold: "e" (the
    exponentials wait, float32) or "x" (x waits in its own dtype; the exponentials are recomputed after the wait).
    phases: two launches (publish; then merge and write, reading the chunk again), for Triton's interpreter, where
    a program cannot wait for another."""
    rows, cols = x.shape
    default = CONFIGS[x.dtype][-1][1]
    chunk = chunk or min(default["chunk"], triton.next_power_of_2(cols))
    warps = warps or default["warps"]
    hold_x = hold == "x"
    k = triton.cdiv(cols, chunk)
    part = torch.empty(rows * k * 2, dtype=torch.float32, device=x.device)
    ws = _counters(x, rows)
    args = (x, y, part, ws, rows, cols, x.stride(0), y.stride(0))
    if programs is None:
        fit = per_sm or _programs_per_sm(args + (1024,), k, chunk, warps, x.device, hold_x)
        programs = _sm_count(x.device) * fit
    programs = max(1, min(programs, rows * k))
    if not phases and programs < min(k, rows * k):  # fewer programs than a row's chunks: its waits never end
        raise ValueError(f"softmax_split_rows: {programs} programs cannot hold the {k} chunks of a row at once")
    for phase in ((1, 2) if phases else (0,)):
        split_rows_kernel[(programs,)](*args, programs, K=k, KP=triton.next_power_of_2(k), CHUNK=chunk,
                                       PHASE=phase, HOLD_X=hold_x, num_warps=warps)


def softmax_rows(x, y, warps=8, rows=1):
    """Each row whole in one program's registers (`rows` rows per program): x read once, y written once."""
    n, cols = x.shape
    block = triton.next_power_of_2(cols)
    rows_kernel[(triton.cdiv(n, rows),)](x, y, n, cols, x.stride(0), y.stride(0), ROWS=rows, BLOCK=block,
                                         num_warps=warps)


def softmax_two_pass(x, y, block=4096, warps=8):
    """One program per row, two reads of x (the second from L2 where the row stayed there), one write."""
    n, cols = x.shape
    block = min(block, triton.next_power_of_2(cols))
    two_pass_kernel[(n,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block, num_warps=warps)


def config_for(x) -> dict:
    """The CONFIGS entry that online_softmax_triton runs for x (NO_WAIT where the split kernel may not run)."""
    cols = x.shape[1]
    cfg = next(c for widest, c in CONFIGS[x.dtype] if widest is None or cols <= widest)
    if cfg["kernel"] in WAITS and not _split_allowed(x, cfg):
        return NO_WAIT
    return cfg


def _split_allowed(x, cfg) -> bool:
    """The split kernel's programs wait for each other: only on a GPU (not in the interpreter, which runs programs
    one after another), and only where a row's chunks are no more than the SMs (co-residency, see the docstring)."""
    if os.environ.get("TRITON_INTERPRET") == "1" or not x.is_cuda:
        return False
    rows, cols = x.shape
    return rows > 0 and _parts(cols, cfg) <= _sm_count(x.device)


def _parts(cols, cfg) -> int:
    """K, the programs that share a row (and wait for each other) under cfg."""
    if cfg["kernel"] == "long_rows":
        return triton.cdiv(cols, cfg["part"])
    return triton.cdiv(cols, min(cfg["chunk"], triton.next_power_of_2(cols)))


def run_config(x, y, cfg: dict):
    """softmax(x) into y with one CONFIGS-style config (the sweep calls this too)."""
    if cfg["kernel"] == "rows":
        softmax_rows(x, y, warps=cfg["warps"], rows=cfg.get("rows", 1))
    elif cfg["kernel"] == "two_pass":
        softmax_two_pass(x, y, block=cfg["block"], warps=cfg["warps"])
    elif cfg["kernel"] == "long_rows":
        if not _split_allowed(x, cfg):
            raise ValueError(f"softmax_long_rows: {cfg} may not run on {tuple(x.shape)} here (see _split_allowed)")
        long_rows.softmax_long_rows(x, y, block=cfg["block"], warps=cfg["warps"], per_sm=cfg["per_sm"],
                                    k=_parts(x.shape[1], cfg))
    elif cfg["kernel"] == "split":
        if not _split_allowed(x, cfg):
            raise ValueError(f"softmax_split_rows: {cfg} may not run on {tuple(x.shape)} here (see _split_allowed)")
        softmax_split_rows(x, y, chunk=min(cfg["chunk"], triton.next_power_of_2(x.shape[1])), warps=cfg["warps"],
                           per_sm=cfg.get("per_sm"), hold=cfg.get("hold", "e"))
    else:
        raise ValueError(f"unknown kernel in {cfg}")


def splits(x) -> bool:
    """Whether online_softmax_triton takes the split path for x."""
    return x.dtype in CONFIGS and x.dim() == 2 and x.shape[0] > 0 and config_for(x)["kernel"] in WAITS


def online_softmax_triton(x, y):
    """The exercise's contract (softmax(x) along each row into y; float32, float16 or bfloat16, rows contiguous):
    rows of more than CLUSTER_ABOVE columns on Hopper, float32 or bfloat16: softmax_cluster.cu (x read once, the
    row held by a thread-block cluster); else the kernel and configuration CONFIGS names for the row's width and
    dtype; the two-read reference for anything else (a dtype or a layout the contract does not promise)."""
    if CLUSTER and x.dim() == 2 and x.shape[1] > CLUSTER_ABOVE and cluster.applies(x, y) is None:
        cluster.softmax_cluster(x, y)
    elif x.dtype in CONFIGS and x.shape[0] > 0 and x.shape[1] > 0 and x.stride(1) == 1 and y.stride(1) == 1:
        run_config(x, y, config_for(x))
    else:
        reference.online_softmax_triton(x, y)
