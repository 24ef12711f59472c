"""ch05_fused_norms: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)


def test_ch05_reading_a_row_twice_measured():
    once, twice = quoted("ch05_fused_norms", r"8 KiB rows \(a softmax over 2048 `float32` columns, 256 MiB of input\): "
                         r"([\d.]+)% of the copy bandwidth reading each row once, ([\d.]+)% reading it twice")
    for kernel, quoted_pct in (("row in registers, read once", once), ("row in registers, read twice", twice)):
        r = _readthrough("re-read a row", kernel=kernel, shape=[32768, 2048])
        assert r["row_bytes"] == 8192 and r["bytes"] == 256 * 2**20 * 2 and r["pct_copy"] == quoted_pct


def test_ch05_measured_fractions():
    two, welford = quoted("ch05_fused_norms", r"on an H200 \(16 384 × 4096\) read about (\d+)% of the copy "
                          r"bandwidth against about (\d+)% with the update")
    ref = _bench("benchmarks/ch05_bench_h200.json", "ch05.layernorm_cuda", [16384, 4096], "reference")
    assert ref["device"] == "NVIDIA H200" and round(100 * ref["fraction"]) == two  # 89.0% (88.8% in another run)
    row = _benchmarks_md_row("| LayerNorm, CUDA reference (fp32; Welford's update per value)", H200_CH5)
    assert round(float(row.split("|")[2].strip().rstrip("%"))) == welford  # the 16384 x 4096 column
    vec, scalar = quoted("ch05_fused_norms", r"a kernel written this way read ([\d.]+)% of the copy bandwidth and a "
                         r"version with 2-byte loads ([\d.]+)%")
    h100 = "benchmarks/ch05_bench_h100.json"
    assert round(100 * _bench(h100, "ch05.rmsnorm_vec_cuda", [16384, 4096], "reference")["fraction"], 1) == vec
    assert round(100 * _bench(h100, "ch05.rmsnorm_vec_cuda", [16384, 4096],
                              "wrong/rmsnorm_vec_scalar_loads")["fraction"], 1) == scalar


# ---------------------------------------------------------------- derived and computed numbers

def test_ch05_datasheet_arithmetic():
    bw, flops = 3.35e12, 67e12
    (billions,) = quoted("ch05_fused_norms", r"4 \\approx (\d+)\$ billion elements a second")
    assert abs(bw / 4 / 1e9 - billions) <= 5
    assert "$67 / 3.35 = 20$" in flat("ch05_fused_norms") and round(flops / bw) == 20
    a, b = quoted("ch05_fused_norms", r"\$(\d+)/(\d+) \\approx 2.3\$ times fewer bytes")
    assert (a, b) == (2 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 1, 2 + 2 + 2 + 2 + 1)  # 10 trips + q; g, u, r, h, q
    assert round(a / b, 1) == 2.3


def test_ch05_variance_cancellation_as_the_cell_computes_it():
    (measured,) = quoted("ch05_fused_norms",
                         r"the cell below measures (\d+) for a row of 4096 values with mean \$10\^4\$")
    rng = np.random.default_rng(0)
    for mu in 10.0 ** np.arange(0, 5):  # the cell's loop, up to the row it quotes
        x = (mu + rng.standard_normal(4096)).astype(np.float32)
    exact = np.var(x.astype(np.float64))
    s, s2 = np.float32(0), np.float32(0)
    for v in x:
        s += v
        s2 += v * v
    naive = s2 / np.float32(len(x)) - (s / np.float32(len(x))) ** 2
    assert round(abs(float(naive) - exact) / exact) == measured
    (eps,) = quoted("ch05_fused_norms", r"\\approx ([\d.]+) \\times 10\^\{-6\} \\quad \(n = 4096\)")
    assert round(math.sqrt(4096) * 2.0**-24 / 3 * 1e6, 1) == eps


def test_ch05_double_rounding_as_the_cell_computes_it():
    pytest.importorskip("torch")
    once_mean, twice_mean = quoted("ch05_fused_norms", r"the mean error grows from ([\d.]+) to ([\d.]+) ulp, "
                                   r"as the cell prints")
    (worst,) = quoted("ch05_fused_norms", r"\(up to ([\d.]+) ulp\), and the mean error")
    printed = _run_cell("ch05_fused_norms", "torch.manual_seed(0)\nx = torch.randn(512, 4096)")
    stats = {m.group(1): [float(g) for g in m.groups()[1:]] for m in re.finditer(
        r"(round \w+), γ ≈ \d+: mean \|error\| ([\d.]+) ulp, largest ([\d.]+), (\d+)% beyond half an ulp, "
        r"mean signed error ([-+\d.]+)", printed)}
    assert stats["round once"][0] == once_mean and stats["round twice"][0] == twice_mean
    assert stats["round twice"][1] == worst and stats["round once"][1] <= 0.5
    assert 20 <= stats["round twice"][2] <= 30  # "about a quarter"
    assert abs(stats["round twice"][3]) < 1e-3  # unbiased: no drift of the mean


def test_ch05_persistent_grid_measured():
    """Exercise 2's 'Why one program per row, and not a persistent grid?': the H200 run s25/c
    (rms_persistent_probe.py), the reference's register count (s24/e, e0.json), the register arithmetic the
    paragraph derives; and the statement's widths and warps rule."""
    ch = "ch05_fused_norms"
    ref, best = quoted(ch, r"Measured on an H200 at 16 384 × 4 096 `bfloat16`, one program per row read ([\d.]+)% of "
                       r"the copy bandwidth, the best looping version ([\d.]+)%")
    doc = load("benchmarks/gpu_2026-11-29_s25/c/c1.json")
    assert doc["gpu"] == "NVIDIA H200"
    recs = {(tuple(c["shape"]), r["impl"]): r for c in doc["cases"] for r in c["records"]}
    pct = {k: round(r["pct_copy"], 1) for k, r in recs.items()}
    tall = (16384, 4096)
    looping = {impl: v for (s, impl), v in pct.items() if s == tall and "/SM" in impl}
    assert (pct[tall, "reference"], max(looping.values())) == (ref, best) and best < ref
    (gamma_kib,) = quoted(ch, r"\$\\gamma\$ is (\d+) KiB at 4 096 `bfloat16` columns")
    assert gamma_kib * 1024 == 4096 * 2
    warps, threads, per_thread, regs, rounded, per_sm, threads2, rounded2, progs, resident, max_warps, \
        prefetch_regs, allocated, per_sm2, threads3, allocated2, fit, fit_warps = quoted(
            ch, r"One program per row runs (\d+) warps \((\d+) threads\), so each thread holds 4 096 / \d+ = "
            r"(\d+) values; on an H200 the compiler gives it (\d+) registers a thread, allocated as (\d+) \(registers "
            r"are handed out in multiples of 8\)\. An SM has [\d ]+ registers, so ⌊([\d ]+) / \((\d+) × (\d+)\)⌋ = "
            r"(\d+) programs fit: (\d+) of its (\d+) warps\. A looping 8-warp program that also holds the next row "
            r"takes (\d+) registers \((\d+) allocated\): ⌊([\d ]+) / \((\d+) × (\d+)\)⌋ = (\d+) programs, (\d+) warps")
    e0 = load("benchmarks/gpu_2026-11-29_s24/e/e0.json")
    assert e0["gpu"] == "NVIDIA H200" and e0["rows"][0]["maxnreg"] is None and e0["rows"][0]["n_regs"] == regs
    # the reference's launch at 4096 columns: BLOCK 4096, num_warps = BLOCK // 512 (rmsnorm_triton)
    assert "warps = min(16, max(1, BLOCK // 512))" in load("kernels_ref/ch05_fused_norms/rmsnorm_triton.py")
    assert "`num_warps = BLOCK // 512`, kept between 1 and 16" in flat(ch)
    assert warps == 4096 // 512 and threads == threads2 == threads3 == 32 * warps and per_thread == 4096 / threads
    assert rounded == rounded2 == -(-regs // 8) * 8 and allocated == allocated2 == -(-prefetch_regs // 8) * 8
    assert e0["regs_per_sm"] == per_sm == per_sm2 and progs == per_sm // (threads * rounded)
    assert (progs + 1) * threads * rounded > per_sm  # a seventh does not fit
    assert resident == progs * warps and max_warps == 2048 // 32  # sm_90: at most 2048 threads an SM
    assert fit == per_sm // (threads * allocated) and fit_warps == fit * warps
    # the prefetching kernel (PREFETCH=True) at 8 warps, from the probe's record of each compiled specialization
    (w8,) = [v["n_regs"] for k, v in doc["cases"][0]["regs"].items()
             if "('constexpr', True)]{'num_warps': 8," in k]
    assert w8 == prefetch_regs
    # the statement's widths: those of the correctness check's cases
    from autograder.declare import registry
    widths = quoted(ch, r"the correctness test alone uses (\d+), ([\d ]+) and ([\d ]+) columns")
    assert sorted(widths) == sorted({c.shape[1] for c in registry.get("ch05.rmsnorm_triton").cases["correctness"]})
