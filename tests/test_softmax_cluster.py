"""The cluster softmax (kernels_ref/ch03_online_softmax/softmax_cluster.cu and .py). On the CPU: every CONFIGS entry
compiles for sm_90 through NVRTC with no spills, the kernel uses the cluster instructions it relies on, and the
wrapper says why it will not run off a GPU. On a Hopper GPU: outputs against float64 torch.softmax, on rows of -inf,
late maxima, large offsets, widths that leave whole blocks past the row's end, for every CONFIGS entry and the
sweep's candidates' shapes of cluster sizes."""
import course  # noqa: F401
import pytest
import torch

from course import cuda
from kernels_ref.ch03_online_softmax import softmax_cluster as sc

from test_softmax_long_rows import _check, _input

ENTRIES = [(dt, cfg) for dt, table in sc.CONFIGS.items() for _, cfg in table]


OTHERS = [(torch.float32, {"cluster": 8, "threads": 128, "vec": 32}),  # the sweep's variants
          (torch.float32, {"cluster": 16, "threads": 128, "vec": 16, "one_exp": True}),
          (torch.bfloat16, {"cluster": 16, "threads": 128, "vec": 8})]
FAST = [(torch.float32, {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True, "fast": True}),  # SC_FAST
        (torch.bfloat16, {"cluster": 8, "threads": 128, "vec": 16, "fast": True}),
        (torch.bfloat16, {"cluster": 8, "threads": 128, "vec": 16, "fast": True, "min_blocks": 5}),
        (torch.bfloat16, {"cluster": 8, "threads": 128, "vec": 16, "fast": True, "min_blocks": 4}),
        (torch.bfloat16, {"cluster": 8, "threads": 256, "vec": 16, "fast": True}),
        (torch.bfloat16, {"cluster": 8, "threads": 512, "vec": 8, "fast": True})]
OTHERS += [f for f in FAST if f not in ENTRIES]


def _source(dtype, cfg) -> str:
    return sc.source(dtype == torch.bfloat16, cfg["cluster"], cfg["threads"], cfg["vec"], cfg.get("one_exp", False),
                     fast=cfg.get("fast", False), min_blocks=cfg.get("min_blocks", 0))


@pytest.mark.parametrize("dtype,cfg", ENTRIES + OTHERS, ids=lambda v: str(v).replace("torch.", ""))
def test_every_config_compiles_for_sm90_without_spills(dtype, cfg):
    # course.cuda reads the kernel's declaration to launch it (a macro between its attributes once hid the name)
    assert [k.name for k in cuda.find_kernels(_source(dtype, cfg))] == ["softmax_cluster"]
    _, log = cuda._nvrtc_compile(_source(dtype, cfg), "sm_90")
    res = cuda.parse_ptxas_report(log).get("softmax_cluster")
    if res is None and course.GPU:  # NVRTC's ptxas log can come back empty under a CUDA context (course/cuda.py)
        pytest.skip("NVRTC returned no ptxas report here; the CPU run checks the registers and spills")
    assert res.spill_stores == 0 and res.stack_bytes == 0, log
    # the part a thread holds is vec 16-byte vectors = 4 vec registers: they must fit beside the rest
    assert 4 * cfg["vec"] < res.registers <= 255


def test_the_exchange_is_through_distributed_shared_memory():
    ptx = cuda.strip_comments(open(sc.SRC).read())
    for needed in ("__cluster_dims__(CLUSTER", "barrier.cluster.arrive.release", "barrier.cluster.wait.acquire",
                   "mapa.shared::cluster", "st.shared::cluster"):
        assert needed in ptx, needed


def test_config_for_takes_the_narrowest_entry_that_holds_the_row_and_no_idle_block():
    x = torch.empty(1, 131072)
    assert sc.columns(sc.config_for(x), x.dtype) == 131072 and sc.config_for(x)["cluster"] == 8
    assert sc.config_for(torch.empty(1, 131073)) is None  # float32 past 131072: not measured, the Triton path
    b = torch.empty(1, 131073, dtype=torch.bfloat16)
    assert sc.columns(sc.config_for(b), b.dtype) >= 131073 and sc.config_for(b)["threads"] == 512
    assert sc.config_for(torch.empty(1, 1 << 22, dtype=torch.bfloat16)) is None
    for cols, blocks in ((65536, 4), (32772, 3), (16384, 1), (100000, 7)):  # float32: 16384 columns a block
        cfg = sc.config_for(torch.empty(1, cols))
        assert cfg["cluster"] == blocks and sc.columns(cfg, torch.float32) >= cols
        assert sc.columns(dict(cfg, cluster=blocks - 1), torch.float32) < cols  # one block fewer would not hold it


@pytest.mark.skipif(course.GPU, reason="CPU mode only")
def test_off_a_gpu_it_says_why_and_does_not_run():
    x = torch.randn(2, 64)
    assert sc.applies(x, torch.empty_like(x)) == "not on a GPU"
    with pytest.raises(ValueError, match="not on a GPU"):
        sc.softmax_cluster(x, torch.empty_like(x))


GPU = pytest.mark.skipif(not course.GPU or torch.cuda.get_device_capability()[0] < 9, reason="needs Hopper")


@GPU
@pytest.mark.parametrize("dtype,cfg", ENTRIES + OTHERS, ids=lambda v: str(v).replace("torch.", ""))
@pytest.mark.parametrize("width", ["full", "ragged", "short"])
def test_on_the_gpu_against_float64(dtype, cfg, width):
    full = sc.columns(cfg, dtype)
    cols = {"full": full, "ragged": full - 8 * 37, "short": 64}[width]  # short: all blocks but the first empty
    x = _input(6, cols, dtype, seed=cols)
    y = torch.full_like(x, float("nan"))
    sc.softmax_cluster(x, y, cfg)
    _check(x, y)


@GPU
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cols", [32776, 65536, 100000, 200000])
def test_the_widths_between_take_fewer_blocks_on_the_gpu(dtype, cols):
    x = _input(5, cols, dtype, seed=cols)
    y = torch.full_like(x, float("nan"))
    if sc.applies(x, y) is not None:  # float32 200000: no entry
        assert dtype == torch.float32 and cols > 131072
        return
    sc.softmax_cluster(x, y)
    _check(x, y)


@GPU
@pytest.mark.parametrize("dtype,cfg", [(torch.float32, None), (torch.bfloat16, None)] + FAST,
                         ids=lambda v: str(v).replace("torch.", ""))
def test_a_nan_in_a_part_of_minus_infinities_makes_the_row_nan(dtype, cfg):
    """fmaxf (and max.bf16x2) drop the NaN, so that part's m is -inf; its d is NaN, and the merge must not skip it.
    Row 3 is all -inf: NaN, as torch.softmax gives."""
    x = torch.randn(4, 131072, device="cuda").to(dtype)
    part = sc.columns(cfg or sc.config_for(x), dtype) // 8
    x[1, :part] = -float("inf")
    x[1, 7] = float("nan")  # in block 0's part, the rest of it -inf
    x[3] = -float("inf")
    y = torch.empty_like(x)
    sc.softmax_cluster(x, y, cfg)
    assert torch.isnan(y[1]).all() and torch.isnan(y[3]).all()
    assert not torch.isnan(y[0]).any() and not torch.isnan(y[2]).any()


@GPU
@pytest.mark.parametrize("cols", [131072, 262144])
def test_bfloat16_magnitudes_past_the_fma_exponent(cols):
    """SC_FAST's FMA exponent (x log2 e - m log2 e) loses half an ulp of m log2 e and overflows past 2.4e38, which
    bfloat16 reaches: a block (or row) whose maximum is 2^14 or more takes the exact difference. Rows of maxima 3e38,
    1e5 and -1e30, one whose first block's part is all -3e38 (that block exact, the row's output pass not), one with
    a block at 2e4, and one whose maximum is 16256, the FMA form's worst case; against float64 within bfloat16's
    tolerance (1e-2 relative)."""
    g = torch.Generator().manual_seed(cols)
    x = (torch.randn(6, cols, generator=g) * 3).to(torch.bfloat16).float()
    x[0] = 3.0e38 - x[0].abs() * 1e37  # maxima at 3e38, the rest 1e37 apart or more: one-hot where the max is
    x[1] += 1.0e5
    x[2] -= 1.0e30
    x[3, : cols // 8] = -3.0e38
    x[4, : cols // 8] = 2.0e4  # a block at 2e4 (past 2^14), the rest small: the row's maximum takes the exact path
    x[5] = 16256.0 - 64.0 * (x[5].abs() / 3).round()  # maxima just below 2^14 (bfloat16 steps of 64): the FMA form
    # at its largest error (about 1e-3 a rounded term), ties at the maximum
    x = x.to(torch.bfloat16).cuda()
    y = torch.full_like(x, float("nan"))
    sc.softmax_cluster(x, y)
    want = torch.softmax(x.double(), dim=-1)
    err = (y.double() - want).abs()
    assert torch.isfinite(y).all() and bool((err <= 1e-2 * want.abs() + 1e-6).all()), err.max().item()


@GPU
@pytest.mark.parametrize("cluster,threads,vec", [(1, 256, 8), (2, 256, 8), (4, 128, 8), (4, 512, 16)])
def test_other_cluster_sizes_on_the_gpu(cluster, threads, vec):
    cfg = {"cluster": cluster, "threads": threads, "vec": vec}
    for dtype in (torch.float32, torch.bfloat16):
        x = _input(5, sc.columns(cfg, dtype) - 8, dtype, seed=cluster)
        y = torch.full_like(x, float("nan"))
        sc.softmax_cluster(x, y, cfg)
        _check(x, y)


@GPU
@pytest.mark.parametrize("cfg", [None, OTHERS[2][1]])
def test_many_rows_on_the_gpu(cfg):
    """More rows than clusters fit at once."""
    x = torch.randn(3000, 131072, device="cuda", dtype=torch.bfloat16)
    x[::7] += 50.0
    y = torch.empty_like(x)
    sc.softmax_cluster(x, y, cfg)
    err = (y.float() - torch.softmax(x.float(), -1)).abs().max().item()
    assert err <= 2.0**-8


@GPU
def test_the_fast_reference_takes_it_and_passes_the_exercise_cases():
    """Chapter 3's fast reference runs the cluster kernel past CLUSTER_ABOVE columns on Hopper: the exercise's own
    cases (adversarial rows included) at and past that width, at full size, verified as the grader verifies."""
    from autograder.declare import registry
    from autograder.declare.exercise import Case
    from kernels_ref.ch03_online_softmax import softmax_split_rows as split
    ex = registry.get("ch03.online_softmax_triton")
    cases = [c for cs in ex.cases.values() for c in cs if c.shape[-1] > split.CLUSTER_ABOVE]
    cases += [Case((64, 131072), "adversarial", dtype="bfloat16"), Case((16, 262144), "adversarial", dtype="bfloat16"),
              Case((16, 100003), "adversarial")]  # 100003: odd columns, not 16-byte rows: the Triton path
    assert cases
    calls = []
    real = sc.softmax_cluster
    for case in cases:
        inputs = ex.make_inputs(case, case.shape, torch.Generator().manual_seed(1), "cuda")
        x = inputs["x"]
        y = torch.full_like(x, float("nan"))
        sc.softmax_cluster = lambda *a, **k: calls.append(case.shape) or real(*a, **k)
        try:
            split.online_softmax_triton(x, y)
        finally:
            sc.softmax_cluster = real
        problems = ex.verify(y, ex.reference(inputs), inputs, case)
        assert not problems, (case, problems)
    assert len(calls) == len(cases) - 1  # every case but the odd width took the cluster kernel
