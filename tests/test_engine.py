"""The grading engine: tolerances, poisoning, guards, audit, seeds, submissions, isolation."""
import textwrap

import numpy as np
import pytest
import torch

from autograder.declare import registry
from autograder.declare.exercises import ch01_softmax as sm
from autograder.runner.execute import Outputs, audit
from autograder.judge.grading import Failure, run_check
from autograder.runner.local import LocalRunner
from autograder.judge.session import run_check as run_isolated
from autograder.declare.submission import Cell, MissingName, cells_from_namespace, load
from autograder.judge.verdict import Kind

EX = registry.get("ch01.safe_softmax")


def inputs(kind="adversarial", shape=(10, 37), seed=0):
    gen = torch.Generator().manual_seed(seed)
    return sm.make_inputs(sm.Case(shape, kind), shape, gen, "cpu")


def test_adversarial_rows_break_a_naive_softmax():
    x = inputs()["x"].numpy().astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    assert np.isnan(naive).any()  # the "large" and "small" rows
    assert np.isinf(x).any() and np.isfinite(x).any(axis=-1).all()  # -inf entries, never a full row


def test_reference_output_passes_and_zero_fails():
    inp = inputs()
    ref = sm.reference(inp)
    case = sm.Case((10, 37), "adversarial")
    assert sm.verify(ref.float(), ref, inp, case) == []
    assert sm.verify(torch.zeros_like(ref, dtype=torch.float32), ref, inp, case)


def test_half_precision_is_rejected():
    inp = inputs("randn", (8, 4096))
    ref = sm.reference(inp)
    fp16 = ref.half().float()
    assert sm.verify(fp16, ref, inp, sm.Case((8, 4096)))


def test_unwritten_elements_are_nan_and_fail():
    out = Outputs("cpu").tensor((4, 5), torch.float32)
    assert torch.isnan(out).all()
    inp = inputs("randn", (4, 5))
    ref = sm.reference(inp)
    out[:, :4] = ref[:, :4].float()
    msg = sm.verify(out, ref, inp, sm.Case((4, 5)))[0]
    assert "NaN" in msg and "never" in msg


def test_guard_zones_catch_out_of_bounds_writes():
    outs = Outputs("cpu")
    t = outs.tensor((3, 3), torch.float32)
    outs.check_guards()
    t.view(-1).as_strided((10,), (1,))[9] = 0.0  # one past the end
    with pytest.raises(Failure, match="out-of-bounds write"):
        outs.check_guards()


def test_audit_catches_torch_compute():
    x = torch.randn(4, 4)
    with pytest.raises(Failure, match="computed with PyTorch"):
        audit(EX, {}, lambda: torch.softmax(x, -1))
    audit(EX, {}, lambda: torch.empty(3).copy_(torch.zeros(3)))  # allocation and copies are fine


def test_seeds_make_fresh_inputs():
    a, b, c = inputs(seed=1)["x"], inputs(seed=1)["x"], inputs(seed=2)["x"]
    assert torch.equal(a, b) and not torch.equal(a, c)


def _ns(src):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        return load([Cell("python", textwrap.dedent(src))], d)


def test_engine_grades_numpy_submissions():
    good = _ns("""
        def safe_softmax(x):
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """)
    v = run_check(EX, "correctness", LocalRunner(good), 0)
    assert v.kind is Kind.PASSED and v.render().startswith("3 cases passed") and v.measurement is None, v.render()
    bad = _ns("""
        def safe_softmax(x):
            e = np.exp(x)
            return e / e.sum(-1, keepdims=True)
    """)
    v = run_check(EX, "correctness", LocalRunner(bad), 0)
    assert v.kind is Kind.FAILED and "NaN" in v.detail and v.seed is None, v.render()


def test_namespace_closure_collects_helpers_and_constants(tmp_path):
    ns = load([Cell("python", textwrap.dedent("""
        SHIFT = 0.0
        def helper(x):
            return x - x.max(-1, keepdims=True) + SHIFT
        def safe_softmax(x):
            e = np.exp(helper(x))
            return e / e.sum(-1, keepdims=True)
        def unrelated():
            pass
    """), "nb")], str(tmp_path))
    cells = cells_from_namespace(ns, ["safe_softmax"])
    text = "\n".join(c.source for c in cells)
    assert "def helper" in text and "SHIFT = 0.0" in text and "unrelated" not in text
    assert text.index("def helper") < text.index("def safe_softmax")
    assert run_isolated("ch01.safe_softmax", "correctness", cells).passed
    with pytest.raises(MissingName):
        cells_from_namespace(ns, ["nothing_here"])


def test_namespace_closure_sends_tables_of_constants(tmp_path):
    """A function using a given table (tuples of ints, as Chapter 6's TAYLOR_Q31) gets it; what repr() cannot
    rebuild (a float nan in a tuple, an array) is not sent as a literal."""
    ns = load([Cell("python", textwrap.dedent("""
        TABLE = (1, 2, (3, 4), [5, -6])
        NAMES = {"a": 1.5, "b": "x"}
        ODD = (float("nan"),)
        def f(i):
            return TABLE[i], NAMES, ODD
    """), "nb")], str(tmp_path))
    text = "\n".join(c.source for c in cells_from_namespace(ns, ["f"]))
    assert "TABLE = (1, 2, (3, 4), [5, -6])" in text and "NAMES = {'a': 1.5, 'b': 'x'}" in text
    assert "ODD =" not in text


@pytest.mark.parametrize("body,expect,kind", [
    ("import os\ndef safe_softmax(x):\n    os.abort()\n", "died", Kind.DIED),  # a crash
    ("def safe_softmax(x):\n    return x.nope\n", "AttributeError", Kind.FAILED),  # an exception, shown
    # the stub
    ("def safe_softmax(x):\n    raise NotImplementedError()\n", "not implemented yet", Kind.NOT_IMPLEMENTED),
])
def test_isolation_reports_what_went_wrong(body, expect, kind):
    r = run_isolated("ch01.safe_softmax", "correctness", [Cell("python", body)])
    assert r.kind is kind and expect in r.render(), r.render()


def test_isolation_stops_a_hang():
    hang = Cell("python", "def safe_softmax(x):\n    while True:\n        pass\n")
    r = run_isolated("ch01.safe_softmax", "correctness", [hang], timeout=8)
    assert r.kind is Kind.TIMED_OUT and "timed out" in r.render() and r.seconds < 20


def test_every_exercise_is_complete():
    import os
    from autograder.instructor.nbtext import ROOT
    for ex in registry.all_exercises():
        assert os.path.exists(os.path.join(ROOT, ex.solution)), ex.id
        assert set(ex.cases) >= {"correctness", "hidden"}, ex.id
        if ex.bench is not None:  # a fraction of copy is below 1; of PyTorch's TFLOP/s, it may exceed 1
            if not registry.awaits_calibration(ex.id, ex.bench.check):
                assert 0 < registry.threshold_for(ex.id, ex.bench.check) < (1 if ex.bench.check == "bandwidth" else 3)


def test_monkeypatching_torch_or_the_grader_fails_the_check(monkeypatch):
    cheat = Cell("python", textwrap.dedent("""
        import autograder.declare.exercises.ch01_softmax as sm
        sm.verify = lambda *a, **k: []
        torch.isnan = lambda t: torch.zeros_like(t, dtype=torch.bool)
        def safe_softmax(x):
            return np.full(x.shape, np.nan, dtype=np.float32)
    """))
    r = run_isolated("ch01.safe_softmax", "correctness", [cheat])  # its NumPy-only runner has no torch to patch
    assert not r.passed and "torch" in r.message
    from autograder.judge import session
    monkeypatch.setattr(session, "NUMPY_RUNNERS", False)  # in a runner with torch: the tamper snapshot says what
    r = run_isolated("ch01.safe_softmax", "correctness", [cheat])
    assert not r.passed and "replaced" in r.message and "torch.isnan" in r.message


def test_nan_output_fails_even_if_isnan_were_fooled():
    inp = inputs("randn", (4, 5))
    ref = sm.reference(inp)
    real_isnan = torch.isnan
    try:
        torch.isnan = lambda t: torch.zeros_like(t, dtype=torch.bool)
        assert sm.verify(torch.full((4, 5), float("nan")), ref, inp, sm.Case((4, 5)))
    finally:
        torch.isnan = real_isnan


def test_registry_loads_whole_under_concurrent_first_use():
    """The nbgrader plugin's thread pool asks the registry from many threads at once; none may see
    it half-filled (found on a GPU: "unknown exercise 'ch03...'" for the first notebook graded)."""
    import os
    import subprocess
    import sys
    code = ("import threading\nfrom autograder.declare import registry\nids = ['ch03.online_softmax_triton', "
            "'ch02.row_sum_cuda', 'ch01.safe_softmax'] * 8\nerrs = []\n"
            "def get(i):\n    try:\n        registry.get(i)\n    except KeyError as e:\n        errs.append(e)\n"
            "ts = [threading.Thread(target=get, args=(i,)) for i in ids]\n[t.start() for t in ts]\n"
            "[t.join() for t in ts]\nprint('errors', len(errs))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300)
    assert "errors 0" in out.stdout, out.stdout + out.stderr


def test_a_gpu_too_old_for_a_dtype_skips_those_cases_for_everyone(monkeypatch):
    """Capability gating (simulated: FLASHCOURSE_CAPABILITY): bf16 cases need 8.0, fp8 output 8.9. A check
    with some cases beyond the GPU grades the others and says so; one with none it can run is "not graded"."""
    from autograder.judge import grading
    from autograder.declare import registry
    from autograder.judge.session import run_check
    from kernels_ref.bench import chapter_cells
    monkeypatch.setenv("FLASHCOURSE_CAPABILITY", "7.5")
    ex = registry.get("ch05.rmsnorm_triton")
    r = run_check(ex.id, "correctness", chapter_cells(ex))
    assert r.passed and "not graded: bfloat16 kernels need a GPU of compute capability 8.0" in r.message, r.message
    fp8 = registry.get("ch05.swiglu_rmsnorm_fp8_triton")
    assert grading.cannot_run(fp8, "float32") and not grading.cannot_run(ex, "float16")
    monkeypatch.setenv("FLASHCOURSE_CAPABILITY", "9.0")
    assert grading.cannot_run(fp8, "bfloat16") is None
    monkeypatch.setenv("FLASHCOURSE_CAPABILITY", "8.6")
    r = run_check(fp8.id, "correctness", chapter_cells(fp8))
    assert r.kind is Kind.NOT_GRADED and r.render().startswith("not graded: ch05.swiglu_rmsnorm_fp8_triton needs")
    assert r.render().endswith(f"(seed {r.seed})"), r.render()
