"""ch03_online_softmax: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)
from prose_util import H100, H200, LONG_F32  # not in prose_util's __all__


def test_ch03_long_rows():
    """Section 9's long-row numbers (its 4096 x 2048 ones are Chapter 2's table, tested there)."""
    cuda, tri, three, tor = quoted("ch03_online_softmax", r"online kernels read ([\d.]+)% \(CUDA\) and ([\d.]+)% "
                                   r"\(Triton\) against a model ceiling of 67%, a 3-pass kernel ([\d.]+)% "
                                   r"\(ceiling 50%\), and `torch.softmax` ([\d.]+)%")
    block = _benchmarks_md_block("| ch03 block per row, 1024 x 131072", H100_CH23)
    assert f"**{cuda}%**" in block and f"3-pass (max, sum, write) | {three}%" in block
    assert f"| torch.softmax | {tor}% |" in block
    assert f"**{tri}%**" in _benchmarks_md_row("| ch03 Triton online, 1024 x 131072", H100_CH23)


def test_ch03_exercise_4_two_pass_passes_only_through_l2():
    """Exercise 4: the two-pass loop with float4 loads clears the 70% bar on an H100 (measured at the graded shape),
    which its 67% model does not allow: the 32 MiB input fits in the 50 MiB L2."""
    ch = "ch03_online_softmax"
    (bar,) = quoted(ch, r"The bandwidth test needs (\d+)% of the copy at 4096 × 2048, above the two-pass loop's 67% ceiling")
    quoted(ch, r"The two-pass loop alone, with `float4` loads, can pass it on an H100 only because the 32 MiB input "
               r"fits in the 50 MiB L2")
    vec = _readthrough("ch03 ex4 warp per row", shape=[4096, 2048], kernel="two-pass only, float4")["pct_copy"]
    assert 4096 * 2048 * 4 == 32 * 2**20 and 2 / 3 * 100 < bar < vec
    assert load(READTHROUGH)["l2_bytes"] == 50 * 2**20  # "the 50 MiB L2"


def test_ch03_half_precision_error_levels():
    torch = pytest.importorskip("torch")
    sci = r"\$(\d+(?:\.\d+)?) \\times 10\^\{(-\d+)\}\$"
    levels = quoted("ch03_online_softmax", rf"give {sci} to {sci} for `float16`, {sci} to {sci} for `bfloat16` "
                    rf"on every machine tried, and {sci} to {sci} for `float32`")
    bounds = [levels[i] * 10 ** levels[i + 1] for i in range(0, 12, 2)]
    torch.manual_seed(0)
    errors = {torch.float16: [], torch.bfloat16: [], torch.float32: []}
    for n in (256, 1024, 4096, 16384, 65536):
        x = 3 * torch.randn(64, n)
        exact = torch.softmax(x.double(), -1)
        for dt, out in errors.items():
            out.append((torch.softmax(x.to(dt).float(), -1).to(dt).double() - exact).abs().max().item())
    for (lo, hi), errs in zip(zip(bounds[0::2], bounds[1::2]), errors.values()):
        assert lo * 0.6 <= min(errs) and max(errs) <= hi * 1.6, (lo, hi, errs)  # orders of magnitude


def test_ch03_split_rows_measured():
    """Section 9's split rows: the sizes the text derives, the ticket kernel's measured share (an H100 sweep, the
    configuration quoted), and the SM count behind "more SMs per row"."""
    ch = "ch03_online_softmax"
    cols, row_kib, rf_kib, regs, each = quoted(ch, r"One SM cannot keep it: a ([\d ]+)-column `float32` row is (\d+) KiB, "
                                               r"twice the (\d+) KiB .{0,120}?\(([\d ]+) registers of 4 bytes\)\. "
                                               r"Eight SMs can: (\d+) KiB each")
    assert cols * 4 == row_kib * 1024 == 2 * rf_kib * 1024 and regs * 4 == rf_kib * 1024 and 8 * each == row_kib
    chunk, chunk_kib, per_thread, threads, warps, k = quoted(
        ch, r"With \$C = ([\d\\,]+)\$ \((\d+) KiB of `float32`: (\d+) values in each of the (\d+) threads of a "
        r"(\d+)-warp block\) a 131 072-column row has \$K = (\d+)\$ chunks")
    assert chunk * 4 == chunk_kib * 1024 and per_thread * threads == chunk and threads == 32 * warps
    assert cols / chunk == k and (chunk, warps) == (SPLIT_F32["chunk"], SPLIT_F32["warps"])  # the kernel measured
    (f32,) = quoted(ch, r"Measured on an H100, this kernel read ([\d.]+)% of the copy bandwidth at\s+1024 × 131 072 "
                    r"`float32`, where this chapter's online kernels read about 64%")
    assert _sweep_pct(_cluster_sweep("b", H100), "triton-configs", *LONG_F32, SPLIT_F32) == f32
    cuda_, tri = quoted(ch, r"online kernels read ([\d.]+)% \(CUDA\) and ([\d.]+)% \(Triton\)")
    assert abs(cuda_ - 64) < 1 and abs(tri - 64) < 1  # "about 64%"
    rows, busy, sms, blocks = quoted(ch, r"(\d+) rows of 131 072 columns keep at most (\d+) of an H100's (\d+) SMs "
                                     r"busy.{0,200}?Split 8 ways, the same 64 rows make\s+(\d+) blocks")
    assert rows == busy < sms == load(f"{S11}/a/cluster.json")["sms"] and blocks == 8 * rows > sms


def test_ch03_cluster_measured():
    """Section 9's thread-block cluster: the reports' numbers (each against the committed JSON and the run's log),
    the copies' ratio, and the data-movement probe on the H200; the cluster's shape against the shipped CONFIGS."""
    ch = "ch03_online_softmax"
    h100_f32, h200_f32 = quoted(
        ch, r"on an H100 the cluster kernel read\s+([\d.]+)% of the copy bandwidth at 1024 × 131 072 `float32`, as fast "
        r"as a copy, which is what reading \$x\$ once and writing \$y\$ once allows; on an H200, ([\d.]+)%\.")
    assert h100_f32 >= 99.5  # "as fast as a copy"
    reports = {}
    for rel, gpu, f32 in (("benchmarks/results/nvidia_h100_80gb_hbm3.json", H100, h100_f32),
                          ("benchmarks/results/nvidia_h200.json", H200, h200_f32)):
        rep = load(rel)
        assert rep["gpu"] == gpu
        ours = {(tuple(r["shape"]), r["dtype"]): r for r in rep["records"]
                if r["kernel"] == "softmax" and r["impl"] == "flashcourse"}
        assert round(ours[((1024, 131072), "float32")]["pct_copy"], 1) == f32
        reports[gpu] = (rep, ours)
    # each report is the named run's (its log prints the same GB/s and the same copy)
    for run, gpu, log_name in ((f"{S13}/e", H100, "report.log"), (f"{S23}/g", H200, "g1.log")):
        log = load(f"{run}/{log_name}")
        assert f"copy {round(reports[gpu][0]['copy_gbps'])} GB/s" in log
        gbps = round(reports[gpu][1][(tuple(LONG_F32[0]), LONG_F32[1])]["gbps"])
        assert re.search(rf"softmax\s+1024x131072\s+float32\s+flashcourse\s+{gbps} GB/s", log)
    # the same 132 SMs, a copy 1.4 times as fast, 0.7 times the time per byte
    sms, faster, less = quoted(ch, r"The H200 has the same (\d+) SMs but a copy about ([\d.]+)\s+times as fast, so each "
                               r"SM has about ([\d.]+) times the time per byte")
    assert load(f"{S11}/a/cluster.json")["sms"] == load(f"{S11}/d/cluster.json")["sms"] == sms
    ratio = reports[H200][0]["copy_gbps"] / reports[H100][0]["copy_gbps"]
    assert round(ratio, 1) == faster and round(1 / ratio, 1) == less
    # the probe that only loads and stores, against the softmax, in one H200 run (n)
    (points,) = quoted(ch, r"in one run on an H200, a version of the\s+kernel that only loads and stores, with no "
                       r"arithmetic, read (\d+) points more than the softmax")
    x32 = {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True}
    n = _cluster_sweep("n", H200)
    probe, kernel = _sweep_pct(n, "probe", *LONG_F32, dict(x32, probe=3)), _sweep_pct(n, "candidate", *LONG_F32, x32)
    assert round(probe - kernel) == points
    # the cluster: 8 blocks, part r of 16 384 columns; the shipped float32 configuration has that shape
    (part,) = quoted(ch, r"block \$r\$ of the cluster \(its \*rank\*\) takes part \$r\$ of the row, ([\d ]+) columns")
    assert 8 * part == 131072
    cfg_src = load("kernels_ref/ch03_online_softmax/softmax_cluster.py")
    assert '(131072, {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True, "fast": True})' in cfg_src
    assert 128 * 32 * 4 == part
