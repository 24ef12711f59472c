"""ch04_flash_attention: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)
from prose_util import H200


def test_ch04_speeds_match_the_recorded_h100_runs():
    ref = _bench("benchmarks/ch04_bench_h100.json", "ch04.flash_attention_triton", [4, 32, 4096, 128], "reference")
    flash = _bench("benchmarks/ch04_bench_h100.json", "ch04.flash_attention_triton", [4, 32, 4096, 128], "sdpa flash")
    cudnn = _bench("benchmarks/ch04_bench_h100.json", "ch04.flash_attention_triton", [4, 32, 4096, 128], "sdpa cudnn")
    sweep = "benchmarks/ch04_attention_sweep_h100.json"
    q_ref, f_lo, f_hi, c_lo, c_hi = quoted(
        "ch04_flash_attention", r"in Triton\) ran at about (\d+) TFLOP/s, PyTorch's flash backend \(FlashAttention-2\) "
        r"at (\d+) to (\d+) and its cuDNN backend at (\d+) to (\d+) \(two runs\)")
    for measured in (ref["tflops"], _sweep(sweep, 4096, 128, True, "triton reference")):
        assert abs(measured - q_ref) <= 10
    for lo, hi, runs in ((f_lo, f_hi, (flash["tflops"], _sweep(sweep, 4096, 128, True, "sdpa flash"))),
                         (c_lo, c_hi, (cudnn["tflops"], _sweep(sweep, 4096, 128, True, "sdpa cudnn")))):
        assert sorted(round(r, -1) for r in runs) == [lo, hi]
    four, eight = quoted("ch04_flash_attention", r"\): (\d+) TFLOP/s against (\d+) with 8 warps \(causal\)")
    assert _benchmarks_md_row("| 128, 64, 4, 3 |", H100_H200_CH4).rstrip(" |").endswith(f"| {int(four)}")
    assert _benchmarks_md_row("| 128, 64, 8, 3 |", H100_H200_CH4).rstrip(" |").endswith(f"**{int(eight)}**")
    (mat,) = quoted("ch04_flash_attention", r"three-kernel version ran at (\d+) TFLOP/s on an H100")
    assert f"| {int(mat)} (" in _benchmarks_md_row("| known-wrong: materialised S", H100_H200_CH4)
    assert 9.5 <= ref["tflops"] / mat <= 11  # "ten times slower"


def test_ch04_fast_reference_numbers():
    """Section 8: the count of tensor-core FLOPs against exponentials from NVIDIA's published H100 SXM figures, and
    the Gluon kernel's speeds against cuDNN from the committed H200 benchmark report (benchmarks/results/)."""
    ch = "ch04_flash_attention"
    ops, tflops, sms, ghz, exps, exp_rate = quoted(
        ch, r"about (\d+) `bfloat16` tensor-core FLOPs \((\d+) TFLOP/s over (\d+) SMs at ([\d.]+) GHz, the clock at "
        r"which NVIDIA reckons the 989\) and (\d+) exponentials \(the special-function units: ([\d.]+) T/s\)")
    assert abs(tflops * 1e12 / (sms * ghz * 1e9) - ops) / ops < 0.01
    assert round(exps * sms * ghz / 1e3, 1) == exp_rate
    mm128, ex = quoted(ch, r"At \$D = 128\$ that is \$([\d.]+)\$ against \$([\d.]+)\$")
    assert mm128 == 4 * 128 / ops and ex == 1 / exps
    idle, step = quoted(ch, r"idle for a third of each step at \$D = 128\$ \(\$([\d.]+)\$ of \$([\d.]+)\$\)")
    assert (idle, step) == (ex, mm128 + ex) and idle / step == 1 / 3 and (4 * 64 / ops) == ex  # D 64: half
    doc = load("benchmarks/results/nvidia_h200.json")
    assert doc["gpu"] == "NVIDIA H200" and f"copy {round(doc['copy_gbps'])} GB/s" in load(f"{S23}/g/g1.log")
    att = {(r["shape"][3], r["shape"][2], r["causal"], r["impl"]): r["tflops"] for r in doc["records"]
           if r["kernel"] == "attention_fwd" and r.get("tflops")}
    assert all(r["shape"][:2] == [4, 32] and r["dtype"] == "bfloat16" for r in doc["records"]
               if r["kernel"] == "attention_fwd" and r["shape"][2:] == [4096, 128])
    ours, ours_c, cud, cud_c, ahead, ahead_c = quoted(
        ch, r"on an H200 \(`bfloat16`, \$B = 4\$, \$H = 32\$, \$T = 4096\$, \$D = 128\$\), ran at (\d+) TFLOP/s "
        r"\(causal (\d+)\), and cuDNN at (\d+) \(causal (\d+)\) in the same run: (\d+)% ahead without the mask, "
        r"(\d+)% with it")
    assert [round(att[(128, 4096, c, i)]) for i in ("flashcourse", "sdpa-cudnn") for c in (False, True)] == [
        ours, ours_c, cud, cud_c]
    assert round(100 * (ours / cud - 1)) == ahead and round(100 * (ours_c / cud_c - 1)) == ahead_c
    assert all(len(r["ms_rounds"]) == 3 for r in doc["records"] if r["kernel"] == "attention_fwd" and "ms_rounds" in r)
    # "at this shape: ... three consumer warpgroups with P through shared memory instead of ping-pong"
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    assert "three consumer warpgroups with $P$ through shared memory instead of ping-pong" in flat(ch)
    for causal in (False, True):
        cfg = fg.choose(128, 4096, causal)
        assert cfg.num_consumers == 3 and cfg.p_bufs and not cfg.pingpong


def test_ch04_register_budget():
    """Section 8's register count for warp specialisation (setmaxnreg), against the Gluon kernel's own split."""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    ch = "ch04_flash_attention"
    (per,) = quoted(ch, r"its 65 536 registers are \$65\\,536 / 128 = (\d+)\$ for each of a warpgroup's 128 thread")
    assert per == 65536 // 128
    prod, two, allow = quoted(ch, r"gives its producer's warpgroup (\d+) and each of two consumer warpgroups (\d+) "
                              r"\(\$\(512 - \d+\)/2 = (\d+)\$, rounded down to a multiple of 8\)")
    assert allow == (per - prod) // 2 and two == allow // 8 * 8
    assert prod == fg.Config(192, 128, 2, 3).producer_regs and two == fg.consumer_regs(fg.Config(128, 128, 2, 2))
    s_regs, p_regs, acc, total = quoted(
        ch, r"the scores \(\$64 \\cdot 128 / 128 = (\d+)\$ registers in `float32`\), \$P\$ in `bfloat16` for the "
        r"next product \((\d+), two to a register\) and the output accumulator \(\$64 \\cdot D / 128 = D/2\$, (\d+) "
        r"at \$D = 128\$\): (\d+), plus")
    assert (s_regs, p_regs, acc) == (64 * 128 // 128, 64 * 128 // 2 // 128, 128 // 2) and total == s_regs + p_regs + acc
    approx, three = quoted(ch, r"Three consumer groups would get \$\(512 - 24\)/3 \\approx (\d+)\$, rounded down to "
                           r"(\d+) each")
    assert approx == round((per - prod) / 3) and three == (per - prod) // 3 // 8 * 8 == fg.consumer_regs(fg.THREE_128)
    assert three == total  # nothing left for addresses and statistics: spills


def test_ch04_pin():
    """Section 8's point on keeping the exponentials between the two waits (Config.pin): run s22/c (PIN_SWEEP, one
    process, medians of 3 interleaved rounds, H200) at D 64 with the mask, the same config with and without it;
    D 128 (s22/c without the mask at T 1024, s23/a with it at T 2048, PIN_OFF_SWEEP) not helped. (The machine
    code's count: tests/test_attention_gluon.py::test_pin_keeps_the_exponentials_beside_the_p_v.)"""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    ch = "ch04_flash_attention"
    g_lo, g_hi, lo, hi = quoted(ch, r"at \$D = 64\$ with the causal mask, where the exponentials weigh most, that "
                                r"made the kernel (\d+) to (\d+)% faster on an H200 \(\$T\$ from (\d+) to (\d+)\), and at \$D = 128\$ it "
                          r"did not help")
    c1, a1 = load(f"{S22}/c/c1.json"), load(f"{S23}/a/a1.json")
    assert c1["device"] == a1["device"] == H200 and c1["rounds"] == a1["rounds"] == 3
    assert (c1["sweep"], a1["sweep"]) == ("PIN_SWEEP", "PIN_OFF_SWEEP")

    def t(doc, D, T, causal, v):
        (rec,) = [r for r in doc["records"] if (r["D"], r["T"], r["causal"]) == (D, T, causal)
                  and r["variant"].endswith(v)]
        return rec["tflops"]
    seam, reg = fg.SEAM_64, fg.REG_128
    pin = lambda c: c._replace(pin=True).name()  # noqa: E731
    Ts = [T for T in (1024, 2048, 4096, 8192) if lo <= T <= hi]
    ratios = [t(c1, 64, T, True, pin(seam)) / t(c1, 64, T, True, "choose " + seam.name()) for T in Ts]
    assert len(ratios) == 3 and (round(100 * (min(ratios) - 1)), round(100 * (max(ratios) - 1))) == (g_lo, g_hi)
    assert t(c1, 128, 1024, False, pin(reg)) <= 1.01 * t(c1, 128, 1024, False, "choose " + reg.name())
    assert t(a1, 128, 2048, True, "choose " + pin(reg)) <= 1.01 * t(a1, 128, 2048, True, reg.name())
    assert "](../../course/diagrams/wait_placement.png)" in load(f"source/{ch}/{ch}.nb.md")


def test_ch04_pingpong_gains():
    """Section 8's ping-pong sentence against the two check runs (attention_gluon_check.py --pingpong)."""
    ch = "ch04_flash_attention"
    lo, hi = quoted(ch, r"taking turns gained (\d+) to (\d+)% at \$D = 128\$ without the mask \(\$T\$ = 2048 and "
                    r"4096, on an H100 and an H200\)")
    (worst,) = quoted(ch, r"elsewhere it gained nothing, or lost up to (\d+)%")
    gains, others = [], []
    for run, gpu in (("e", "H200"), ("g", "H100")):
        assert gpu in load(f"benchmarks/gpu_2026-11-27_s11/{run}/gpu.txt")
        log = load(f"benchmarks/gpu_2026-11-27_s11/{run}/pp.log")
        for D, T, causal, cfg, ratio in re.findall(r"D=(\d+) T=(\d+) causal=(\w+): (\S+) pingpong/choose ([\d.]+)",
                                                   log):
            if D == "128" and causal == "False" and not cfg.endswith("-p") and T in ("2048", "4096"):
                gains.append(float(ratio))
            else:
                others.append(float(ratio))
    assert len(gains) == 4 and (round(100 * (min(gains) - 1)), round(100 * (max(gains) - 1))) == (lo, hi)
    assert max(others) < 1.01 and round(100 * (1 - min(others))) == worst

