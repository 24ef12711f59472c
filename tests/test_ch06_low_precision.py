"""Chapter 6 (integer softmax): the declaration's integer reference and its guards, without a runner (fast).

The constants are what the chapter says they are; the reference is within one int8 step of the float64
softmax and equals the notebook's reference solution; the float detectors catch NumPy and CUDA floats."""
import math

import numpy as np
import pytest
import torch

from autograder.declare import registry
from autograder.declare.exercise import Case
from autograder.declare.exercises import ch06_low_precision as ch6
from autograder.declare.submission import notebook_part

SOLUTION = "kernels_ref/ch06_low_precision/softmax_int8.py"


def _solution():
    ns = {"np": np}
    exec(notebook_part(SOLUTION), ns)
    return ns["softmax_int8"]


def test_constants_are_the_rounded_reals():
    assert list(ch6.EXP_NEG_QUARTERS) == [round(math.exp(-2**j / 4) * 2**31) for j in range(7)]
    assert list(ch6.TAYLOR_Q31) == [round(2**31 / math.factorial(k)) for k in range(5)]
    assert (ch6.NEWTON_A, ch6.NEWTON_B) == (round(48 / 17 * 2**29), round(32 / 17 * 2**29))


@pytest.mark.parametrize("s", [2.0**-5, 0.1, 0.25, 0.7, 1.0])
def test_scale_round_trip(s):
    m, shift = ch6.scale_to_multiplier(s)
    assert 2**30 <= m < 2**31 and 1 <= shift <= 30
    assert abs(ch6.multiplier_to_scale(m, shift) / s - 1) < 2**-30


@pytest.mark.parametrize("kind,shape", [("adversarial", (24, 10)), ("adversarial", (6, 4096)), ("randn", (50, 300)),
                                        ("randn", (1, 1))])
def test_reference_equals_the_solution_and_is_within_one_step_of_float64(kind, shape):
    softmax_int8 = _solution()
    for seed in range(3):
        inputs = ch6.make_inputs(Case(shape, kind), shape, torch.Generator().manual_seed(seed), "cpu")
        ref = ch6.reference(inputs)
        x = inputs["x"].numpy()
        assert ref.dtype == np.int8 and ref.shape == shape
        assert (softmax_int8(x.view(ch6.IntOnlyArray), inputs["multiplier"], inputs["shift"]) == ref).all()
        s = ch6.multiplier_to_scale(inputs["multiplier"], inputs["shift"])
        z = s * (x.astype(np.float64) - x.max(axis=-1, keepdims=True))
        p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
        ideal = np.clip(np.rint(256 * p) - 128, -128, 127)
        assert np.abs(ideal - ref).max() <= 1


def test_a_4096_constant_row_sums_to_2_pow_31_and_still_works():
    x = np.full((1, 4096), 5, dtype=np.int8)
    out = ch6.reference({"x": torch.from_numpy(x), "multiplier": 1 << 30, "shift": 25})
    assert (out == -128).all()  # p = 1/4096: 256 p = 1/16 rounds to 0


def test_float_in_numpy_is_caught():
    x = np.zeros((2, 3), dtype=np.int8).view(ch6.IntOnlyArray)
    for bad in (lambda: np.exp(x), lambda: x / 2, lambda: x.astype(np.float32), lambda: x.astype(np.int64) * 0.5,
                lambda: np.mean(x)):
        with pytest.raises(AssertionError, match="floating point"):
            bad()
    ok = (x.astype(np.int64) << 3) >> 1
    assert ok.dtype == np.int64


def _int8_cells(kernel_src: str, extra: list | None = None):
    from autograder.declare.submission import Cell
    return [Cell("python", "import numpy as np"), *(extra or []), Cell("cuda", kernel_src)]


def test_float_in_cuda_is_caught_by_the_judge_on_every_generation():
    """The judge compiles the kernel's cell itself (never in the runner) for several GPU generations: a float
    path behind #if __CUDA_ARCH__ fails as a plain one does; a device-function cell it calls counts too."""
    pytest.importorskip("cupy")
    from autograder.judge import source_checks
    ex = registry.get("ch06.softmax_int8_cuda")
    src = notebook_part("kernels_ref/ch06_low_precision/softmax_int8.cu")
    assert source_checks.problems(ex, _int8_cells(src)) == []
    line = "s += rshift_round(exp_neg_q31(z), ACCUM_BITS);"
    assert line in src
    bad = src.replace(line, "s += (long long)(__expf((float)z / 67108864.f) * 524288.f);")
    assert "floating point in your kernel" in source_checks.problems(ex, _int8_cells(bad))[0]
    hidden = src.replace(line, "#if __CUDA_ARCH__ == 900\n" + line + "\n#else\n"
                         "s += (long long)(__expf((float)z / 67108864.f) * 524288.f);\n#endif")
    assert source_checks.problems(ex, _int8_cells(hidden))
    lines = source_checks.float_lines(source_checks.kernel_source(_int8_cells(hidden), "softmax_int8_cuda"))
    assert lines and not any(ln.endswith("(sm_90)") for ln in lines), lines  # only the other generations saw it
    from autograder.declare.submission import Cell
    helper = Cell("cuda", "__device__ long long half_of(long long v) { return (long long)((double)v * 0.5); }")
    calls = src.replace(line, line + "\n    s = half_of(s) * 2;")
    assert source_checks.problems(ex, _int8_cells(calls, [helper])), "a float in a device-function cell it calls"
    assert source_checks.problems(ex, _int8_cells(calls, [Cell("cuda", "__device__ long long half_of(long long v) "
                                                               "{ return v >> 1; }")])) == []


def test_a_kernel_the_judge_cannot_read_fails_with_a_reason():
    from autograder.declare.submission import Cell
    from autograder.judge import source_checks
    ex = registry.get("ch06.softmax_int8_cuda")
    cells = [Cell("python", "from course import cuda\nsoftmax_int8_cuda = cuda.compile(SRC)['softmax_int8_cuda']")]
    assert "must be a kernel of a %%cuda cell" in source_checks.problems(ex, cells)[0]
    src = notebook_part("kernels_ref/ch06_low_precision/softmax_int8.cu")  # the cell, then a later rebinding
    rebound = _int8_cells(src) + [Cell("python", "softmax_int8_cuda = cuda.compile_cuda(FLOATS).softmax_int8_cuda")]
    assert source_checks.problems(ex, _int8_cells(src)) == []
    assert "must be a kernel of a %%cuda cell" in source_checks.problems(ex, rebound)[0]


def test_verify_names_the_wrapped_clamp():
    ref = np.array([[127]], dtype=np.int8)
    msg = ch6.verify(np.array([[-128]], dtype=np.int8), ref, {"x": np.array([[5]], np.int8), "multiplier": 1 << 30,
                                                               "shift": 25}, Case((1, 1)))
    assert msg and "clamp" in msg[0]
