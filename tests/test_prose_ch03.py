"""ch03_online_softmax: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)


def test_ch03_progression_and_long_rows():
    p = _progression()
    warp, torch_, v1 = quoted("ch03_online_softmax", r"read ([\d.]+)% of the copy bandwidth at 4096 × 2048, "
                              r"ahead of `torch.softmax` \(([\d.]+)%\) and of the 3-pass v1 \(([\d.]+)%\)")
    assert (warp, torch_, v1) == (p["v2: your warp per row"][1], p["torch.softmax"][1], p["v1: 3-pass"][1])
    cuda, tri, three, tor = quoted("ch03_online_softmax", r"online kernels read ([\d.]+)% \(CUDA\) and ([\d.]+)% "
                                   r"\(Triton\) against a model ceiling of 67%, a 3-pass kernel ([\d.]+)% "
                                   r"\(ceiling 50%\), and `torch.softmax` ([\d.]+)%")
    block = _benchmarks_md_block("| ch03 block per row, 1024 x 131072", H100_CH23)
    assert f"**{cuda}%**" in block and f"3-pass (max, sum, write) | {three}%" in block
    assert f"| torch.softmax | {tor}% |" in block
    assert f"**{tri}%**" in _benchmarks_md_row("| ch03 Triton online, 1024 x 131072", H100_CH23)
    a, b = quoted("ch03_online_softmax", r"reference reads ([\d.]+)% and a 3-pass kernel ([\d.]+)%")
    assert (a, b) == (cuda, three)


def test_ch03_exercise_4_paths_measured():
    regs, scalar, vec = quoted("ch03_online_softmax", r"the registers path with `md_push` on every value read "
                               r"([\d.]+)% of the copy; the two-pass loop alone read ([\d.]+)% loading one float "
                               r"at a time and ([\d.]+)% with `float4` loads")
    what, shape = "ch03 ex4 warp per row", [4096, 2048]
    assert regs == _readthrough(what, shape=shape, kernel="taught variant (row in registers, md_push per value; "
                                "scalar two-pass otherwise)")["pct_copy"]
    assert scalar == _readthrough(what, shape=shape, kernel="two-pass only, one float at a time")["pct_copy"]
    assert vec == _readthrough(what, shape=shape, kernel="two-pass only, float4")["pct_copy"]
    assert load(READTHROUGH)["l2_bytes"] == 50 * 2**20  # "the 50 MiB L2 cache"
    assert 0 < vec - 70 < 2  # "clears the bar by about one point"


def test_ch03_half_precision_error_levels():
    torch = pytest.importorskip("torch")
    sci = r"\$(\d+(?:\.\d+)?) \\times 10\^\{(-\d+)\}\$"
    levels = quoted("ch03_online_softmax", rf"gives {sci} to {sci} for `float16`, {sci} to {sci} for `bfloat16` "
                    rf"and {sci} to {sci} for `float32`")
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


def test_ch03_cluster_fewer_instructions():
    """Section 9's SC_FAST paragraphs: the instruction counts (recompiled here: NVRTC, then the cuobjdump the Triton
    package ships), the exponent's error bound (derived), and the sweeps' side-by-side numbers (runs b and c)."""
    import subprocess
    import tempfile

    import triton

    from course import cuda
    from kernels_ref.ch03_online_softmax import softmax_cluster as sc
    ch = "ch03_online_softmax"
    txt = flat(ch)
    # the exponent's error: half an ulp of m log2 e at |m| = 1000, times ln 2
    ml2e = 1000 * math.log2(math.e)
    assert 2**10 <= ml2e < 2**11 and "$[2^{10}, 2^{11})$" in txt and "$2^{-14} \\approx 6.1 \\cdot 10^{-5}$" in txt
    assert round(2.0**-14, 6) == 6.1e-5 and f"${2.0**-14 * math.log(2):.1e}".replace("e-05", " \\cdot 10^{-5}$") in txt
    (measured,) = quoted(ch, r"where it measured\s+\$([\d.]+) \\cdot 10\^\{-6\}\$ in run `b`")
    err = float(re.search(r"AssertionError: max error ([\d.e-]+)", load(f"{S12}/b/pytest.txt")).group(1))
    assert round(err * 1e6, 1) == measured and "float32" in load(f"{S12}/b/pytest.txt")
    # instruction counts, bfloat16 8 x 128 x 16 without and with SC_FAST
    before, after, ex2 = quoted(ch, r"went from (\d+) instructions to\s+(\d+), with the same (\d+) `MUFU.EX2`")
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.path.exists(tool):
        pytest.skip("no cuobjdump in the Triton package")
    def sass_counts(src):
        cubin, _ = cuda._nvrtc_compile(src, "sm_90")
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin + b"\0")  # cupy's getCUBIN drops the last byte (NOTES.md)
            f.flush()
            sass = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout
        lines = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(\S.*?);", sass, re.M)
        return len(lines), sum("MUFU.EX2" in ln for ln in lines)

    def registers(src):
        return cuda.parse_ptxas_report(cuda._nvrtc_compile(src, "sm_90")[1])["softmax_cluster"].registers

    # "as first written": the kernel before the guard for large maxima (commit FIRST_FAST, read from git)
    try:
        first_src = subprocess.run(["git", "show", f"{FIRST_FAST}:kernels_ref/ch03_online_softmax/softmax_cluster.cu"],
                                   cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"no git history with commit {FIRST_FAST} (the kernel as first written)")
    with tempfile.NamedTemporaryFile("w", suffix=".cu") as f:
        f.write(first_src)
        f.flush()
        old_src, sc.SRC = sc.SRC, f.name
        try:
            first = {(fast, mb): sc.source(True, 8, 128, 16, fast=fast, min_blocks=mb)
                     for fast, mb in ((False, 0), (True, 0), (True, 5))}
        finally:
            sc.SRC = old_src
    assert [sass_counts(first[False, 0]), sass_counts(first[True, 0])] == [(before, ex2), (after, ex2)]
    assert ex2 == 2 * 128 + 8  # two a value, 8 for the merge
    # registers as first written: 92 before, 128 with SC_FAST, 96 when 5 blocks an SM are asked for
    new, first_regs, asked = quoted(ch, r"the compiler gave the new kernel (\d+) a thread where the first had\s+(\d+)"
                                    r"\..*?brought it to (\d+) registers")
    regs = [registers(first[k]) for k in ((False, 0), (True, 0), (True, 5))]
    assert regs == [first_regs, new, asked]
    blocks = [65536 // (128 * (-(-r // 8) * 8)) for r in regs]  # 8 registers a thread at a time
    assert blocks == [5, 4, 5] and "(92 counts as 96)" in txt
    # the kernel as it is, with the guard: both loops compiled, and its registers
    both, mufu, unasked, with5 = quoted(ch, r"compiles both loops, the exact one and the FMA one: (\d+) instructions "
                                            r"and (\d+) `MUFU.EX2`.*?register choice: (\d+) a thread unasked and "
                                            r"(\d+) with `__launch_bounds__\(128, 5\)`")
    now = {mb: sc.source(True, 8, 128, 16, fast=True, min_blocks=mb) for mb in (0, 5)}
    assert sass_counts(now[0]) == (both, mufu) and mufu == 2 * ex2 - 8  # two loops, one merge
    assert [registers(now[0]), registers(now[5])] == [unasked, with5]
    assert {65536 // (128 * (-(-r // 8) * 8)) for r in (unasked, with5)} == {5}
    k16f = {"cluster": 8, "threads": 128, "vec": 16, "fast": True}
    spans = [_span(_rounds("a", H100, "candidate", LONG_BF16, cfg, S13)) for cfg in (k16f, dict(k16f, min_blocks=5))]
    b_mb5 = _span(_rounds("b", H100, "candidate", LONG_BF16, dict(k16f, min_blocks=5)))
    again = _span(_rounds("b", H100, "candidate", LONG_BF16, dict(k16f, min_blocks=5), S13))
    assert (f"they read {spans[0]}% and {spans[1]}%, and the second {again}% in another run the same day (`s13/b`); "
            f"before the guard, run `gpu_2026-11-27_s12/b` had read {b_mb5}% with the attribute") in txt
    # the sweeps
    k16 = {"cluster": 8, "threads": 128, "vec": 16}
    x32 = {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True}
    eight = [dict(cluster=8, threads=256, vec=8, one_exp=True), dict(cluster=8, threads=256, vec=8, one_exp=True,
                                                                      fast=True)]
    same = {"cluster": 8, "threads": 256, "vec": 8, "fast": True}
    assert (f"That lost on an H100: {_span(sum((_rounds('b', H100, 'candidate', LONG_BF16, c) for c in eight), []))}%, "
            f"against {_span(_rounds('b', H100, 'candidate', LONG_BF16, same))}% for the same block shape without it "
            f"and {_span(_rounds('b', H100, 'candidate', LONG_BF16, k16))}% for the kernel of 16 vectors") in txt
    c_bf16 = [_span(_rounds("c", H200, "candidate", LONG_BF16, cfg)) for cfg in
              (k16, dict(k16, fast=True), dict(k16, fast=True, min_blocks=5))]
    assert f"the `bfloat16` shape went from {c_bf16[0]}% to {c_bf16[1]}%." in txt
    assert f"brought it to {asked:.0f} registers and the shape to {c_bf16[2]}%" in txt
    four = _span(_rounds("c", H200, "candidate", LONG_BF16, dict(k16, fast=True, min_blocks=4)))
    assert f"asking for 4, which changes the code but not the number of blocks, read {four}%" in txt
    # the error at |m| = 5e4: half an ulp of m log2 e, times ln 2
    m5 = 5e4 * math.log2(math.e)
    assert "$|m| = 5 \\cdot 10^4$ each costs up to $2.7 \\cdot 10^{-3}$" in txt
    assert round(2.0 ** (math.floor(math.log2(m5)) - 24) * math.log(2), 4) == 0.0027
    c_f32 = [_span(_rounds("c", H200, "candidate", LONG_F32, cfg)) for cfg in (x32, dict(x32, fast=True))]
    assert f"went from {c_f32[0]}% to {c_f32[1]}%." in txt
    b_bf16 = [_span(_rounds("b", H100, "candidate", LONG_BF16, cfg)) for cfg in
              (k16, dict(k16, fast=True, min_blocks=5))]
    wide = ([1024, 262144], "bfloat16")
    b_wide = [_span(_rounds("b", H100, "candidate", wide, cfg)) for cfg in
              ({"cluster": 8, "threads": 512, "vec": 8}, {"cluster": 8, "threads": 512, "vec": 8, "fast": True})]
    assert (f"took `bfloat16` from {b_bf16[0]}% to {b_bf16[1]}% and the 1024 × 262 144 `bfloat16` rows from "
            f"{b_wide[0]}% to {b_wide[1]}%") in txt
    gap32, gap16, p16, cost32, cost16 = quoted(
        ch, r"The H200's long rows are still (\d+) and (\d+) points from its copy; the probe without arithmetic reads "
        r"[\d.-]+% and\s+([\d.]+)% there in the same run, so the arithmetic still costs (\d+) and (\d+) points")
    h200 = load("benchmarks/results/nvidia_h200.json")["records"]
    rep = {(tuple(r["shape"]), r["dtype"]): r["pct_copy"] for r in h200
           if r["kernel"] == "softmax" and r["impl"] == "flashcourse"}
    assert (round(100 - rep[_key(LONG_F32)]), round(100 - rep[_key(LONG_BF16)])) == (gap32, gap16)
    probe32 = _rounds("c", H200, "probe", LONG_F32, dict(x32, probe=3))
    probe16 = _rounds("c", H200, "probe", LONG_BF16, dict(k16, probe=3))
    assert _span(probe16) == f"{p16}" and f"reads {_span(probe32)}% and" in txt
    fast32 = _rounds("c", H200, "candidate", LONG_F32, dict(x32, fast=True))
    fast16 = _rounds("c", H200, "candidate", LONG_BF16, dict(k16, fast=True, min_blocks=5))
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    assert (round(mean(probe32) - mean(fast32)), round(mean(probe16) - mean(fast16))) == (cost32, cost16)


def test_ch03_cache_hint_outlives_its_kernel():
    """Chapter 3's paragraph on the evict_last lines that outlived the timer's old flush: its numbers against runs
    s23/c (pred_probe.py), e (evict_probe.py) and f (pred_probe.py with the new flush), all on an H200."""
    def pct(run, name, target, pred):
        doc = load(f"{S23}/{run}/{name}.json")
        assert doc["gpu"] == H200
        copy = max(doc["copy_gbps"])
        return statistics.median(100 * r["gbps"] / copy for r in doc["rows"]
                                 if r["target"] == target and r["pred"] == pred)
    after, lo, hi, probe, other, left_lo, left_hi, fixed = quoted(
        "ch03_online_softmax", r"timed right after `torch.compile`'s, read ([\d.]+)% of the copy bandwidth, and "
        r"([\d.]+)% to ([\d.]+)% after anything else \(run `benchmarks/gpu_2026-11-29_s23/c`\)\. A kernel of ours that "
        r"does nothing but read \$x\$ with the hint lifted Liger-Kernel's softmax just as much, ([\d.]+)%; the same "
        r"kernel reading another buffer of the same size did not, ([\d.]+)% \(run `e`\)\..{0,700}?read (\d)-(\d)% "
        r"faster, run `h`\).{0,200}?right after `torch.compile`'s, read ([\d.]+)% \(run `f`\)")
    others = [round(pct("c", "c1", "liger", p), 1) for p in ("torch", "ours", "liger", "copy", "idle", "nothing")]
    assert round(pct("c", "c1", "liger", "torch.compile"), 1) == after and (min(others), max(others)) == (lo, hi)
    assert round(pct("e", "e1", "liger", "read x evict_last"), 1) == probe and abs(probe - after) <= 0.5
    assert round(pct("e", "e1", "liger", "read other evict_last"), 1) == other and other < after - 1
    h = load(f"{S23}/h/h1.json")  # the flush's own lines left at evict_last: how much faster the next kernel read
    assert h["gpu"] == H200

    def gbps(flush, impl):
        return statistics.median(r["gbps"] for r in h["rows"] if r["flush"] == flush and r["impl"] == impl)
    gains = [100 * (gbps("new, no applypriority", i) / gbps("new", i) - 1) for i in {r["impl"] for r in h["rows"]}]
    assert (math.floor(min(gains)), math.ceil(max(gains))) == (left_lo, left_hi), gains
    assert round(pct("f", "f1", "liger", "torch.compile"), 1) == fixed and fixed < after - 1
    assert "evict_last" in load("course/timing.py") and "applypriority" in load("course/timing.py")


def test_ch03_split_rows_measured():
    f32, bf16 = quoted("ch03_online_softmax", r"run `benchmarks/gpu_2026-11-27_s11/b`\), the kernel above, in "
                       r"`kernels_ref/ch03_online_softmax/softmax_split_rows.py`, read ([\d.]+)% of the copy bandwidth "
                       r"at 1024 × 131 072 `float32`, where Section 9's online kernels read about 64%\. .{0,600}?"
                       r"It read ([\d.]+)% in the same run\.")
    b = _cluster_sweep("b", H100)
    assert _sweep_pct(b, "triton-configs", *LONG_F32, SPLIT_F32) == f32
    assert _sweep_pct(b, "triton-configs", *LONG_BF16, TWO_READ_BF16) == bf16
    # the acquire, timed with and without on an H100: three rounds of each, the spans quoted
    a_lo, a_hi, n_lo, n_hi, ba_lo, ba_hi, bn_lo, bn_hi = quoted(
        "ch03_online_softmax", r"the kernel read ([\d.]+)-([\d.]+)% of the copy bandwidth at 1024 × 131 072 `float32` "
        r"with the acquire and ([\d.]+)-([\d.]+)% without it, about 8 points; the `bfloat16` kernel described below, "
        r"([\d.]+)-([\d.]+)% against ([\d.]+)-([\d.]+)%")
    acq = load(f"{S11}/a/acq.json")
    assert acq["gpu"] == H100
    span = {}
    for r in acq["records"]:
        span.setdefault((r["dtype"], r["impl"], json.dumps(r["config"], sort_keys=True)), []).append(round(r["pct"], 1))
    f32_cfg, bf16_cfg = json.dumps(SPLIT_F32, sort_keys=True), json.dumps(TWO_READ_BF16, sort_keys=True)
    for key, lo, hi in ((("float32", "acquire (today)", f32_cfg), a_lo, a_hi),
                        (("float32", "no acquire (before)", f32_cfg), n_lo, n_hi),
                        (("bfloat16", "acquire (today)", bf16_cfg), ba_lo, ba_hi),
                        (("bfloat16", "no acquire (before)", bf16_cfg), bn_lo, bn_hi)):
        assert len(span[key]) == 3 and (min(span[key]), max(span[key])) == (lo, hi), key
    assert {tuple(r["shape"]) for r in acq["records"] if r["dtype"] == "float32"} == {(1024, 131072)}
    assert round(statistics_mean(span[("float32", "no acquire (before)", f32_cfg)])
                 - statistics_mean(span[("float32", "acquire (today)", f32_cfg)])) == 8  # "about 8 points"
    lo, hi, lo2, hi2 = quoted("ch03_online_softmax", r"reached ([\d.]+)-([\d.]+)% on that `bfloat16` shape and the "
                              r"second kernel ([\d.]+)-([\d.]+)%")
    runs = [load(f"benchmarks/gpu_2026-11-26_{run}/softmax_long_rows_sweep.json")["records"]
            for run in ("s8/sweeps", "s8/rerun", "s9/b", "s9/c")]
    held = [r["pct"] for recs in runs for r in recs
            if r["impl"] == "fast-default" and r["shape"] == [2048, 131072] and r["config"]["kernel"] == "split"]
    second = [r["pct"] for recs in runs for r in recs if r["impl"] == "candidate" and r["shape"] == [2048, 131072]
              and r["config"] == {"kernel": "long_rows", "k": 4, "block": 8192, "warps": 8, "per_sm": 3,
                                  "hints": True, "reverse": False, "stages": 1}]
    assert len(held) == 4 and (round(min(held), 1), round(max(held), 1)) == (lo, hi)
    assert len(second) == 4 and (round(min(second), 1), round(max(second), 1)) == (lo2, hi2)
    base, lo3, hi3 = quoted("ch03_online_softmax",
                            r"raised it from ([\d.]+)% to ([\d.]+)-([\d.]+)% of copy in two runs")
    plain, pre = [], []
    for k in (1, 2):
        for r in load(f"benchmarks/gpu_2026-11-26_s9/k/softmax_long_rows_sweep_{k}.json")["records"]:
            c = r.get("config") or {}
            if r["impl"] == "candidate" and r["shape"] == [2048, 131072] and c.get("kernel") == "chunks" \
                    and c["hints"] and not c["fresh"]:
                (pre if c["prescale"] else plain).append(round(r["pct"], 1))
    assert set(plain) == {base} and (min(pre), max(pre)) == (lo3, hi3) and len(pre) == 2
    cols, row_kib, rf_kib, regs = quoted("ch03_online_softmax", r"One program cannot keep it: a ([\d ]+)-column "
                                          r"`float32` row is (\d+) KiB, twice the (\d+) KiB .{0,120}?\(([\d ]+) "
                                          r"registers of 4 bytes\)")
    chunk, chunk_kib, per_thread, threads, warps, k = quoted(
        "ch03_online_softmax", r"With \$C = ([\d\\,]+)\$ \((\d+) KiB of `float32`: (\d+) values in each of the "
        r"(\d+) threads of a (\d+)-warp program\) a 131 072-column row has \$K = (\d+)\$ chunks")
    assert cols * 4 == row_kib * 1024 == 2 * rf_kib * 1024 and regs * 4 == rf_kib * 1024
    assert chunk * 4 == chunk_kib * 1024 and per_thread * threads == chunk and threads == 32 * warps
    assert cols / chunk == k


def test_ch03_cluster_measured():
    """Section 9's thread-block cluster: the reports' numbers, the sweeps' side-by-side numbers and the block shapes,
    each against the committed JSON it comes from; the sizes the text derives, recomputed."""
    ch = "ch03_online_softmax"
    h100_f32, h100_bf16, h200_f32, h200_bf16 = quoted(
        ch, r"In the course's report on an H100 \(2026-11-27, `flashcourse bench --report`, run "
        r"`benchmarks/gpu_2026-11-27_s13/e`\) it read ([\d.]+)% of the copy bandwidth at 1024 × 131 072 `float32`, "
        r"as fast as a copy, which is what reading \$x\$ once and writing \$y\$ once allows, and ([\d.]+)% at "
        r"2048 × 131 072 `bfloat16`; on an H200 \(run `benchmarks/gpu_2026-11-29_s23/g`, its first report\) "
        r"([\d.]+)% and ([\d.]+)%")
    assert h100_f32 >= 99.5  # "as fast as a copy"
    old_f32, old_bf16, first_f32, first_bf16 = quoted(
        ch, r"Its report at that point \(run `benchmarks/gpu_2026-11-27_s11/n`\)\s+read ([\d.]+)% at the "
        r"`float32` shape and ([\d.]+)% at the `bfloat16` one, .{0,170}?the first version had read ([\d.]+)% and\s+"
        r"([\d.]+)% there \(run `d`\)")
    reports = {}
    for rel, gpu, f32, bf16, date in (
            ("benchmarks/results/nvidia_h100_80gb_hbm3.json", H100, h100_f32, h100_bf16, "2026-11-27"),
            ("benchmarks/results/nvidia_h200.json", H200, h200_f32, h200_bf16, "2026-11-29")):
        rep = load(rel)
        assert rep["gpu"] == gpu and rep["date"] == date
        ours = {(tuple(r["shape"]), r["dtype"]): r for r in rep["records"]
                if r["kernel"] == "softmax" and r["impl"] == "flashcourse"}
        assert round(ours[((1024, 131072), "float32")]["pct_copy"], 1) == f32
        assert round(ours[((2048, 131072), "bfloat16")]["pct_copy"], 1) == bf16
        reports[gpu] = (rep, ours)
    # each report is the named run's (its report.log prints the same GB/s)
    for run, gpu, log_name in ((f"{S13}/e", H100, "report.log"), (f"{S23}/g", H200, "g1.log")):
        log = load(f"{run}/{log_name}")
        assert f"copy {round(reports[gpu][0]['copy_gbps'])} GB/s" in log  # the percentages' denominator too
        assert (load(f"{run}/gpu.txt") if os.path.exists(os.path.join(ROOT, run, "gpu.txt"))
                else load(f"{run}/info.txt")).splitlines()[0].strip() == gpu
        for shape, dtype in (LONG_F32, LONG_BF16):
            gbps = round(reports[gpu][1][(tuple(shape), dtype)]["gbps"])
            assert re.search(rf"softmax\s+{shape[0]}x{shape[1]}\s+{dtype}\s+flashcourse\s+{gbps} GB/s", log)
    # the eleventh session's reports, quoted as they were: l (H100) and n (H200), from their logs
    old = {run: _log_pcts(f"{S11}/{run}/report.log") for run in ("l", "n")}
    assert (old["n"][_key(LONG_F32)], old["n"][_key(LONG_BF16)]) == (old_f32, old_bf16)
    c_f32, c_bf16, t_f32, t_bf16, d_f32, d_bf16, dt_f32, dt_bf16 = quoted(
        ch, r"the first version read, on an H100 \(run `b`, as above\), ([\d.]+)% and ([\d.]+)% against ([\d.]+)% "
        r"and ([\d.]+)% for the Triton kernels, and on an H200 \(run `d`\) ([\d.]+)% and ([\d.]+)% against "
        r"([\d.]+)% and ([\d.]+)%\.")
    f32_cfg = {"cluster": 8, "threads": 128, "vec": 32}
    bf16_cfg = {"cluster": 8, "threads": 128, "vec": 16}
    for run, gpu, cf, cb, tf, tb in (("b", H100, c_f32, c_bf16, t_f32, t_bf16),
                                     ("d", H200, d_f32, d_bf16, dt_f32, dt_bf16)):
        recs = _cluster_sweep(run, gpu)
        assert _sweep_pct(recs, "candidate", *LONG_F32, f32_cfg) == cf
        assert _sweep_pct(recs, "candidate", *LONG_BF16, bf16_cfg) == cb
        assert _sweep_pct(recs, "triton-configs", *LONG_F32, SPLIT_F32) == tf
        assert _sweep_pct(recs, "triton-configs", *LONG_BF16, TWO_READ_BF16) == tb
    (above,) = quoted(ch, r"now hands `float32` and `bfloat16` rows of more\s+than ([\d ]+) columns to this CUDA "
                      r"kernel on Hopper GPUs")
    assert f"CLUSTER_ABOVE = {int(above)}" in load("kernels_ref/ch03_online_softmax/softmax_split_rows.py")
    # the shipped CONFIGS are the configurations quoted (8 blocks of 128 threads, 32 / 16 vectors a thread)
    cfg_src = load("kernels_ref/ch03_online_softmax/softmax_cluster.py")
    assert '(131072, {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True, "fast": True})' in cfg_src
    assert '(131072, {"cluster": 8, "threads": 128, "vec": 16, "fast": True, "min_blocks": 5})' in cfg_src
    small, mid, large = quoted(ch, r"128-thread blocks of 32 vectors a thread read ([\d.]+)% at\s+the `float32` "
                               r"shape, 512-thread blocks of 8 vectors ([\d.]+)% and 256-thread blocks of 16 vectors "
                               r"([\d.]+)%, the\s+same 16 384 columns a block in all three")
    a = _cluster_sweep("a", H100)
    for (threads, vec), pct in (((128, 32), small), ((512, 8), mid), ((256, 16), large)):
        assert _sweep_pct(a, "candidate", *LONG_F32, {"cluster": 8, "threads": threads, "vec": vec}) == pct
        assert threads * vec * 4 == 16384
    # the cache hints: run k (the kernel with and without them), run l (the probe, data movement only)
    assert "LD, ST = 2, 1" in cfg_src  # the shipped default: no hint (softmax_cluster.cu's SC_LD 2, SC_ST 1)
    nf, nb, hf, hb = quoted(ch, r"the same kernel without the hints read ([\d.]+)% and ([\d.]+)% against "
                            r"([\d.]+)% and ([\d.]+)% with them")
    k = _cluster_sweep("k", H100)
    x32 = dict(f32_cfg, one_exp=True)
    assert _sweep_pct(k, "candidate", *LONG_F32, dict(x32, ld=2, st=1)) == nf
    assert _sweep_pct(k, "candidate", *LONG_BF16, dict(bf16_cfg, ld=2, st=1)) == nb
    assert _sweep_pct(k, "candidate", *LONG_F32, x32) == hf  # run k's default was still the hints (ld 0, st 0)
    assert _sweep_pct(k, "candidate", *LONG_BF16, bf16_cfg) == hb
    with_h, without = quoted(ch, r"read ([\d.]+)% with the hints and ([\d.]+)% without \(run `l`\)")
    ll = _cluster_sweep("l", H100)
    # what a config without "ld"/"st" meant at each run's commit: the hints in k (9c1e8a5), none in l (2234094)
    assert load(f"{S11}/k/head.txt").strip() == "9c1e8a5" and load(f"{S11}/l/head.txt").strip() == "2234094"
    assert _sweep_pct(ll, "probe", *LONG_F32, dict(x32, ld=0, st=0, probe=3)) == with_h
    assert _sweep_pct(ll, "probe", *LONG_F32, dict(x32, probe=3)) == without
    short, probe_bf16 = quoted(ch, r"The `bfloat16` kernel then stayed (\d+)\s+points short of the copy; the same "
                               r"probe in `bfloat16` read ([\d.]+)% \(run `l`\)")
    assert round(100 - old["l"][_key(LONG_BF16)]) == short
    assert _sweep_pct(ll, "probe", *LONG_BF16, dict(bf16_cfg, probe=3)) == probe_bf16
    level = [_sweep_pct(ll, "candidate", *LONG_F32, c) for c in (x32, f32_cfg)]
    assert abs(level[0] - level[1]) <= 0.1  # "without them the two are level (run `l`)"
    # the copy bandwidths of the two reports and their ratio
    h200_copy, h100_copy = quoted(ch, r"about 1\.4 times as fast as the H100's\s+\((\d+) GB/s against (\d+) GB/s in "
                                  r"the eleventh session's two reports\)")
    assert (h200_copy, h100_copy) == (round(old["n"]["copy"]), round(old["l"]["copy"]))
    assert round(h200_copy / h100_copy, 1) == 1.4
    # run d's report.log is the first version's H200 report (the numbers quoted for it; GB/s printed to the unit)
    dlog = load(f"{S11}/d/report.log")
    copy = float(re.search(r"copy ([\d.]+) GB/s; wrote", dlog).group(1))
    for (shape, dtype), pct in ((LONG_F32, first_f32), (LONG_BF16, first_bf16)):
        gbps = float(re.search(rf"softmax\s+{shape[0]}x{shape[1]}\s+{dtype}\s+flashcourse\s+([\d.]+) GB/s",
                               dlog).group(1))
        assert abs(100 * gbps / copy - pct) < 0.06
    # where the rest goes on the H200: the data-movement probe (run n) and one exponential an element
    p32, p16, k32, k16, cost32, cost16 = quoted(
        ch, r"moving the data alone reads ([\d.]+)%\s+\(`float32`\) and ([\d.]+)% \(`bfloat16`\) on the H200 "
        r"\(run `n`\), against ([\d.]+)% and ([\d.]+)% for the kernel in the\s+same run, so the arithmetic costs "
        r"(\d+) and (\d+) points there")
    n = _cluster_sweep("n", H200)
    assert _sweep_pct(n, "probe", *LONG_F32, dict(f32_cfg, one_exp=True, probe=3)) == p32
    assert _sweep_pct(n, "probe", *LONG_BF16, dict(bf16_cfg, probe=3)) == p16
    assert _sweep_pct(n, "candidate", *LONG_F32, dict(f32_cfg, one_exp=True)) == k32
    assert _sweep_pct(n, "candidate", *LONG_BF16, bf16_cfg) == k16
    assert (round(p32 - k32), round(p16 - k16)) == (cost32, cost16)
    (h100_cost16,) = quoted(ch, r"against next to nothing and (\d+) points on the\s+H100")
    assert _sweep_pct(ll, "probe", *LONG_F32, dict(x32, probe=3)) - _sweep_pct(ll, "candidate", *LONG_F32, x32) < 0.5
    assert round(_sweep_pct(ll, "probe", *LONG_BF16, dict(bf16_cfg, probe=3))
                 - _sweep_pct(ll, "candidate", *LONG_BF16, bf16_cfg)) == h100_cost16
    on, off = quoted(ch, r"On the H200 that read ([\d.]+)% against ([\d.]+)% \(run `n`\)")
    assert _sweep_pct(n, "candidate", *LONG_F32, dict(f32_cfg, one_exp=True)) == on
    assert _sweep_pct(n, "candidate", *LONG_F32, f32_cfg) == off
    sms, slower = quoted(ch, r"The H200 has as many SMs as the H100 \((\d+)\), and a copy 1\.4 times as fast\s+"
                         r"leaves each SM about ([\d.]+) times the H100's time per byte")
    assert load(f"{S11}/a/cluster.json")["sms"] == load(f"{S11}/d/cluster.json")["sms"] == sms
    assert round(h100_copy / h200_copy, 1) == slower
    # one exponential an element (run f, H100) and the persistent clusters that lost (run e, H200)
    one, two = quoted(ch, r"on an H100, ([\d.]+)% against ([\d.]+)%\s+with the hints "
                      r"\(`benchmarks/gpu_2026-11-27_s11/f`\)")
    f = _cluster_sweep("f", H100)
    assert _sweep_pct(f, "candidate", *LONG_F32, dict(f32_cfg, one_exp=True)) == one
    assert _sweep_pct(f, "candidate", *LONG_F32, f32_cfg) == two
    lo, hi, plain = quoted(ch, r"Clusters that stay and loop over rows lost: ([\d.]+) to ([\d.]+)% in `float32` on an "
                           r"H200 \(`benchmarks/gpu_2026-11-27_s11/e`\), against ([\d.]+)% for the first version")
    e = _cluster_sweep("e", H200)
    persist = [round(r["pct"], 1) for r in e if r["impl"] == "candidate" and r["shape"] == list(LONG_F32[0])
               and r["dtype"] == LONG_F32[1] and "per_sm" in r["config"]]
    assert len(persist) == 3 and (min(persist), max(persist)) == (lo, hi)
    assert _sweep_pct(e, "candidate", *LONG_F32, f32_cfg) == plain
    few, runs, asks, fits = quoted(ch, r"fewer blocks than fit \((\d) an SM, where the kernel\s+runs (\d)\) or "
                                   r"more clusters than can run at once \((\d) an SM asks for (\d+) clusters")
    (most,) = quoted(ch, r"where Nsight Compute counts\s+at most (\d+) for this kernel on an H100")
    assert {r["config"]["per_sm"] for r in e if "per_sm" in r.get("config", {}) and r["dtype"] == "float32"} == {
        few, asks}
    assert re.search(rf"Block Limit Registers\s+block\s+{int(runs)}\b", load(f"{S11}/g/ncu.txt"))
    assert re.search(rf"Max Active Clusters\s+cluster\s+{int(most)}\b", load(f"{S11}/g/ncu.txt"))
    assert sms * asks // 8 == fits > most
    # the sizes the text derives: P columns a block, 8 P a row, 32 vectors of 4 float32 values a thread
    p, row, vecs, per_vec, per_thread, threads, per_block = quoted(
        ch, r"part \$r\$ of the row, \$P = ([\d\\,]+)\$ columns: the chunk \$C\$ of the ticket kernel, so "
        r"\$8P = ([\d\\,]+)\$ columns, one row\. In `float32` a 128-thread block holds its part as (\d+) vectors "
        r"of 16 bytes in each thread, \$32 \\cdot (\d) = (\d+)\$ values a thread and \$(\d+) \\cdot 128 = "
        r"([\d\\,]+)\$ a block")
    assert 8 * p == row == 131072 and vecs * per_vec == per_thread and per_vec * 4 == 16
    assert per_thread * threads == per_block == p == f32_cfg["threads"] * f32_cfg["vec"] * 4
    (bf16_vecs,) = quoted(ch, r"`bfloat16` packs 8 values in a vector: (\d+) vectors a thread")
    assert bf16_vecs == bf16_cfg["vec"] and bf16_vecs * 8 * 128 == p
    (merges,) = quoted(ch, r"(\d) merges each, against 16 384 values loaded")
    assert merges == f32_cfg["cluster"] - 1
