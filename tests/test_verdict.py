"""Verdicts and measurements as data (autograder.judge.verdict): the sentence a student reads is rendered from the
fields, in the judge's wording, and a result file holds the fields (they come back equal)."""
from autograder.judge.verdict import NEEDS_GPU, Kind, Measurement, Verdict, failed, not_graded, passed

# TEST DATA: the numbers of a ch01 reference line (benchmarks/grading_v2_engine_ch01-02_h100.log); no GPU ran here.
BW = Measurement(unit="GB/s", value=2962.4, roof=2999.1, roof_name="copy bandwidth", fraction=0.98777, need=0.74,
                 calibrated=False, device="NVIDIA H100 80GB HBM3", shape=(8192, 8192), case="adversarial",
                 dtype="float32", model="read x once + write y once = 2 · rows · cols · 4 B", ms=0.181, rounds=566,
                 sets=2, overhead=0.0003, graph=True)
TP = Measurement(unit="TFLOP/s", value=425.2, roof=316.0, roof_name="PyTorch SDPA (flash backend)", fraction=1.3456,
                 need=0.9, calibrated=True, device="NVIDIA H200", shape=(4, 32, 4096, 128), case="causal",
                 dtype="bfloat16", model="4·B·H·T²·D / 2", ms=1.3, rounds=73, sets=2, overhead=0.0005, graph=False)


def test_a_bandwidth_sentence_is_the_judges():
    assert BW.render() == (
        "2962 GB/s = 99% of the copy bandwidth (2999 GB/s) at (8192, 8192) adversarial float32 on NVIDIA H100 80GB "
        "HBM3; judge's clock, 566 rounds x 2 input sets, message overhead 0.03%; bytes = read x once + write y once "
        "= 2 · rows · cols · 4 B; needs >= 74.0%")


def test_a_throughput_sentence_is_the_judges():
    assert TP.render() == (
        "425 TFLOP/s = 1.35x PyTorch SDPA (flash backend) (316 TFLOP/s, same run) at (4, 32, 4096, 128) causal "
        "bfloat16 on NVIDIA H200; judge's clock, 73 rounds x 2 input sets, message overhead 0.05%, plain launches "
        "(your wrapper could not be captured in a CUDA graph); FLOPs = 4·B·H·T²·D / 2; needs >= 0.90x (the bar "
        "calibrated for this GPU model)")


def test_every_kind_renders_as_before():
    ex = "ch01.softmax_triton"
    assert passed(ex, "bandwidth", measurement=BW).render() == BW.render()
    slow = Verdict(ex, "bandwidth", Kind.FAILED, "", BW, seed=7)
    assert slow.render() == BW.render() + " (seed 7)" and not slow.passed
    fast = Verdict(ex, "bandwidth", Kind.FAILED, "faster than the roofline allows, so the kernel skipped work", BW, 7)
    assert fast.render() == BW.render() + ": faster than the roofline allows, so the kernel skipped work (seed 7)"
    assert not_graded(ex, "bandwidth", NEEDS_GPU).render() == (
        "not graded: needs a GPU (this machine has none; grade on a GPU machine to score it)")
    gated = Verdict(ex, "correctness", Kind.NOT_GRADED, "bfloat16 kernels need a GPU of compute capability 8.0", seed=3)
    assert gated.render() == "not graded: bfloat16 kernels need a GPU of compute capability 8.0 (seed 3)"
    assert failed(ex, "correctness", "shape (4, 5), randn inputs: y[0, 0] = nan").render() == (
        "shape (4, 5), randn inputs: y[0, 0] = nan")
    assert passed(ex, "correctness").passed and not Verdict(ex, "correctness", Kind.TIMED_OUT, "x").passed


def test_result_files_keep_the_fields():
    for v in (Verdict("ch01.softmax_triton", "bandwidth", Kind.FAILED, "", BW, 1234, 7.25),
              Verdict("ch04.flash_attention_triton", "throughput", Kind.PASSED, "", TP, None, 9.0),
              Verdict("ch01.safe_softmax", "correctness", Kind.DIED, "the grader's process died", seconds=1.5)):
        d = v.to_json()
        assert d["kind"] == v.kind.value and d["passed"] == v.passed and d["message"] == v.render()
        assert Verdict.from_json(d) == v
    long = failed("ch01.safe_softmax", "correctness", "x" * 9000).to_json(limit=4000)
    assert len(long["detail"]) == 4000 and long["message"] == long["detail"]


def test_the_judge_decides_a_timed_check_from_its_measurement(monkeypatch):
    """grading._timed on a simulated GPU (the measurement stubbed: no GPU here): below the bar fails with the
    measurement, at the bar passes, above the roofline's limit fails as skipped work, a wrong kernel is not timed."""
    from course import mode

    from autograder.judge import grading
    from autograder.declare import registry
    ex = registry.get("ch01.softmax_triton")
    monkeypatch.setattr(mode, "GPU", True)
    monkeypatch.setattr(grading, "threshold_for", lambda e, c: 0.74)
    monkeypatch.setattr(grading, "calibrated_here", lambda e, c: False)
    monkeypatch.setattr(grading, "awaits_calibration", lambda e, c: False)
    right = passed(ex.id, "correctness", "3 cases passed")
    monkeypatch.setattr(grading, "run_check", lambda *a: right)

    def timed(gbps):
        m = {"gbps": gbps, "copy_gbps": 3000.0, "fraction": gbps / 3000.0, "device": "NVIDIA H100 80GB HBM3",
             "shape": list(ex.bench.shape), "model": "2 · rows · cols · 4 B", "ms": 0.2, "rounds": 500, "sets": 2,
             "overhead": 0.0003, "graph": True}
        monkeypatch.setattr(grading, "measure_bandwidth", lambda *a, **k: m)
        return grading._timed(ex, "bandwidth", None, 0)

    slow, enough = timed(2000.0), timed(2250.0)
    assert slow.kind is Kind.FAILED and slow.measurement.need == 0.74 and slow.detail == ""
    assert enough.passed and enough.measurement.value == 2250.0 and enough.render().startswith("2250 GB/s = 75% of")
    skipped = timed(3000.0 * (ex.bench.max_fraction + 0.01))
    assert skipped.kind is Kind.FAILED and skipped.detail.startswith("faster than the roofline allows")
    monkeypatch.setattr(grading, "run_check", lambda *a: failed(ex.id, "correctness", "y[0, 0] = nan"))
    wrong = timed(2220.0)
    assert wrong.kind is Kind.FAILED and wrong.measurement is None
    assert wrong.render() == "not timed: the kernel must first pass its correctness check: y[0, 0] = nan"


def test_a_timed_check_whose_bar_awaits_a_calibration_is_not_graded_and_says_so(monkeypatch):
    """An exercise whose bar was never measured (awaits_calibration in thresholds.toml) is not timed against a made-up
    number: on a GPU without a calibrated bar its timed check is NOT_GRADED, with the reason; nothing is run."""
    from course import mode

    from autograder.declare import registry
    from autograder.judge import grading
    monkeypatch.setattr(mode, "GPU", True)
    monkeypatch.setattr(mode, "device_name", lambda: "NVIDIA A100-SXM4-80GB")  # a GPU with no calibrated bars

    def must_not_run(*a, **k):
        raise AssertionError("a check awaiting its bar must not be timed")
    monkeypatch.setattr(grading, "run_check", must_not_run)
    monkeypatch.setattr(grading, "measure_bandwidth", must_not_run)
    ex = registry.get("ch08.softmax_backward_triton")
    v = grading._timed(ex, "bandwidth", None, 0)
    assert v.kind is Kind.NOT_GRADED and "not been measured on a GPU" in v.detail, v
    assert not registry.awaits_calibration("ch01.softmax_triton", "bandwidth", device="NVIDIA H200")
    assert not registry.awaits_calibration("ch08.softmax_backward_triton", "bandwidth", device="NVIDIA H200")
