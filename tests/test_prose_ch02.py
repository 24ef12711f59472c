"""ch02_reductions: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)


@pytest.mark.parametrize("label, name", [("v1: 3-pass", "v1: 3-pass"), ("v2: online softmax", "v2: your warp per row"),
                                         ("v3: online softmax", "v3: your block per row"),
                                         ("Triton online softmax", "your Triton kernel"),
                                         ("`torch.softmax`", "torch.softmax")])
def test_ch02_progression_table_matches_the_recorded_h100_run(label, name):
    gbps, pct = _progression()[name]
    row = [ln for ln in text("ch02_reductions").splitlines() if ln.startswith(f"| {label}")]
    assert len(row) == 1, label
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert float(cells[-2]) == gbps and float(cells[-1].rstrip("%")) == pct


def test_ch02_progression_byte_model():
    assert "$8 \\cdot 4096 \\cdot 2048$ bytes = 64 MiB" in flat("ch02_reductions")
    assert 8 * 4096 * 2048 == 64 * 2**20


def test_ch02_row_sum_fractions():
    cuda, triton_, torch_ = quoted("ch02_reductions", r"read ([\d.]+)% \(CUDA\) and ([\d.]+)% \(Triton\) "
                                   r"of the copy bandwidth, `torch.sum` ([\d.]+)%")
    block = _benchmarks_md_block("| ch02 CUDA row sum, 16384 x 8192", H100_CH23)
    assert f"**{cuda}%**" in block and f"| torch.sum | {torch_}% |" in block
    assert f"**{triton_}%**" in _benchmarks_md_row("| ch02 Triton row sum, 16384 x 8192", H100_CH23)


def test_ch02_equal_terms_example():
    (got,) = quoted("ch02_reductions", r"which gives ([\d.]+) instead of 5000")
    s = np.cumsum(np.full(50_000, np.float32(0.1)), dtype=np.float32)[-1]
    assert round(float(s), 2) == got


def test_ch02_bank_conflict_claims():
    """The text's claims, counted the way the chapter's cell counts them."""
    def degree(words):
        banks: dict[int, set] = {}
        for w in words:
            banks.setdefault(w % 32, set()).add(w)
        return max((len(v) for v in banks.values()), default=0)

    def worst(n, s, active, word):
        return max(max(degree([word(t) for t in range(w, w + 32) if active(t)]),
                       degree([word(t) + s for t in range(w, w + 32) if active(t)])) for w in range(0, n, 32))

    for s in (1, 2, 4, 8, 16, 32, 64, 128):  # interleaved: divergence, never a conflict
        assert worst(256, s, lambda t: t % (2 * s) == 0, lambda t: t) <= 1
    assert worst(256, 1, lambda t: 2 * t < 256, lambda t: 2 * t) == 2     # strided: 2-way at s = 1
    assert worst(256, 2, lambda t: 4 * t < 256, lambda t: 4 * t) == 4     # 4-way at s = 2
    assert worst(1024, 16, lambda t: 32 * t < 1024, lambda t: 32 * t) == 32  # 32-way at s = 16, 1024 threads
    body = flat("ch02_reductions")
    assert "**no** bank conflict, only divergence" in body and "32-way at `s = 16`" in body


def test_ch02_littles_law_arithmetic():
    """Section 5: bytes in flight = bandwidth x latency, from Chapter 1's measured H100 copy and the 1 us the text
    takes as its round latency; the per-SM and per-thread counts follow (132 SMs, 2048 threads, 16-byte float4)."""
    body = flat("ch02_reductions")
    (bw,) = quoted("ch02_reductions", r"At about (\d+) GB/s \(Chapter 1's copy on an H100\)")
    assert bw == round(_copy()["1073741824"], -1)
    assert "Take 1 µs, a round figure" in body
    in_flight = bw * 1e9 * 1e-6
    mb, kb, loads = quoted("ch02_reductions", r"\\approx (\d+)\$ MB in flight, about (\d+) KB per SM on 132 SMs: "
                                              r"about (\d+) `float4` loads per SM")
    assert mb == round(in_flight / 1e6) and kb == round(in_flight / 132 / 1e3)
    assert loads == round(in_flight / 132 / 16, -2)
    assert in_flight / 132 / 16 / 2048 < 1 and "**under one `float4` load in flight per thread**" in body
    (scalar,) = quoted("ch02_reductions", r"at full occupancy, against about (\d+) scalar loads")
    assert scalar == round(in_flight / 132 / 4 / 2048)
    assert 65536 // 2048 == 32 and "65 536 registers / 2048" in body
    # self-check 6: 64 registers a thread, 256 threads a block
    blocks, threads, per = quoted("ch02_reductions", r"so 65 536 / 16 384 = (\d) blocks, (\d+) threads\. Section 5's "
                                                     r"1400 `float4` loads per SM then come to about ([\d.]+) per thread")
    assert blocks == 65536 // (64 * 256) and threads == blocks * 256
    assert per == round(loads / threads, 1)
    (full,) = quoted("ch02_reductions", r"At full occupancy \(2048 threads\) ([\d.]+) per thread")
    assert full == round(loads / 2048, 1)


@pytest.mark.skipif(__import__("course").GPU, reason="a claim about CPU mode")
def test_ch02_cpu_mode_lets_a_barrier_inside_the_branch_pass():
    """Section 2 says the tree with its barrier moved inside `if (t < s)` runs in CPU mode without complaint
    (threads that skip it return and drop out): so no test can be relied on to find the mistake."""
    import course
    import torch
    assert "so the tree runs there without complaint too" in flat(
        "ch02_reductions")
    src = r'''
    extern "C" __global__ void tree_barrier_in_branch(const float* x, float* y) {
        __shared__ float buf[256];
        int t = threadIdx.x;
        buf[t] = x[t];
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (t < s) { buf[t] += buf[t + s]; __syncthreads(); }
        }
        if (t == 0) y[0] = buf[0];
    }'''
    x = torch.arange(256, dtype=torch.float32, device=course.DEVICE)
    y = torch.zeros(1, device=course.DEVICE)
    course.compile_cuda(src).tree_barrier_in_branch((1,), (256,), (x, y))
    assert y.item() == x.sum().item()


def test_ch02_barrier_in_a_branch_happened_to_work_on_an_h200():
    """Section 2: the tree with its barrier inside the branch, on an H200 (benchmarks/claims_probe.py): finished,
    every row right in every launch, as many launches and rows as the text says."""
    d = load("benchmarks/evidence/claims_h200_2026-12-01.json")
    b = d["barrier_in_branch"]
    assert d["gpu"] == "NVIDIA H200" and b["finished"] and not any(b["wrong_rows_per_launch"])
    launches, rows, cols = quoted("ch02_reductions", r"On an H200 it happened to work: that tree, with its barrier "
                                  r"inside the `if`, launched (\d+) times over (\d+) rows of (\d+) values")
    assert (launches, rows, cols) == (len(b["wrong_rows_per_launch"]), b["rows"], b["cols"])
