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
