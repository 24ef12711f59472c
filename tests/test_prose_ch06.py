"""ch06_low_precision: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

import os
import subprocess
import sys

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)

H100_BENCH = "benchmarks/gpu_2026-11-23_s4/bench_ch06.json"   # the grader's own timing, H100
H200_BENCH = "benchmarks/gpu_2026-11-26_s5/bench_ch06_h200.json"  # the same, H200


def _pct(rel: str, device: str, exercise: str, shape: list, variant: str) -> float:
    data = load(rel)
    assert data["device"].startswith(device), data["device"]
    rows = [r for r in data["rows"] if r["exercise"] == exercise and r["shape"] == shape and r["variant"] == variant]
    assert len(rows) == 1, (rel, exercise, shape, variant)
    return round(100 * rows[0]["fraction"], 1)


def test_ch06_softmax_lowp_bandwidth_quoted():
    h100, h200, w100, w200 = quoted(
        "ch06_low_precision", r"reached (\d+)% of copy on an H100 and (\d+)% on an H200, measured with the "
        r"grader's own timing; one warp per row, (\d+)% and (\d+)%")
    ex, shape = "ch06.softmax_lowp_triton", [8192, 8192]
    assert round(_pct(H100_BENCH, "NVIDIA H100", ex, shape, "reference")) == h100
    assert round(_pct(H200_BENCH, "NVIDIA H200", ex, shape, "reference")) == h200
    assert round(_pct(H100_BENCH, "NVIDIA H100", ex, shape, "wrong/triton_lowp_one_warp")) == w100
    assert round(_pct(H200_BENCH, "NVIDIA H200", ex, shape, "wrong/triton_lowp_one_warp")) == w200


def test_ch06_e4m3_overflow_in_this_pytorch_and_the_interpreter():
    """Section 12: the course's PyTorch saturates to ±448; the Triton interpreter gives NaN for 470 and 256 for 1000
    and inf. (The GPU's satfinite conversion and PyTorch 2.11's NaN were measured on an H200; see the GPU test.)"""
    import torch
    body = flat("ch06_low_precision")
    assert "saturates to $\\pm 448$ in the course's PyTorch (2.13" in body
    assert torch.__version__.startswith("2.13")
    v = torch.tensor([449.0, 464.0, 470.0, 1000.0, float("inf"), -float("inf")])
    assert v.to(torch.float8_e4m3fn).float().tolist() == [448.0, 448.0, 448.0, 448.0, 448.0, -448.0]
    assert "the Triton interpreter** (CPU mode) gives NaN for 470 and, wrongly, 256 for 1000 and $\\infty$" in body
    code = (
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def k(x, y, n, B: tl.constexpr):\n"
        "    o = tl.arange(0, B); m = o < n\n"
        "    tl.store(y + o, tl.load(x + o, mask=m).to(tl.float8e4nv), mask=m)\n"
        "@triton.jit\n"
        "def p(x, y, n, B: tl.constexpr):\n"
        "    o = tl.arange(0, B)\n"
        "    tl.store(y + o, tl.load(x + o, mask=o < n, other=-float('inf')).to(tl.float32))\n"
        "v = torch.tensor([470.0, 1000.0, float('inf')]); y = torch.empty(3, dtype=torch.float8_e4m3fn)\n"
        "k[(1,)](v, y, 3, B=4); print(y.float().tolist())\n"
        "x8 = torch.tensor([-300.0]).to(torch.float8_e4m3fn); o = torch.empty(2); p[(1,)](x8, o, 1, B=2)\n"
        "print(o.tolist())\n")
    env = dict(os.environ, TRITON_INTERPRET="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    cast, pad = out.stdout.splitlines()[-2:]
    assert cast == "[nan, 256.0, 256.0]", cast
    assert pad == "[-288.0, -256.0]", pad  # the padding lane: -256, in the text's cell and Section 17
    assert "$-448$ on the GPU, $-256$ in the interpreter" in body


def test_ch06_e4m3_overflow_on_the_gpu():
    """Section 12's GPU claim: Triton's f32 -> e4m3 conversion saturates (cvt.rn.satfinite), an fp8 load's
    other=-inf becomes -448. Measured on an H200 (Triton 3.6); runs wherever a GPU is present."""
    import torch
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, y, n, B: tl.constexpr):
        o = tl.arange(0, B)
        m = o < n
        tl.store(y + o, tl.load(x + o, mask=m).to(tl.float8e4nv), mask=m)

    @triton.jit
    def p(x, y, n, B: tl.constexpr):
        o = tl.arange(0, B)
        tl.store(y + o, tl.load(x + o, mask=o < n, other=-float("inf")).to(tl.float32))

    v = torch.tensor([449.0, 470.0, 1000.0, float("inf"), -float("inf")], device="cuda")
    y = torch.empty(5, dtype=torch.float8_e4m3fn, device="cuda")
    compiled = k[(1,)](v, y, 5, B=8)
    assert y.float().tolist() == [448.0, 448.0, 448.0, 448.0, -448.0]
    assert "cvt.rn.satfinite.e4m3x2.f32" in compiled.asm["ptx"]
    x8 = torch.tensor([-300.0], device="cuda").to(torch.float8_e4m3fn)
    o = torch.empty(2, device="cuda")
    p[(1,)](x8, o, 1, B=2)
    assert o.tolist() == [-288.0, -448.0]
