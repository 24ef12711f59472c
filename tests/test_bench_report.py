"""The benchmark report without a GPU: its JSON format, the records the GPU run builds (a fake timer stands in
for course.timing.bench), the renderer's section and plots, and BENCHMARKS.md, which is the generated page alone."""
from __future__ import annotations

import copy
import json
import os

import pytest

from autograder.instructor import bench_report as br
from autograder.instructor import cli
from kernels_ref import report

LIGER_ERROR = "RuntimeError: Cannot launch Triton kernel since n = 131072 exceeds the recommended Triton blocksize"


def _bw(kernel, shape, dtype, impl, pct, **extra):
    return {"kernel": kernel, "shape": shape, "dtype": dtype, "impl": impl, **extra,
            "gbps": 30.0 * pct, "pct_copy": pct, "tflops": None}


def _att(T, causal, impl, tflops):
    return {"kernel": "attention_fwd", "shape": [4, 32, T, 128], "dtype": "bfloat16", "causal": causal,
            "impl": impl, "gbps": None, "pct_copy": None, "tflops": tflops}


SYNTHETIC = {
    "gpu": "NVIDIA Test GPU", "date": "2026-11-27", "copy_gbps": 3000.0,
    "versions": {"torch": "2.11.0", "triton": "3.6.0", "liger-kernel": None},
    "records": [
        _bw("softmax", [1024, 131072], "float32", "flashcourse", 93.2, ref="ch03.online_softmax_triton"),
        _bw("softmax", [1024, 131072], "float32", "torch", 45.0),
        _bw("softmax", [1024, 131072], "float32", "torch.compile", 80.1),
        {"kernel": "softmax", "shape": [1024, 131072], "dtype": "float32", "impl": "liger", "error": LIGER_ERROR},
        _bw("rmsnorm", [16384, 4096], "bfloat16", "flashcourse", 97.5, ref="ch05.rmsnorm_triton"),
        _bw("rmsnorm", [16384, 4096], "bfloat16", "torch", 78.0),
        _att(1024, True, "flashcourse", 320.0), _att(1024, True, "sdpa-flash", 280.0),
        _att(2048, True, "flashcourse", 390.0), _att(2048, True, "sdpa-flash", 300.0),
        {"kernel": "attention_fwd", "shape": [4, 32, 2048, 128], "dtype": "bfloat16", "causal": True,
         "impl": "sdpa-cudnn", "error": "RuntimeError: No available kernel"},
    ],
}

MD = "# Measurements\n\nIntro.\n\n## An older section\n\nText.\n"


def test_the_synthetic_report_is_in_the_format():
    assert br.problems(SYNTHETIC) == []


@pytest.mark.parametrize("break_it, says", [
    (lambda d: d["records"][3].update(gbps=1.0), "has no numbers"),
    (lambda d: d["records"][0].update(pct_copy=None), "pct_copy must be a positive number"),
    (lambda d: d["records"][6].pop("causal"), "needs causal"),
    (lambda d: d["records"][1].update(causal=False), "unknown key 'causal'"),
    (lambda d: d["records"][1].update(kernel="gelu"), "kernel 'gelu'"),
    (lambda d: d["records"][6].update(shape=[1024, 128]), "[B, H, T, D]"),
    (lambda d: d["records"][1].update(impl="flashcourse"), "appears twice"),
    (lambda d: d["records"][1].update(ref="ch01.softmax_triton"), "impl flashcourse only"),
    (lambda d: d.update(date="27/11/2026"), "YYYY-MM-DD"),
    (lambda d: d.pop("copy_gbps"), "copy_gbps"),
])
def test_problems_names_what_is_wrong(break_it, says):
    doc = copy.deepcopy(SYNTHETIC)
    break_it(doc)
    assert any(says in p for p in br.problems(doc)), br.problems(doc)
    with pytest.raises(ValueError):
        br.write(doc, "/nonexistent/never-written.json")


def _render_into(tmp_path) -> tuple[str, list[str]]:
    results = tmp_path / "benchmarks" / "results"
    br.write(SYNTHETIC, str(results / "nvidia_test_gpu.json"))
    md = tmp_path / "BENCHMARKS.md"
    if not md.exists():
        md.write_text(MD)
    return str(md), br.render(str(results), str(md))


def test_render_writes_the_section_and_the_plots(tmp_path):
    md, written = _render_into(tmp_path)
    text = open(md).read()
    assert text.startswith("# Measurements\n\nIntro.\n\n" + br.BEGIN) and text.endswith(
        br.END + "\n\n## An older section\n\nText.\n")
    assert "### NVIDIA Test GPU, 2026-11-27" in text
    assert "**NVIDIA Test GPU, 2026-11-27**: bandwidth, % of copy:" in text  # the GPU and date on every table
    assert "**NVIDIA Test GPU, 2026-11-27**: attention forward, bfloat16, TFLOP/s:" in text
    assert ("| softmax | 1024 × 131072 | float32 | `ch03.online_softmax_triton` | **93.2%** | 45.0% | 80.1% | — "
            "| 1.16x |") in text
    assert "| rmsnorm | 16384 × 4096 | bfloat16 | `ch05.rmsnorm_triton` | **97.5%** | 78.0% | — | — | 1.25x |" in text
    assert "| 4, 32 | 128 | yes | 2048 | **390** | 300 | — | 1.30x |" in text
    assert f"- Liger-Kernel, softmax 1024 × 131072 float32: {LIGER_ERROR}" in text
    assert "- SDPA cuDNN, attention_fwd 4 × 32 × 2048 × 128 bfloat16 causal: RuntimeError: No available kernel" in text
    assert "](benchmarks/results/nvidia_test_gpu_bandwidth.png)" in text
    assert "](benchmarks/results/nvidia_test_gpu_attention.png)" in text
    pngs = [p for p in written if p.endswith(".png")]
    assert [os.path.basename(p) for p in pngs] == ["nvidia_test_gpu_bandwidth.png", "nvidia_test_gpu_attention.png"]
    for p in pngs:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_rendering_twice_gives_the_same_bytes(tmp_path):
    _, written = _render_into(tmp_path)
    first = {p: open(p, "rb").read() for p in written}
    _, again = _render_into(tmp_path)
    assert again == written
    assert {p: open(p, "rb").read() for p in again} == first


def test_a_missing_or_generated_page_is_rendered_whole(tmp_path):
    md = tmp_path / "BENCHMARKS.md"  # missing: the whole page
    results = tmp_path / "benchmarks" / "results"
    br.write(SYNTHETIC, str(results / "nvidia_test_gpu.json"))
    br.render(str(results), str(md))
    text = md.read_text()
    assert text.startswith(br.PAGE_STAMP + "\n# Benchmarks\n") and text.endswith(br.END + "\n")
    md.write_text(text.replace("# Benchmarks", "# Benchmarks, edited by hand"))  # generated: rewritten whole
    br.render(str(results), str(md))
    assert md.read_text() == text


def test_benchmarks_md_is_the_generated_page_alone():
    with open(br.BENCHMARKS_MD) as f:
        committed = f.read()
    assert committed == br.page(br.load()), (
        "BENCHMARKS.md is not what `flashcourse bench --render` makes of benchmarks/results/*.json: run it and "
        "commit the result (the file is generated whole; do not edit it)")


def test_the_committed_section_is_what_the_renderer_makes_from_the_committed_json():
    with open(br.BENCHMARKS_MD) as f:
        committed = br.committed_section(f.read())
    assert committed is not None, "BENCHMARKS.md has no report section: run `flashcourse bench --render`"
    assert committed == br.section(br.load()), (
        "BENCHMARKS.md's report section is stale: run `flashcourse bench --render` and commit the result")


# ---- the records a GPU run builds, with a fake timer ----

def _one_call_then(ms):
    def bench(call):
        call()  # the call must run (on the CPU here: the Triton interpreter, PyTorch's CPU ops)
        return ms
    return bench


def test_records_from_a_timer_and_errors_from_missing_or_failing_peers():
    case = report.Case("softmax", (1024, 131072), "float32")

    def fails_on_this_shape():
        raise RuntimeError(LIGER_ERROR.split(": ", 1)[1] + "\nsecond line")
    recs = report.measure(case, {"flashcourse": lambda: None, "torch": ModuleNotFoundError("No module named 'x'"),
                                 "liger": fails_on_this_shape}, _one_call_then(2.0))
    assert recs[0] == {"kernel": "softmax", "shape": [1024, 131072], "dtype": "float32", "impl": "flashcourse",
                       "ref": "ch03.online_softmax_triton", "ms_rounds": [2.0] * report.ROUNDS,
                       "gbps": 2 * 1024 * 131072 * 4 / 2e-3 / 1e9, "pct_copy": None, "tflops": None}
    assert recs[1]["error"] == "ModuleNotFoundError: No module named 'x'" and "gbps" not in recs[1]
    assert recs[2]["error"] == LIGER_ERROR


def test_a_record_is_the_median_of_interleaved_rounds():
    case = report.Case("softmax", (8, 64), "float32")
    order, ms = [], {"a": iter([3.0, 1.0, 2.0]), "b": iter([5.0, 9.0, 4.0])}

    def bench(call):
        order.append(call())
        return next(ms[order[-1]])
    recs = report.measure(case, {"a": lambda: "a", "b": lambda: "b"}, bench, rounds=3)
    assert order == sum((report.round_order(["a", "b"], k) for k in range(3)), [])  # interleaved, each round in
    assert sorted(order[:2]) == sorted(order[2:4]) == sorted(order[4:]) == ["a", "b"]  # its own order
    assert [r["ms_rounds"] for r in recs] == [[3.0, 1.0, 2.0], [5.0, 9.0, 4.0]]
    assert recs[0]["gbps"] == pytest.approx(2 * 8 * 64 * 4 / 2e-3 / 1e9)  # the median, 2.0 ms
    assert recs[1]["gbps"] == pytest.approx(2 * 8 * 64 * 4 / 5e-3 / 1e9)


def test_attention_records_count_flops():
    case = report.Case("attention_fwd", (4, 32, 4096, 128), "bfloat16", True)
    (rec,) = report.measure(case, {"sdpa-flash": lambda: None}, _one_call_then(1.0))
    assert rec["causal"] is True and rec["gbps"] is None and rec["pct_copy"] is None
    assert rec["tflops"] == pytest.approx(4 * 4 * 32 * 4096**2 * 128 / 2 / 1e-3 / 1e12)


def test_every_impl_is_called_on_the_cpu(tmp_path):
    """Our references (Triton interpreter), torch eager and Liger-Kernel (an error where it is missing) built for
    small cases on the CPU and called once each; torch.compile is left out (its CPU compile is slow)."""
    cases = [report.Case("softmax", (8, 64), "float32"), report.Case("add_rmsnorm", (4, 64), "bfloat16"),
             report.Case("attention_fwd", (1, 1, 64, 64), "float16", True)]
    loaded = {}
    for case in cases:
        impls = report.calls(case, report.make_inputs(case, "cpu"), loaded, str(tmp_path), "cpu")
        impls.pop("torch.compile", None)
        recs = report.measure(case, impls, _one_call_then(1.0), rounds=1)
        ours = recs[0]
        assert ours["impl"] == "flashcourse" and "error" not in ours, ours
        if case.kernel != "attention_fwd":
            assert "error" not in recs[1], recs[1]
            try:
                import liger_kernel  # noqa: F401
            except ImportError:
                assert "liger_kernel" in recs[2]["error"]


def test_a_whole_run_gives_a_valid_report(tmp_path):
    cases = [report.Case("softmax", (8, 64), "float32"), report.Case("rmsnorm_cuda", (4, 64), "bfloat16"),
             report.Case("attention_fwd", (1, 1, 64, 64), "bfloat16", False)]
    copies = iter([1000.0, 1250.0])
    doc = report.run(cases, gpu="Fake GPU", bench=lambda call: 0.5, copy_gbps=lambda n: next(copies), device="cpu",
                     log=lambda line: None)
    assert br.problems(doc) == [] and doc["copy_gbps"] == 1250.0
    assert [r["impl"] for r in doc["records"]] == ["flashcourse", "torch", "torch.compile", "liger"] * 2 + [
        "flashcourse", "sdpa-flash", "sdpa-cudnn"]
    for r in doc["records"]:
        if r.get("gbps") is not None:
            assert r["pct_copy"] == pytest.approx(100 * r["gbps"] / 1250.0)
    path = tmp_path / "r.json"
    br.write(doc, str(path))
    assert json.loads(path.read_text()) == doc


def test_cli_bench_report_and_render_dispatch(monkeypatch):
    seen = []
    monkeypatch.setattr(br, "render_main", lambda: seen.append("render") or 0)
    monkeypatch.setattr(cli.subprocess, "call", lambda argv, cwd: seen.append(argv[1:]) or 0)
    assert cli.main(["bench", "--render"]) == 0
    assert cli.main(["bench", "--report"]) == 0
    assert cli.main(["bench", "--report", "--", "--json", "out.json"]) == 0
    assert seen == ["render", ["-m", "kernels_ref.report"], ["-m", "kernels_ref.report", "--json", "out.json"]]


def test_our_right_kernel_passes_the_check_before_it_is_timed(tmp_path):
    case = report.Case("softmax", (8, 64), "float32")
    inputs = report.make_inputs(case, "cpu")
    call = report.checked(case, inputs, report.calls(case, inputs, {}, str(tmp_path), "cpu")["flashcourse"])
    assert not isinstance(call, Exception), call


def test_a_wrong_kernel_of_ours_gets_an_error_record_not_a_speed():
    case = report.Case("softmax", (8, 64), "float32")
    inputs = report.make_inputs(case, "cpu")
    wrong = lambda: inputs["x"] * 0  # noqa: E731  (runs, fast, wrong)
    recs = report.measure(case, {"flashcourse": report.checked(case, inputs, wrong)}, lambda call: 0.5)
    assert "wrong output" in recs[0]["error"] and "gbps" not in recs[0], recs[0]


def test_every_impl_is_warmed_before_the_case_is_timed():
    """report.warm runs each callable impl (not the errors) for its time, untimed, before measure times any."""
    seen = []
    impls = {"flashcourse": lambda: seen.append("ours"), "liger": ImportError("no liger"),
             "torch": lambda: seen.append("torch")}
    made = report.warm(impls, seconds=0.01)
    assert set(made) == {"flashcourse", "torch"} and made["flashcourse"] >= 1 and made["torch"] >= 1
    assert seen.count("ours") == made["flashcourse"] and seen.count("torch") == made["torch"]
    assert seen.index("torch") > seen.index("ours") and seen[-1] == "torch"  # one impl after the other


def test_a_run_warms_each_case_before_timing_it(tmp_path, monkeypatch):
    """report.run calls warm on a case's impls before measure times any of them (without it, the impl timed first
    pays the warm-up: an order effect)."""
    events = []
    monkeypatch.setattr(report, "warm", lambda impls, *a, **k: events.append(("warm", sorted(impls))) or {})
    case = report.Case("rmsnorm", (4, 64), "float32")
    report.run([case], gpu="Fake GPU", bench=lambda call: events.append(("bench",)) or 0.5,
               copy_gbps=lambda n: 100.0, device="cpu", log=lambda s: None)
    assert events[0][0] == "warm" and "flashcourse" in events[0][1]
    assert events[1:] and all(e == ("bench",) for e in events[1:])


def test_one_ptxas_is_pinned_before_anything_compiles(tmp_path, monkeypatch):
    """report.pin_ptxas: the chosen ptxas goes into TRITON_PTXAS_PATH (where torch.compile would otherwise put torch's
    mid-run); one the caller set wins; a missing one pins nothing."""
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(report, "ptxas_paths", lambda: {"triton": str(fake), "torch": str(tmp_path / "missing")})
    monkeypatch.setenv("TRITON_PTXAS_PATH", "")  # records the caller's state: teardown restores it (pin_ptxas sets it)
    monkeypatch.delenv("TRITON_PTXAS_PATH")
    assert report.pin_ptxas("torch") is None and "TRITON_PTXAS_PATH" not in os.environ
    assert report.pin_ptxas("triton") == str(fake) and os.environ["TRITON_PTXAS_PATH"] == str(fake)
    assert report._versions()["ptxas"] == "12.8.93" and report._versions()["ptxas_path"] == str(fake)
    monkeypatch.setenv("TRITON_PTXAS_PATH", "/the/callers/ptxas")
    assert report.pin_ptxas(None) == "/the/callers/ptxas"  # no choice named: the caller's
    assert report.pin_ptxas("triton") == str(fake) == os.environ["TRITON_PTXAS_PATH"]  # a named one wins


def test_the_rounds_change_every_impls_neighbours():
    """report.round_order for 2, 3 (attention: ours, SDPA flash, cuDNN) and 4 impls (ours, torch, torch.compile,
    Liger-Kernel) and the report's three rounds: every round a permutation; no impl is timed right after the same impl
    (or first) in every round, and none holds one position in every round."""
    for names in (["a", "b"], ["flashcourse", "sdpa-flash", "sdpa-cudnn"], ["flashcourse", "torch", "torch.compile",
                                                                           "liger"]):
        rounds = [report.round_order(names, k) for k in range(report.ROUNDS)]
        assert all(sorted(r) == sorted(names) for r in rounds)
        for impl in names:
            before = {(r[r.index(impl) - 1] if r.index(impl) else None) for r in rounds}
            assert len(before) > 1, (impl, rounds)
            assert len({r.index(impl) for r in rounds}) > 1, (impl, rounds)


def test_the_report_pins_ptxas_before_anything_runs(tmp_path, monkeypatch):
    """report.main pins the ptxas before report.run compiles anything; a missing ptxas stops it."""
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(report, "ptxas_paths", lambda: {"triton": str(fake), "torch": str(tmp_path / "missing")})
    monkeypatch.setenv("TRITON_PTXAS_PATH", "")
    monkeypatch.delenv("TRITON_PTXAS_PATH")
    monkeypatch.setattr(report.course, "GPU", True)
    monkeypatch.setattr(report.torch.cuda, "get_device_name", lambda: "Fake GPU")
    seen = []

    def fake_run(cases, **kw):
        seen.append((os.environ.get("TRITON_PTXAS_PATH"), len(cases)))
        return {"gpu": "Fake GPU", "date": "2026-11-27", "copy_gbps": 1.0, "versions": {}, "records": []}
    monkeypatch.setattr(report, "run", fake_run)
    monkeypatch.setattr(report.bench_report, "write", lambda doc, path: None)
    out = str(tmp_path / "r.json")
    assert report.main(["--only", "softmax", "--json", out, "--no-render", "--ptxas", "torch"]) == 2 and not seen
    assert report.main(["--only", "softmax", "--json", out, "--no-render"]) == 0
    assert seen == [(str(fake), sum(c.kernel == "softmax" for c in report.CASES))]


def test_only_names_known_kernels_and_a_json(capsys):
    for argv in (["--only", "softmax,nope", "--json", "x.json", "--no-render"], ["--only", "softmax", "--no-render"],
                 ["--only", "softmax", "--json", "x.json"]):
        with pytest.raises(SystemExit) as e:
            report.main(argv)
        assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unknown kernels ['nope']" in err and err.count("name --json and --no-render") == 2
