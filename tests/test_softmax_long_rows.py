"""The long-row softmax candidates (kernels_ref/ch03_online_softmax/softmax_long_rows.py) in Triton's interpreter,
against float64.

What runs here: the persistent two-pass kernel (k = 1: a grid smaller than the rows, each program looping over
rows) with and without the cache hints, reverse pass 2 and pipelined pass 1; the split kernel (k > 1) in its
two-launch PHASE mode (pass 1 and publish; then merge and pass 2), with fewer programs than tickets and parts
past the row's end. Not run here: the wait between running programs (k > 1, PHASE 0), which needs a GPU:
test_fused_split_on_the_gpu (under `timeout`: a deadlock would hang it)."""
import course  # noqa: F401  (CPU mode: the interpreter is on before any kernel is defined)
import pytest
import torch

from kernels_ref.ch03_online_softmax import softmax_long_rows as lr

DEV = course.DEVICE
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the interpreter's numpy on rows of -inf
TOL = {torch.float32: 2e-6, torch.bfloat16: 2.0**-8, torch.float16: 2.0**-10}


def _input(rows, cols, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g) * 3
    x[1] = -float("inf")  # a row of -inf: NaN, as torch.softmax
    x[2, : cols // 2] = -float("inf")  # the first half -inf: whole blocks and parts of -inf before finite ones
    x[3, cols - 7] = 80.0  # a dominant entry near the end (the max arrives late)
    x[4] += 1000.0  # large values: the difference is taken before scaling
    x[0, :: max(1, cols // 5)] = -float("inf")  # scattered -inf
    return x.to(dtype).to(DEV)


def _check(x, y):
    x, y = x.cpu(), y.cpu()
    want = torch.softmax(x.double(), dim=-1)
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(y), nan), "NaN where torch.softmax has none, or none where it has"
    err = (y.double() - want).abs()[~nan].max().item()
    rel = TOL[x.dtype] * max(1.0, want[~nan].abs().max().item())
    assert err <= rel, f"max error {err:.3g}"


CASES = [  # (dtype, cols, kwargs): small grids, so every program loops over several rows or tickets
    (torch.float32, 3000, dict(block=1024, warps=4, programs=2)),
    (torch.bfloat16, 20001, dict(block=4096, warps=4, programs=3, reverse=True)),
    (torch.float16, 8192, dict(block=2048, warps=4, programs=2, hints=False, stages=2)),
    (torch.float32, 5000, dict(block=8192, warps=8, programs=0)),  # one program per row; BLOCK above the row
    (torch.float32, 3000, dict(block=512, warps=4, programs=3, k=4, phases=True)),  # part 3 past the row's end
    (torch.bfloat16, 20001, dict(block=2048, warps=4, programs=2, k=3, phases=True, reverse=True)),
    (torch.float16, 9000, dict(block=1024, warps=4, programs=0, k=2, phases=True, hints=False)),
]


@pytest.mark.parametrize("dtype,cols,kw", CASES, ids=[f"{str(d)[6:]}-{c}-{i}" for i, (d, c, _) in enumerate(CASES)])
def test_matches_float64(dtype, cols, kw):
    x = _input(5, cols, dtype, cols)
    y = torch.full_like(x, float("nan"))
    lr.softmax_long_rows(x, y, **kw)
    _check(x, y)
    if kw.get("k", 1) > 1:  # the counters are back to 0 for the next call
        assert not lr._counters(x, 5).any()
        y2 = torch.empty_like(x)
        lr.softmax_long_rows(x, y2, **kw)
        assert torch.equal(torch.isnan(y2), torch.isnan(y)) and torch.equal(y2.nan_to_num(), y.nan_to_num())


CHUNK_CASES = [  # (dtype, cols, kwargs) for chunks_kernel: one ticket per program, a compile-time chunk
    (torch.float32, 3000, dict(chunk=1024, block=512, warps=4, phases=True)),  # 3 chunks, the last one partial
    (torch.bfloat16, 20001, dict(chunk=8192, block=4096, warps=4, phases=True)),
    (torch.float16, 9000, dict(chunk=4096, block=1024, warps=4, phases=True, hints=False)),
    (torch.float32, 5000, dict(chunk=8192, block=8192, warps=8)),  # one chunk a row: no wait, the GPU's path
    (torch.bfloat16, 20001, dict(chunk=8192, block=4096, warps=4, phases=True, fresh=True)),
]


@pytest.mark.parametrize("dtype,cols,kw", CHUNK_CASES,
                         ids=[f"{str(d)[6:]}-{c}-{i}" for i, (d, c, _) in enumerate(CHUNK_CASES)])
def test_chunks_match_float64(dtype, cols, kw):
    x = _input(5, cols, dtype, cols + 1)
    for _ in range(2):  # the second call finds the counters back at 0
        y = torch.full_like(x, float("nan"))
        lr.softmax_chunks(x, y, **kw)
        _check(x, y)
        if not kw.get("fresh"):  # (fresh: a zeroed buffer of its own each call)
            assert not lr._counters(x, 5).any()


def test_chunks_prescaled():
    """PRESCALE (cross-entropy's arithmetic, a speed experiment): rows of -inf, blocks of -inf before finite ones
    (a reviewer found those gave NaN before the guard), a late maximum; bfloat16 (scaling x first costs float32
    bits on large x: not within float32's tolerance, by design)."""
    x = _input(5, 20001, torch.bfloat16, 3)
    y = torch.full_like(x, float("nan"))
    lr.softmax_chunks(x, y, chunk=8192, block=4096, warps=4, phases=True, prescale=True)
    _check(x, y)


def test_strided_rows_and_run_config():
    big = _input(5, 6000, torch.float32, 1)
    x, y = big[:, :4000], torch.empty(5, 6000, device=DEV)[:, :4000]  # row strides larger than the row
    lr.run_config(x, y, {"kernel": "long_rows", "k": 1, "block": 1024, "warps": 4, "programs": 2})
    _check(x, y)


def test_split_refuses_to_wait_off_the_gpu():
    x = torch.randn(2, 4096)
    if not course.GPU:  # (on a GPU the same call would run)
        with pytest.raises(ValueError):
            lr.softmax_long_rows(x, torch.empty_like(x), block=1024, k=2)


def test_in_flight_bytes():
    x = torch.empty(1024, 131072, dtype=torch.bfloat16)
    assert lr.in_flight_bytes(x, {"block": 16384, "per_sm": 1}, 132) == 132 * 131072 * 2
    assert lr.in_flight_bytes(x, {"block": 8192, "per_sm": 2, "k": 4}, 132) == 264 * 32768 * 2


@pytest.mark.skipif(not course.GPU, reason="programs that wait for each other: a GPU only")
def test_fused_split_on_the_gpu():
    for dtype in (torch.float32, torch.bfloat16):
        x = _input(40, 131072, dtype, 0)
        for k, per_sm in ((2, 1), (4, 2), (8, 2)):
            y = torch.empty_like(x)
            lr.softmax_long_rows(x, y, block=8192, warps=8, per_sm=per_sm, k=k)
            _check(x, y)
        for chunk in (16384, 32768):
            y = torch.empty_like(x)
            lr.softmax_chunks(x, y, chunk=chunk, block=8192, warps=8)
            _check(x, y)


_PTX_CHECK = r"""
import re, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from kernels_ref.ch03_online_softmax import softmax_long_rows as lr
const = {"K": 4, "KP": 4, "BLOCK": 8192, "HINTS": True, "REVERSE": False, "STAGES": 1, "PHASE": 0}
sig = {n: "constexpr" if n in const else {"x_ptr": "*bf16", "y_ptr": "*bf16", "part_ptr": "*fp32",
                                           "ws_ptr": "*i32"}.get(n, "i32") for n in lr.long_rows_kernel.arg_names}
ptx = triton.compile(ASTSource(lr.long_rows_kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                     options={"num_warps": 8}).asm["ptx"]
print(len(re.findall(r"(ld|atom)\.global\.gpu\.acquire", ptx)),
      len(re.findall(r"(atom|red)\.global\.gpu\.release", ptx)))
"""


def test_the_wait_compiles_to_an_acquire(tmp_path):
    """wait_partials' acquire must reach the PTX (Triton drops an atomic whose result is unused, which would
    leave only the volatile loads' order), and publish's release too. Compiled for sm_90 without
    a GPU, in a child process with the interpreter off."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TRITON_INTERPRET="0", PYTHONPATH=os.getcwd(), TRITON_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _PTX_CHECK], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    acquire, release = map(int, out.stdout.split()[-2:])
    assert acquire >= 1 and release >= 1, out.stdout
