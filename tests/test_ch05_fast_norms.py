"""The warp-per-row CUDA norms (kernels_ref/ch05_fused_norms/layernorm_rows.cu, rmsnorm_rows.cu), graded as
submissions by their exercises' quiet checks on the CPU execution layer: the same contract and the same launch
(one block of 256 threads per row) as the teaching kernels they stand beside in benchmarks (FAST_REFERENCES).
Their speed is a GPU question (kernels_ref.bench, kernels_ref.report)."""
import pytest

from autograder.declare import registry
from autograder.declare.exercise import TIMED_CHECKS
from autograder.judge.session import run_check
from kernels_ref.bench import FAST_REFERENCES, chapter_cells, fast_reference_source

FAST_CUDA = [ex_id for ex_id, (_, path, _) in FAST_REFERENCES.items() if path.endswith(".cu")]
CASES = [(ex_id, chk) for ex_id in FAST_CUDA for chk in registry.get(ex_id).checks if chk not in TIMED_CHECKS]


def test_both_ch05_cuda_norms_have_a_fast_reference():
    assert {"ch05.layernorm_cuda", "ch05.rmsnorm_vec_cuda"} <= set(FAST_CUDA)


@pytest.mark.parametrize("exercise_id,check", CASES)
def test_fast_reference_passes_the_quiet_checks(exercise_id, check):
    ex = registry.get(exercise_id)
    cells = chapter_cells(ex, fast_reference_source(ex)[1])
    r = run_check(exercise_id, check, cells, seed=15)
    assert r.passed, r.message


WIDTHS = {"ch05.layernorm_cuda": ("float32", (1028, 1500, 2048, 2052)),  # the 16-float4 warp path, then a block
          "ch05.rmsnorm_vec_cuda": ("bfloat16", (520, 1032, 1536, 2048, 2056))}  # 2 rows a warp (13 rows: the
# last warp has one), the 8-uint4 warp path, then a block


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    from kernels_ref.bench import namespace
    tmp = str(tmp_path_factory.mktemp("fast_norms"))
    return {ex_id: namespace(registry.get(ex_id), fast_reference_source(registry.get(ex_id))[1], tmp)
            for ex_id in WIDTHS}


def _graded(ex, ns, cols, launch=None, rows=13):
    """ex's own inputs, output buffers and verdict at (rows, cols); launch(ns, inputs, y) replaces ex.run."""
    import torch

    from autograder.declare.exercise import Case
    from autograder.runner.execute import Outputs
    case = Case((rows, cols), "adversarial", dtype=WIDTHS[ex.id][0])
    import course
    inputs = ex.make_inputs(case, (rows, cols), torch.Generator().manual_seed(cols), course.DEVICE)
    outs = Outputs(course.DEVICE)  # on a GPU the kernels take GPU tensors only
    if launch is None:
        y = ex.run(ns, inputs, outs)
    else:
        y = outs.tensor(inputs["x"].shape, inputs["x"].dtype)
        launch(ns, inputs, y)
    return ex.verify(y, ex.reference(inputs), inputs, case)


@pytest.mark.parametrize("exercise_id,cols", [(e, c) for e, (_, ws) in WIDTHS.items() for c in ws])
def test_widths_the_exercise_cases_miss(loaded, exercise_id, cols):
    """1025-2048 columns (the warp path's second register tile) and just past it: no graded case has them."""
    assert _graded(registry.get(exercise_id), loaded[exercise_id], cols) == []


@pytest.mark.parametrize("exercise_id", list(WIDTHS))
def test_a_launch_of_one_block_per_eight_rows(loaded, exercise_id):
    """The kernels also take grid (ceil(rows / 8),): each block then does 8 rows (the last one part of them)."""
    ex = registry.get(exercise_id)
    entry = ex.entry[0]

    def launch(ns, inp, y):
        rows, cols = inp["x"].shape
        extra = (inp["beta"],) if exercise_id == "ch05.layernorm_cuda" else ()
        ns[entry](((rows + 7) // 8,), (256,), (inp["x"], inp["gamma"], *extra, y, rows, cols, float(inp["eps"])))
    assert _graded(ex, loaded[exercise_id], 1024, launch, rows=21) == []


@pytest.mark.parametrize("rows,cols", [(21, 1024), (33, 520), (17, 2048), (9, 4096)])
def test_the_reports_own_grid(loaded, rows, cols):
    """kernels_ref.report times rmsnorm_rows.cu on its own grid (a block per 8 rows up to 2048 columns, one a warp;
    a block per row beyond): every row written, right, on a last group that is only partly there."""
    from kernels_ref.report import OWN_LAUNCH
    ex = registry.get("ch05.rmsnorm_vec_cuda")
    assert _graded(ex, loaded[ex.id], cols, lambda ns, inp, y: OWN_LAUNCH[ex.id](ns, inp, _Into(y)), rows=rows) == []


@pytest.mark.parametrize("rows,cols", [(21, 1024), (13, 520), (17, 2048), (9, 4096), (11, 1030), (7, 1020)])
def test_the_reports_own_grid_for_layernorm(loaded, rows, cols):
    """kernels_ref.report times layernorm_rows.cu's layernorm_narrow (a 128-thread block a row) up to 1024 float
    columns, layernorm_welford on a block per 8 rows up to 2048 (a block per row beyond, or where cols is not a
    multiple of 4): every row written, right."""
    from kernels_ref.report import OWN_LAUNCH
    ex = registry.get("ch05.layernorm_cuda")
    assert _graded(ex, loaded[ex.id], cols, lambda ns, inp, y: OWN_LAUNCH[ex.id](ns, inp, _Into(y)), rows=rows) == []


@pytest.mark.parametrize("cols,threads", [(1024, 128), (1030, 128), (1500, 128), (256, 64), (4096, 256)])
def test_layernorm_narrow_off_its_fast_path(loaded, cols, threads):
    """layernorm_narrow directly, a block a row: its float4 path (1024 on 128 threads) and the scalar loops it falls
    back to where the row is not float4-readable (1030) or does not fit blockDim.x * 2 float4 (1500, 4096)."""
    ex = registry.get("ch05.layernorm_cuda")

    def launch(ns, inp, y):
        rows, c = inp["x"].shape
        ns["layernorm_narrow"]((rows,), (threads,), (inp["x"], inp["gamma"], inp["beta"], y, rows, c,
                                                     float(inp["eps"])))
    assert _graded(ex, loaded[ex.id], cols, launch, rows=5) == []


class _Into:
    """An output factory that hands out the buffer the test grades."""

    def __init__(self, y):
        self.y = y

    def tensor(self, shape, dtype):
        assert tuple(shape) == tuple(self.y.shape) and dtype == self.y.dtype
        return self.y
