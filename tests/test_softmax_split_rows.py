"""The split-row softmax (kernels_ref/ch03_online_softmax/softmax_split_rows.py) in Triton's interpreter.

The interpreter runs programs one after another, so a program that waits for another never ends there. What runs:
the fused path with one chunk per row (K = 1: publish, count, merge and write from registers, the counters' reset)
and, for K > 1, the two-launch PHASE mode (publish; then reload, merge and write) with a persistent grid smaller
than the tickets. Graded by ch03.online_softmax_triton's quiet checks (adversarial rows, 1-column rows, a masked
tail, half precision, 3 x 32768) and against float64; so are the module's kernels without a wait (one program
per row; the two-pass kernel), which the fast reference runs in the interpreter. Not run here: the wait between
running programs, and the occupancy sizing of the grid: test_fused_split_on_the_gpu, on a GPU only (a deadlock would
hang it, so run it under `timeout`).

On a GPU the quiet checks include the timed one (1024 x 131072 float32): the fast reference must pass it there.
FUSED_K1 and PHASED are interpreter modes (a 131072-column chunk in one program; three programs, chunks of 512, two
launches) that are neither meant nor fast enough to pass a timed check: they run off the GPU only."""
import contextlib

import course  # noqa: F401  (CPU mode: the interpreter is on before any kernel is defined)
import pytest
import torch

from autograder.declare import registry
from autograder.judge.grading import run_check
from autograder.runner.local import LocalRunner
from autograder.instructor.mutate import quiet_checks
from kernels_ref.bench import fast_reference_source, namespace
from kernels_ref.ch03_online_softmax import softmax_split_rows as split

DEV = course.DEVICE
EX = registry.get("ch03.online_softmax_triton")
MOD = "kernels_ref.ch03_online_softmax.softmax_split_rows"

FUSED_K1 = f"""from {MOD} import softmax_split_rows
import triton
def online_softmax_triton(x, y):
    softmax_split_rows(x, y, chunk=triton.next_power_of_2(x.shape[1]), warps=4, programs=5)
"""
PHASED = f"""from {MOD} import softmax_split_rows
def online_softmax_triton(x, y):
    softmax_split_rows(x, y, chunk=512, warps=4, programs=3, phases=True)
"""


# The audit counts launches of the @triton.jit kernels the namespace names; the module launches its own objects
# (and the reference module's, in the fallback), so they are named here too.
KERNELS = f"""
from kernels_ref.ch03_online_softmax.online_softmax_triton import online_softmax_kernel  # noqa: E402,F811
from {MOD} import rows_kernel, split_rows_kernel, two_pass_kernel  # noqa: E402
"""


OFF_GPU = pytest.mark.skipif(course.GPU, reason="an interpreter mode: on a GPU the quiet checks include the "
                             "timed one, which it is not meant to pass")


def _grade(source, tmp):
    """The quiet checks on the source loaded in this process, as kernels_ref.bench loads a fast reference (the
    sandboxed runner lets no submission import kernels_ref): check -> its verdict's
    sentence (FAILED before a failure's)."""
    ns = namespace(EX, source + KERNELS, str(tmp))
    out = {}
    for check in quiet_checks(EX):
        v = run_check(EX, check, LocalRunner(ns), 7)
        out[check] = v.render() if v.passed else f"FAILED {v.render()}"
    return out


@pytest.mark.parametrize("name,source", [("fast reference as bench.py loads it", fast_reference_source(EX)[1]),
                                         pytest.param("fused, one chunk per row", FUSED_K1, marks=OFF_GPU),
                                         pytest.param("two launches, chunks of 512", PHASED, marks=OFF_GPU)])
def test_passes_the_exercise_quiet_checks(name, source, tmp_path, monkeypatch):
    monkeypatch.setattr(split, "CLUSTER", False)  # a CUDA kernel: the Triton audit fails it (test_softmax_cluster)
    results = _grade(source, tmp_path)
    assert results and not any(r.startswith("FAILED") for r in results.values()), results


def test_is_the_fast_reference_of_the_online_softmax():
    from kernels_ref.bench import FAST_REFERENCES
    assert FAST_REFERENCES[EX.id][1:] == (MOD, "online_softmax_triton")
    assert not split.splits(torch.zeros(2, 65536))  # on the CPU and in the interpreter: the reference


def _split(chunk, phases, hold="e"):
    return lambda x, y: split.softmax_split_rows(x, y, chunk=chunk, warps=4, programs=2, phases=phases, hold=hold)


@pytest.mark.parametrize("dtype,rows,cols,run", [
    (torch.float32, 5, 3000, _split(1024, True)),  # K = 3, the tail chunk 952 of 1024 columns
    (torch.float32, 4, 1000, _split(1024, False)),  # K = 1, fused, masked tail
    (torch.bfloat16, 3, 5000, _split(2048, True)), (torch.float16, 3, 4097, _split(4096, True)),  # K = 2, 1-column tail
    (torch.float32, 6, 777, _split(1024, False)),
    (torch.bfloat16, 3, 5000, _split(2048, True, "x")), (torch.float32, 5, 3000, _split(1024, True, "x")),  # HOLD_X
    (torch.float32, 4, 1000, _split(1024, False, "x")),
    (torch.float32, 5, 3000, lambda x, y: split.softmax_rows(x, y, warps=4)),  # the row in registers
    (torch.bfloat16, 7, 1000, lambda x, y: split.softmax_rows(x, y, warps=4, rows=4)),  # 4 rows a program, 1 short
    (torch.float16, 3, 4097, lambda x, y: split.softmax_rows(x, y, warps=8)),
    (torch.float32, 5, 3000, lambda x, y: split.softmax_two_pass(x, y, block=1024, warps=4)),  # two reads, tail 952
    (torch.bfloat16, 3, 5000, lambda x, y: split.softmax_two_pass(x, y, block=2048, warps=4)),
    (torch.float32, 4, 40000, split.online_softmax_triton)])  # the dispatch: two-pass off the GPU
def test_matches_float64(dtype, rows, cols, run):
    torch.manual_seed(cols)
    x = (torch.randn(rows, cols, device=DEV) * 3).to(dtype)
    x[0] += 900  # large: the max must be taken before the exponentials
    x[1, : cols // 2] = -float("inf")  # chunks with no finite value: m = -inf, d = 0, never NaN
    x[-1, -1] = 60  # one dominant entry in the tail chunk
    y = torch.full_like(x, float("nan"))
    run(x, y)
    want = torch.softmax(x.double(), -1)
    # float32: exp2((x - m) * log2 e) rounds the product, a relative error of |x - m| * 2^-24 (here |x - m| < 80);
    # half precision: one unit in the last place of the output (the interpreter's float32 -> bfloat16 cast truncates:
    # the online reference is as far off on these rows). atol: below float16's smallest subnormal is 0.
    rtol = {torch.float32: 1e-5, torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10}[dtype]
    atol = 2.0**-24 if dtype == torch.float16 else 1e-37
    torch.testing.assert_close(y.double(), want, rtol=rtol, atol=atol)
    assert (y[1, : cols // 2] == 0).all()


def test_counters_are_back_to_zero_after_each_call():
    x = torch.randn(4, 3000, device=DEV)
    y = torch.empty_like(x)
    for phases, chunk in ((True, 512), (False, 4096), (True, 1024)):
        split.softmax_split_rows(x, y, chunk=chunk, warps=4, programs=3, phases=phases)
        assert not split._counters(x, 4).any()
        torch.testing.assert_close(y, torch.softmax(x, -1))


@pytest.mark.parametrize("run", [lambda x, y: split.softmax_split_rows(x, y, chunk=1024, warps=4, programs=2,
                                                                        phases=True),
                                 lambda x, y: split.softmax_rows(x, y, warps=4, rows=2),
                                 lambda x, y: split.softmax_two_pass(x, y, block=512, warps=4)])
def test_a_row_of_minus_infinity_is_nan_as_in_torch(run):
    x = torch.randn(3, 2000, device=DEV)
    x[1] = -float("inf")
    y = torch.empty_like(x)
    # the interpreter's NumPy warns at (-inf) - (-inf)
    with pytest.warns(RuntimeWarning) if not course.GPU else contextlib.nullcontext():
        run(x, y)
    assert y[1].isnan().all() and torch.softmax(x, -1)[1].isnan().all()
    torch.testing.assert_close(y[[0, 2]], torch.softmax(x[[0, 2]], -1))


def test_dispatch_by_width():
    """Rows up to 16384 columns: whole in one program; up to 32768: two passes (the second from L2); longer: the
    split kernel (float32) or the long-rows kernel (half precision) on a GPU, else the two passes."""
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        wait = "split" if dtype == torch.float32 else "long_rows"
        for cols, kernel in ((1, "rows"), (4096, "rows"), (16384, "rows"), (16385, "two_pass"), (32768, "two_pass"),
                             (32769, wait if course.GPU else "two_pass")):
            assert split.config_for(torch.empty(2, cols, dtype=dtype, device=DEV))["kernel"] == kernel


def test_each_width_takes_its_own_entry():
    """The float32 entry for 8192 columns does not shadow the narrower ones (a review found 1-4096 columns on 32
    warps, one row a program)."""
    for dtype in (torch.float32, torch.bfloat16):
        for cols, want in ((1000, {"warps": 4, "rows": 4}), (2048, {"warps": 4, "rows": 2}),
                           (4096, {"warps": 4, "rows": 2}), (16384, {"warps": 16, "rows": 1})):
            cfg = split.config_for(torch.empty(2, cols, dtype=dtype, device=DEV))
            assert {k: cfg[k] for k in want} == want, (dtype, cols, cfg)
    assert split.config_for(torch.empty(2, 8192, device=DEV))["warps"] == 32
    assert split.config_for(torch.empty(2, 8192, dtype=torch.bfloat16, device=DEV))["warps"] == 8


GPU_SPLITS = [(torch.float32, 64, 131072, 16384, 4, "e"), (torch.bfloat16, 64, 131072, 16384, 4, "e"),
              (torch.bfloat16, 64, 131072, 32768, 8, "x"), (torch.float32, 64, 131072, 16384, 4, "x"),
              (torch.bfloat16, 300, 32768, 16384, 4, "e"), (torch.float16, 9, 20001, 8192, 4, "x"),
              (torch.float32, 5, 262144, 16384, 4, "e"), (torch.bfloat16, 9, 50001, 16384, 4, "e")]


def test_long_rows_parts():
    """The half-precision entry past 32768 columns: K = ceil(cols / 32768) programs a row, refused above the SMs."""
    cfg = split.CONFIGS[torch.bfloat16][-1][1]
    assert cfg["kernel"] == "long_rows" and split._parts(131072, cfg) == 4 and split._parts(262144, cfg) == 8
    assert split._parts(32769, cfg) == 2


def test_waiting_kernels_refused_above_the_sms(monkeypatch):
    """Where a row's K programs would exceed the SMs (co-residency), the dispatch takes the kernel that does not
    wait (NO_WAIT), for the long-rows entry as for the split one; below, the waiting kernel."""
    class OnAGpu:  # what config_for reads of a tensor, as a CUDA tensor would have it
        is_cuda, device = True, "cuda"

        def __init__(self, cols, dtype):
            self.shape, self.dtype = (2, cols), dtype
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    for dtype, kernel in ((torch.bfloat16, "long_rows"), (torch.float32, "split")):
        monkeypatch.setattr(split, "_sm_count", lambda device: 132)
        assert split.config_for(OnAGpu(131072, dtype))["kernel"] == kernel
        monkeypatch.setattr(split, "_sm_count", lambda device: 3)  # K = 4 (long_rows) or 8 (split) parts a row
        assert split.config_for(OnAGpu(131072, dtype)) == split.NO_WAIT


@pytest.mark.skipif(not course.GPU, reason="K programs waiting for each other: only on a GPU")
@pytest.mark.parametrize("dtype,rows,cols", [(torch.bfloat16, 300, 131072), (torch.bfloat16, 40, 262144),
                                             (torch.float16, 9, 50001), (torch.bfloat16, 7, 32769)])
def test_long_rows_dispatch_on_the_gpu(dtype, rows, cols):
    torch.manual_seed(cols)
    x = (torch.randn(rows, cols, device=DEV) * 3).to(dtype)
    x[0] += 900
    x[1, : cols // 2] = -float("inf")
    x[-1, -1] = 60
    assert split.config_for(x)["kernel"] == "long_rows"
    for _ in range(3):  # the counters reset themselves: every call alike
        y = torch.full_like(x, float("nan"))
        split.online_softmax_triton(x, y)
        torch.cuda.synchronize()
        want = torch.softmax(x.double(), -1)
        rtol = {torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10}[dtype]
        torch.testing.assert_close(y.double(), want, rtol=rtol, atol=2.0**-24 if dtype == torch.float16 else 1e-37)


@pytest.mark.skipif(not course.GPU, reason="K programs waiting for each other: only on a GPU")
@pytest.mark.parametrize("dtype,rows,cols,chunk,warps,hold", GPU_SPLITS)
def test_fused_split_on_the_gpu(dtype, rows, cols, chunk, warps, hold):
    torch.manual_seed(cols)
    x = (torch.randn(rows, cols, device=DEV) * 3).to(dtype)
    x[0] += 900
    x[1, : cols // 2] = -float("inf")
    x[-1, -1] = 60
    for i in range(3):  # the counters reset themselves: every call alike
        y = torch.full_like(x, float("nan"))
        if i == 2 and cols > split.SPLIT_ABOVE:
            assert split.splits(x)
            split.online_softmax_triton(x, y)  # the dispatch's own configuration
        else:
            split.softmax_split_rows(x, y, chunk=chunk, warps=warps, hold=hold)
        torch.cuda.synchronize()
        want = torch.softmax(x.double(), -1)
        rtol = {torch.float32: 1e-5, torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10}[dtype]
        torch.testing.assert_close(y.double(), want, rtol=rtol, atol=2.0**-24 if dtype == torch.float16 else 1e-37)
        assert not split._counters(x, rows).any()
