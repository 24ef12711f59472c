"""ch08_backward: the numbers its text derives, recomputed from their formulas (see test_prose.py), and the one
measurement it quotes (the norms' programs per SM) read back from its data file."""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)

CH = "ch08_backward"


def test_ch08_jacobian_size():
    (entries,) = quoted(CH, r"\$4096\^2 \\approx ([\d.]+) \\times 10\^7\$")
    assert round(4096**2 / 1e7, 1) == entries and 4096**2 * 4 == 64 * 2**20  # "64 MiB in `float32`"
    assert "64 MiB in `float32`" in flat(CH)


def test_ch08_two_stage_bytes():
    main, part = quoted(CH, r"\$6 \\times 16\\,384 \\times 4096 = ([\d\\,]+)\$ bytes \(384 MiB\).*?"
                        r"\$2 \\times 264 \\times 4096 \\times 4 = ([\d\\,]+)\$ bytes")
    with open(os.path.join(ROOT, "kernels_ref", "ch08_backward", "rmsnorm_backward_triton.py")) as f:
        assert "per_sm = min(8, max(1, 8192 // BLOCK))" in f.read()  # the reference's rule: 2 per SM at 4096
    assert main == 6 * 16384 * 4096 == 384 * 2**20 and part == 2 * min(8, max(1, 8192 // 4096)) * 132 * 4096 * 4
    (pct,) = quoted(CH, r"bytes, ([\d.]+)% more")
    assert round(100 * part / main, 1) == pct
    (ln,) = quoted(CH, r"LayerNorm has two such buffers \(\$d\\gamma\$ and \$d\\beta\$\): ([\d.]+)%")
    assert round(200 * part / main, 1) == ln


def test_ch08_programs_per_sm_are_the_sweeps_best():
    """The text's programs per SM at 1024, 4096 and 8192 columns are the H200 sweep's fastest for RMSNorm."""
    got = quoted(CH, r"the fastest choice was (\d+) programs per SM at\s+1024 columns, (\d+) at 4096 and (\d+) at 8192")
    data = load("benchmarks/evidence/ch08_norm_backward_sweep_h200_2026-12-02.json")
    assert data["device"] == "NVIDIA H200"
    best = {}
    for r in data["rows"]:
        if r["op"] == "rms" and r["pct_copy"] > best.get(r["shape"][1], (0, 0))[0]:
            best[r["shape"][1]] = (r["pct_copy"], r["per_sm"])
    assert list(got) == [best[c][1] for c in (1024, 4096, 8192)], best
    assert [min(8, max(1, 8192 // c)) for c in (1024, 4096, 8192)] == list(got)  # the reference's rule


def test_ch08_bfloat16_sum_stalls():
    # bf16 has 8 significant bits: [2^k, 2^(k+1)) is spaced 2^(k-7); 256 + 1 is a tie and rounds to even (256)
    import torch
    assert torch.tensor(257.0).to(torch.bfloat16).item() == 256.0
    for t in (1.0, 1.0078125, 1.5, 1.9921875, 0.369140625):  # bf16 terms: the running sum stalls in [2^8 t, 2^9 t]
        s, n, one = torch.tensor(0.0, dtype=torch.bfloat16), 0, torch.tensor(t, dtype=torch.bfloat16)
        while s + one != s:
            s, n = s + one, n + 1
        assert 2**8 * t <= s.item() <= 2**9 * t and 2**8 <= n <= 2**9, (t, s.item(), n)
    lo, hi = quoted(CH, r"between \$2\^8\\, t\$ and \$2\^9\\, t\$, after (\d+) to (\d+) rows")
    assert (lo, hi) == (2**8, 2**9)
    few, many = quoted(CH, r"Over 16 384\s+rows it would be (\d+) to (\d+) times too small")
    assert (few, many) == (16384 / 2**9, 16384 / 2**8)


def test_ch08_storing_p_at_a_real_shape():
    B, H, T, D = 4, 32, 4096, 128
    assert B * H * T * T * 2 == 2**32  # "2^{32} bytes, 4 GiB"
    assert "= 2^{32}$ bytes, 4 GiB" in flat(CH)
    (traffic,) = quoted(CH, r"2\^\{33\} \\approx ([\d.]+) \\times 10\^9\$ bytes")
    assert round(2**33 / 1e9, 1) == traffic
    (ms,) = quoted(CH, r"4.8 TB/s \(datasheet\) takes at least ([\d.]+) ms")
    assert round(2**33 / 4.8e12 * 1e3, 1) == ms
    (flops,) = quoted(CH, r"\\approx ([\d.]+) \\times 10\^\{11\}\$ FLOPs")
    assert round(2 * B * H * T * T * D / 1e11, 1) == flops
    (recompute,) = quoted(CH, r"about ([\d.]+) ms at the 989 TFLOP/s")
    assert round(2 * B * H * T * T * D / 989e12 * 1e3, 2) == recompute
    (exp_ms,) = quoted(CH, r"\$B H T\^2 = 2\^\{31\}\$ of them: about ([\d.]+) ms at an H100's roughly 3.9 TFLOP/s")
    assert B * H * T * T == 2**31 and round(2**31 / 3.9e12 * 1e3, 2) == exp_ms  # FlashAttention-3's 3.9 TFLOP/s
    twice, store = quoted(CH, r"about ([\d.]+) ms against ([\d.]+) ms to write \$P\$ and read it once")
    assert twice == round(2 * (recompute + exp_ms), 1) and store == ms
    (gib,) = quoted(CH, r"\$32 \\times 4\$ GiB \$= (\d+)\$ GiB")
    h200_gib, h200_gb = quoted(CH, r"nearly all\s+of an H200's (\d+) GiB \((\d+) GB\)")
    assert gib == 32 * 4 and round(h200_gb * 1e9 / 2**30) == h200_gib
    (kib,) = quoted(CH, r"\$4T\$ bytes per head, (\d+) KiB at\s+\$T = 4096\$")
    assert 4 * 4096 == kib * 1024


def test_ch08_tile_intensity():
    (bn,) = quoted(CH, r"\$2 \\times \\text\{BLOCK\\_N\}\$ FLOPs per byte\s+loaded, (\d+) at `BLOCK_N` = 128")
    BM, BN, D = 64, 128, 128
    assert 4 * 2 * BN * BM * D / (2 * BM * D * 2) == 2 * BN == bn
    (bm,) = quoted(CH, r"\$1.5 \\times \\text\{BLOCK\\_M\}\$ FLOPs per byte, (\d+) at `BLOCK_M` = 128")
    assert 3 * 2 * 128 * BN * D / (2 * BN * D * 2) == 1.5 * 128 == bm
    h100, h200 = quoted(CH, r"is about (\d+) and (\d+) FLOPs per byte")
    assert (round(989 / 3.35), round(989 / 4.8)) == (h100, h200)


def test_ch08_work_counts():
    assert "$5 \\times 2 T^2 D = 10\\,T^2 D$" in flat(CH) and "executes $14\\,T^2 D$" in flat(CH)
    (ratio,) = quoted(CH, r"Seven products per tile pair instead of five: ([\d.]+) times")
    assert ratio == 7 / 5


def test_ch08_self_check_bytes():
    assert 1 * 16 * 8192**2 * 2 == 2**31  # "2^{31} bytes, 2 GiB per layer"
    assert "$1 \\cdot 16 \\cdot 8192^2 \\cdot 2 = 2^{31}$ bytes, 2 GiB" in flat(CH)
    assert 4 * 8192 * 16 == 2**19 == 512 * 1024  # L only: "= 2^{19}$ bytes, 512 KiB"
    assert "$4 \\times 8192 \\times 16 = 2^{19}$ bytes, 512 KiB" in flat(CH)


def test_ch08_int32_offsets():
    assert 524288 * 4096 == 2**19 * 2**12 == 2**31  # the first row whose offset no longer fits in int32
    assert "from row 524 288 on at 4096 columns ($2^{19} \\cdot 2^{12} = 2^{31}$)" in flat(CH)
