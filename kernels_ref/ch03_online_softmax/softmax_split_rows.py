"""Reference, fast path: softmax over long rows (more than 16384 columns) that reads x once and writes y once, each
row split over K programs that keep their chunk in registers (Chapter 3, exercise 6). Not a notebook cell: the
notebook's solution is online_softmax_triton.py (two reads of x, one write), which this file falls back to for
short rows, in Triton's interpreter, off the GPU and where a row would need more programs than the GPU has SMs.

Why: one program per row cannot hold a 131072-column row on chip (512 KiB of float32, twice an SM's register file),
so the online kernel reads x twice; its ceiling is 2/3 of copy (measured 60-73%). Here a row is cut into
K = ceil(cols / CHUNK) chunks and each chunk is one ticket:

    load the chunk once into registers (x, masked past the row's end with -inf)
    m = max(chunk), e = exp(x - m), d = sum(e)             the chunk's partial (m, d)
    publish (m, d); count it into the row's counter       release: the partial is visible before the count
    wait until the row's counter reaches K                 acquire: the other K - 1 partials are visible after
    M = max m_k, D = sum d_k exp(m_k - M)                   the row's statistics, from the K partials
    y = e * exp(m - M) / D                                  from the registers it still holds: x is not read again

The exponentials are exp2 of (x - m) * log2 e: the difference is taken first, in natural units, so a large row
(x near 1000) loses no bits to scaling x before the subtraction. A chunk whose columns are all -inf keeps m = -inf;
its exponentials use 0 as the base (no (-inf) - (-inf)), so e = d = 0 and its scale exp(-inf - M) is 0. A row that
is all -inf gives NaN, as torch.softmax and the online reference do.

Co-residency. A program that waits holds its chunk in registers and its SM slot until the K - 1 others of its row
have published; if one of them could not start until the waiter left, both would wait forever. Programs therefore
do not take the row named by their block index: each takes a ticket from an atomic counter when it is running
(ticket t = chunk t % K of row t // K), so tickets are handed out in order to programs that are already on an SM.
When a program waits on row r, every ticket before its own is held by a running program, so the only tickets of
row r that may not be taken yet are later ones; all earlier rows have all their programs running, never wait for
anything that is not running, and finish, freeing programs (or slots) for the next tickets. The chain can only
stall if the waiting programs of one row fill every slot on the GPU, i.e. if K exceeds the programs that can be
resident at once. Every SM can hold at least one program of a kernel that launches, so K <= the SM count is
enough (checked: else the fallback). Nothing relies on the order in which the hardware starts blocks. It does
assume the GPU is this kernel's while it runs: under MPS limits, or with other work holding SMs, fewer programs may
be resident than the count assumes.

The grid is persistent: about SMs x programs per SM that fit (registers, shared memory, threads: from the compiled
kernel), each looping ticket after ticket, so all programs are resident and launches cost nothing past the first.
Overestimating the fit is harmless (late blocks find no ticket and leave); underestimating only costs bandwidth.

Register budget. CHUNK / (32 * warps) values per thread are live across the wait (as float32 exponentials e).
ptxas for sm_90a, compiled here without a GPU (Triton 3.7.1; no spills in any of them): float32 8192 columns,
8 warps (32 a thread): 102 registers, so 2 programs of 256 threads an SM (64K registers, given 256 a warp at a
time) and 64 KiB of chunks on each SM; 8192 columns, 16 warps: 75 registers, 1 program; 4096 columns, 4 warps: 96,
5 programs (80 KiB); 16384 columns, 16 warps: 122, 1 program. bf16 8192, 8 warps: 99, 2 programs; 8192, 16 warps:
64, 2 programs; 16384, 16 warps: 125, 1 program (65536 registers exactly). One program an SM leaves nothing to
stream while it waits, hence the defaults (8192, 8 warps) for every dtype; they are to be tuned on the GPU.

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
a CPU. PHASE = 0, the GPU path, is the fused one. The multi-program fused path has not yet run on a GPU."""
import os

import torch
import triton
import triton.language as tl

from kernels_ref.ch03_online_softmax import online_softmax_triton as reference

SPLIT_ABOVE = 16384  # columns: shorter rows fit one program's tiles well enough; the reference takes them
CONFIGS = {torch.float32: (8192, 8), torch.float16: (8192, 8), torch.bfloat16: (8192, 8)}  # (CHUNK, warps)


@triton.jit
def split_rows_kernel(x_ptr, y_ptr, part_ptr, ws_ptr, rows, cols, x_row_stride, y_row_stride, n_programs,
                      K: tl.constexpr, KP: tl.constexpr, CHUNK: tl.constexpr, PHASE: tl.constexpr = 0):
    """Persistent: each program takes tickets (ws[0]) until none is left; ticket t is chunk t % K of row t // K."""
    tickets = rows * K
    t = tl.atomic_add(ws_ptr, 1)
    while t < tickets:
        row = t // K
        k = t - row * K
        c = k * CHUNK + tl.arange(0, CHUNK)
        mask = c < cols
        x = tl.load(x_ptr + row.to(tl.int64) * x_row_stride + c, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        m = tl.max(x, axis=0)
        e = tl.exp2((x - tl.where(m == -float("inf"), 0.0, m)) * 1.4426950408889634)  # all -inf: e = 0, no NaN
        cnt = ws_ptr + 2 + row
        if PHASE != 2:  # publish the chunk's (m, d), then count it (release: the partial first)
            tl.store(part_ptr + 2 * t, m)
            tl.store(part_ptr + 2 * t + 1, tl.sum(e, axis=0))
            tl.debug_barrier()
            tl.atomic_add(cnt, 1, sem="release")
        if PHASE != 1:
            n = tl.load(cnt, volatile=True)
            while n < K:  # the row's other programs hold earlier tickets or take the next ones: they are running
                n = tl.load(cnt, volatile=True)
            tl.atomic_add(cnt, 0, sem="acquire")  # the K partials are seen after this
            tl.debug_barrier()
            kk = tl.arange(0, KP)
            q = part_ptr + 2 * (row * K + kk)
            ms = tl.load(q, mask=kk < K, other=-float("inf"), volatile=True)
            ds = tl.load(q + 1, mask=kk < K, other=0.0, volatile=True)
            big_m = tl.max(ms, axis=0)
            big_d = tl.sum(tl.where(kk < K, ds * tl.exp2((ms - big_m) * 1.4426950408889634), 0.0), axis=0)
            scale = tl.exp2((m - big_m) * 1.4426950408889634) / big_d  # a chunk of -inf: 0; a row of -inf: NaN
            tl.store(y_ptr + row.to(tl.int64) * y_row_stride + c, (e * scale).to(y_ptr.dtype.element_ty),
                     mask=mask)
            left = tl.atomic_add(cnt, 1)  # second add: past the wait; the row's last one resets its counter
            tl.atomic_xchg(cnt, 0, mask=left == 2 * K - 1)
        t = tl.atomic_add(ws_ptr, 1)
    done = tl.atomic_add(ws_ptr + 1, 1, sem="acq_rel")  # after this program's last ticket add
    tl.atomic_xchg(ws_ptr, 0, mask=done == n_programs - 1)  # the grid's last program: counters back to 0
    tl.atomic_xchg(ws_ptr + 1, 0, mask=done == n_programs - 1)


_WORKSPACE: dict = {}  # (device, stream) -> int32 counters, zero between calls (the kernel resets them)
_FIT: dict = {}  # (device, dtype, CHUNK, warps, K) -> programs per SM


def _counters(x, rows):
    key = (x.device, torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0)
    ws = _WORKSPACE.get(key)
    if ws is None or ws.numel() < rows + 2:
        ws = torch.zeros(max(rows, 1024) + 2, dtype=torch.int32, device=x.device)
        _WORKSPACE[key] = ws
    return ws


def _sm_count(device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _programs_per_sm(args, k, chunk, warps, device) -> int:
    """How many programs of this configuration an SM holds at once (registers, shared memory, threads)."""
    key = (device, args[0].dtype, chunk, warps, k)
    if key not in _FIT:
        props = torch.cuda.get_device_properties(device)
        threads = getattr(props, "max_threads_per_multi_processor", 2048)
        fit = max(1, min(threads // (32 * warps), 32))
        try:
            kern = split_rows_kernel.warmup(*args, K=k, KP=triton.next_power_of_2(k), CHUNK=chunk, PHASE=0,
                                            num_warps=warps, grid=(1,))
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


def softmax_split_rows(x, y, chunk=None, warps=None, programs=None, phases=False):
    """softmax(x) along each row into y, each row split into chunks of `chunk` columns held in registers.
    programs: the persistent grid (default: what fits on the GPU). phases: two launches (publish; then merge and
    write, reading the chunk again), for Triton's interpreter, where a program cannot wait for another."""
    rows, cols = x.shape
    dchunk, dwarps = CONFIGS[x.dtype]
    chunk = chunk or min(dchunk, triton.next_power_of_2(cols))
    warps = warps or dwarps
    k = triton.cdiv(cols, chunk)
    part = torch.empty(rows * k * 2, dtype=torch.float32, device=x.device)
    ws = _counters(x, rows)
    args = (x, y, part, ws, rows, cols, x.stride(0), y.stride(0))
    if programs is None:
        programs = _sm_count(x.device) * _programs_per_sm(args + (1024,), k, chunk, warps, x.device)
    programs = max(1, min(programs, rows * k))
    if not phases and programs < min(k, rows * k):  # fewer programs than a row's chunks: its waits never end
        raise ValueError(f"softmax_split_rows: {programs} programs cannot hold the {k} chunks of a row at once")
    for phase in ((1, 2) if phases else (0,)):
        split_rows_kernel[(programs,)](*args, programs, K=k, KP=triton.next_power_of_2(k), CHUNK=chunk,
                                       PHASE=phase, num_warps=warps)


def splits(x) -> bool:
    """Whether online_softmax_triton takes the split path for x (else the reference's two reads)."""
    if os.environ.get("TRITON_INTERPRET") == "1" or not x.is_cuda or x.dtype not in CONFIGS:
        return False
    rows, cols = x.shape
    return cols > SPLIT_ABOVE and rows > 0 and triton.cdiv(cols, CONFIGS[x.dtype][0]) <= _sm_count(x.device)


def online_softmax_triton(x, y):
    """The exercise's contract (softmax(x) along each row into y; float32, float16 or bfloat16, rows contiguous):
    the split rows past SPLIT_ABOVE columns on a GPU, else the two-read reference."""
    if splits(x) and x.stride(1) == 1 and y.stride(1) == 1:
        softmax_split_rows(x, y)
    else:
        reference.online_softmax_triton(x, y)
