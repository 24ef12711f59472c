"""Chapter 4's fast reference (kernels_ref/ch04_flash_attention/flash_attention_fast.py): which kernel it runs, and that
its answer is right, against float64 attention. On the CPU it must fall back to the teaching kernel (the interpreter
runs it); on a Hopper GPU the Gluon kernel runs, with each config `choose` picks (D 64 and 128, causal or not, short
and long sequences: the long-sequence cases reach the three-consumer configs, THREE_128 and THREE_64 (with the mask),
whose 192-row query tiles end partial there; D 64 SEAM_64 (two query buffers, without the mask the seams overlapped)
with the softmax kept beside the warpgroup's own P V (SEAM_PIN_64, causal below T 16384, without the mask below T 2048),
from T 2048 below 4096 without the mask the same with row sums per thread (SEAM_LS_PIN_64), from T 4096 without the
pin (SEAM_LS_64); D 128 up to T 2048 REG_128, with the mask from T 1152), on inputs whose every score
is very negative too, and a T that is no multiple of its tiles falls back; the configs with P in shared memory also
one by one."""
import pytest
import torch

from course import mode
from kernels_ref.ch04_flash_attention import flash_attention_fast as ff
from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
from tests.test_attention_hopper import run


def _run(shape, causal, dtype, device, kind="randn"):
    """The fast reference against float64 (test_attention_hopper's check); the kernel it ran."""
    run(shape, causal, dtype, kind=kind, device=device, impl=ff.flash_attention)
    return ff.last_kernel()


@pytest.mark.skipif(mode.GPU, reason="the CPU's fallback")
def test_on_the_cpu_the_teaching_kernel_runs():
    assert _run((1, 2, 64, 32), True, torch.float16, "cpu") == "teaching"
    assert not ff.gluon_applies(torch.zeros(1, 1, 128, 64))


def test_the_report_times_it():
    from kernels_ref.bench import FAST_REFERENCES
    assert FAST_REFERENCES["ch04.flash_attention_triton"][1:] == (
        "kernels_ref.ch04_flash_attention.flash_attention_fast", "flash_attention")


def _hopper() -> bool:
    return mode.GPU and torch.cuda.get_device_capability()[0] == 9 and fg.HAS_GLUON


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [128, 384, 1024, 2048])
def test_gluon_on_hopper(D, causal, T):
    assert _run((2, 3, T, D), causal, torch.bfloat16, "cuda") == "gluon"


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("D,T,causal", [(128, 4096, False), (128, 4096, True), (64, 16384, True)])
def test_gluon_three_consumers_on_long_sequences(D, T, causal):
    """choose()'s three consumer warpgroups with P through shared memory (THREE_64, THREE_128), where it takes them:
    4096 and 16384 are no multiples of their 192-row query tiles, so the last one is partial."""
    assert fg.choose(D, T, causal) in (fg.THREE_64, fg.THREE_128) and T % fg.choose(D, T, causal).BLOCK_M
    assert _run((1, 2, T, D), causal, torch.bfloat16, "cuda") == "gluon"


def test_choose_takes_the_measured_configs():
    assert [fg.choose(128, T, False) for T in (512, 1024, 2048, 4096, 16384)] == [fg.REG_128] * 3 + [fg.THREE_128] * 2
    assert fg.REG_128.p_bufs == 0 and fg.REG_128.q_bufs == 2 and fg.REG_128.lazy_sum and not fg.REG_128.overlap
    assert fg.choose(128, 1024, True) == fg.choose(128, 1088, True) == fg.SHORT_128  # 1088: no multiple of 128
    assert fg.choose(128, 1152, True) == fg.choose(128, 2048, True) == fg.REG_128 and not fg.REG_128.pin
    assert fg.choose(128, 4096, True) == fg.THREE_128
    assert [fg.choose(64, T, False) for T in (1024, 1920, 2048, 2176, 4096, 16384)] == (
        [fg.SEAM_PIN_64] * 2 + [fg.SEAM_LS_PIN_64] * 2 + [fg.SEAM_LS_64] * 2)  # 2176: 17 x 128
    assert fg.SEAM_LS_64.lazy_sum and not fg.SEAM_64.lazy_sum  # the one field the two differ in, below
    assert fg.SEAM_LS_64._replace(lazy_sum=False) == fg.SEAM_64
    assert fg.SEAM_PIN_64 == fg.SEAM_64._replace(pin=True) and fg.SEAM_LS_PIN_64 == fg.SEAM_LS_64._replace(pin=True)
    assert fg.choose(64, 384, True) == fg.choose(64, 4096, True) == fg.choose(64, 8192, True) == fg.SEAM_PIN_64
    assert fg.SEAM_64 == fg.BALANCED_64._replace(q_bufs=2, overlap=True) == fg.CONFIGS[64]._replace(
        balanced="lpt", q_bufs=2, overlap=True)
    assert fg.choose(64, 16384, True) == fg.THREE_64
    assert fg.WIDE_64.BLOCK_N == 256 and fg.WIDE_64.p_bufs == fg.PERSIST_128.p_bufs == 1
    assert fg.THREE_64.num_consumers == fg.THREE_128.num_consumers == 3 and fg.THREE_128.p_bufs == 1


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("causal", [False, True])
def test_gluon_fp16_and_very_negative_scores(causal):
    assert _run((1, 2, 256, 64), causal, torch.float16, "cuda") == "gluon"
    assert _run((1, 2, 256, 128), causal, torch.bfloat16, "cuda", kind="negative") == "gluon"


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
def test_a_length_gluon_does_not_take_falls_back():
    assert _run((1, 2, 200, 64), True, torch.bfloat16, "cuda") == "teaching"


# The sweep's newer Gluon configs (benchmarks/attention_gluon_check.py), called directly: persistent CTAs (phases of
# every mbarrier running on across work items; num_sms=3 gives each CTA many items) and three consumer warpgroups
# (BLOCK_M 192: T = 128 and 1024 end in a partial query tile).
NEW_CONFIGS = [(D, cfg) for D, cfgs in fg.SWEEP.items() for cfg in cfgs
               if (cfg.persistent or cfg.num_consumers == 3) and cfg.BLOCK_N < 256]  # WIDE_64: P_BUF_CONFIGS below


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("D,cfg", NEW_CONFIGS, ids=[f"D{D}-{cfg.name()}" for D, cfg in NEW_CONFIGS])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [128, 384, 1024])
@pytest.mark.parametrize("num_sms", [None, 3])
def test_gluon_new_configs_on_hopper(D, cfg, causal, T, num_sms):
    fg.check_config(cfg, D, T)
    run((2, 3, T, D), causal, torch.bfloat16, device="cuda",
        impl=lambda q, k, v, o, c: fg.flash_attention(q, k, v, o, c, cfg, num_sms=num_sms))


def test_new_configs_take_the_tested_lengths():
    for D, cfg in NEW_CONFIGS:
        for T in (128, 384, 1024):
            fg.check_config(cfg, D, T)


# P through shared memory (Config.p_bufs): two buffers a warpgroup, persistent CTAs (num_sms=3: many work items a CTA,
# the P buffers' ring running on across them), ping-pong turns with one and two buffers, and choose()'s configs with P
# buffers themselves (three consumers; WIDE_64's 256-key tiles; PERSIST_128, once choose()'s for D 128 T <= 1024);
# each on float16 and on scores that are all very negative too (the running max starts at -inf).
P_BUF_CONFIGS = [(64, fg.Config(192, 128, 2, 3, p_bufs=2)), (64, fg.Config(192, 128, 2, 3, persistent=True, p_bufs=2)),
                 (64, fg.Config(192, 128, 2, 3, pingpong=True, p_bufs=1)),
                 (64, fg.Config(192, 128, 2, 3, pingpong=True, p_bufs=2)),
                 (128, fg.Config(192, 64, 3, 3, persistent=True, p_bufs=1)), (128, fg.Config(128, 128, 2, 2, p_bufs=1)),
                 (64, fg.THREE_64), (128, fg.THREE_128), (64, fg.WIDE_64), (128, fg.PERSIST_128)]


def _lengths(cfg):
    """Two lengths the config takes: 384 (two whole 192-row query tiles) where it fits, else 512; and 1024 (for 192-row
    tiles a partial last one)."""
    return (384 if 384 % cfg.BLOCK_N == 0 else 512), 1024


def _on_both_lengths(D, cfg, causal):
    """bf16 against float64 on 2 x 3 heads of both _lengths, persistent configs also on 3 SMs (many items a CTA)."""
    for T in _lengths(cfg):
        for num_sms in ((None, 3) if cfg.persistent else (None, )):
            run((2, 3, T, D), causal, torch.bfloat16, device="cuda",
                impl=lambda q, k, v, o, c: fg.flash_attention(q, k, v, o, c, cfg, num_sms=num_sms))


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("D,cfg", P_BUF_CONFIGS, ids=[f"D{D}-{cfg.name()}" for D, cfg in P_BUF_CONFIGS])
@pytest.mark.parametrize("causal", [False, True])
def test_gluon_p_through_shared_memory(D, cfg, causal):
    _on_both_lengths(D, cfg, causal)
    run((1, 2, 1024, D), causal, torch.float16, device="cuda",
        impl=lambda q, k, v, o, c: fg.flash_attention(q, k, v, o, c, cfg))
    run((1, 2, _lengths(cfg)[0], D), causal, torch.bfloat16, kind="negative", device="cuda",
        impl=lambda q, k, v, o, c: fg.flash_attention(q, k, v, o, c, cfg, num_sms=3))


def test_p_buffer_configs_take_the_tested_lengths():
    assert all(cfg.p_bufs for _, cfg in P_BUF_CONFIGS)
    for D, cfg in P_BUF_CONFIGS:
        for T in _lengths(cfg):
            fg.check_config(cfg, D, T)


# Two changes to the softmax's code, each run causal and not, with a partial last query tile, with many work items a
# CTA (num_sms=3), and in float16 on very negative scores: row sums kept per thread (Config.lazy_sum;
# flash_attention_gluon.LAZY_SUM_SWEEP, PERSIST_128 and choose()'s THREE_128, REG_128 and SEAM_LS_64, the last two in
# test_gluon_item_seams: each thread's partial sums, added across the row's 4 threads once an item; the sweep's D 128
# entries are the same configs without, for comparison), and the softmax kept beside the warpgroup's own P V
# (Config.pin: the row sums through a warp barrier before the wait; PIN_SWEEP, choose()'s configs with it).
LAZY_CONFIGS = [(D, cfg) for D, cfgs in fg.LAZY_SUM_SWEEP.items() for cfg in cfgs] + [(128, fg.THREE_128)]
PIN_CONFIGS = [(D, cfg) for D, cfgs in fg.PIN_SWEEP.items() for cfg in cfgs]
SOFTMAX_CONFIGS = LAZY_CONFIGS + PIN_CONFIGS


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("D,cfg", SOFTMAX_CONFIGS, ids=[f"D{D}-{cfg.name()}" for D, cfg in SOFTMAX_CONFIGS])
@pytest.mark.parametrize("causal", [False, True])
def test_gluon_softmax_variants(D, cfg, causal):
    _on_both_lengths(D, cfg, causal)
    run((1, 2, _lengths(cfg)[0], D), causal, torch.float16, kind="negative", device="cuda",
        impl=lambda q, k, v, o, c: fg.flash_attention(q, k, v, o, c, cfg, num_sms=3))


def test_lazy_sum_configs_take_the_tested_lengths():
    assert fg.PERSIST_128.lazy_sum and fg.THREE_128.lazy_sum and not fg.THREE_64.lazy_sum
    assert all(cfg.lazy_sum for cfg in fg.LAZY_SUM_SWEEP[64])
    for D, cfg in LAZY_CONFIGS:
        for T in _lengths(cfg):
            fg.check_config(cfg, D, T)


def test_pin_configs_take_the_tested_lengths():
    chosen = {(D, fg.choose(D, T, causal)) for D in (64, 128) for T in (1024, 2048, 4096, 8192, 16384)
              for causal in (False, True)}
    assert {(D, cfg._replace(pin=False)) for D, cfg in PIN_CONFIGS} >= {(D, c._replace(pin=False)) for D, c in chosen}
    assert {(D, c) for D, c in chosen if c.pin} <= set(PIN_CONFIGS)  # choose()'s pinned configs themselves
    for D, cfg in PIN_CONFIGS:
        for T in _lengths(cfg):
            fg.check_config(cfg, D, T)


# The balanced schedule (Config.balanced): the host deals the query tiles to the persistent CTAs longest first
# (flash_attention_gluon.schedule). The table, checked on the CPU; the kernels that read it, on the GPU.
def test_balanced_schedule_by_hand():
    """T 256, 128-row tiles, 2 heads, 3 SMs, causal: tile 1 costs 2 key tiles + 1, tile 0 1 + 1. The two tile 1s go
    to CTAs 0 and 1, head 0's tile 0 to CTA 2, which then has the least work and gets head 1's tile 0 too."""
    cfg = fg.CONFIGS[64]._replace(balanced="lpt")
    assert fg.ITEM_COST == 1 and cfg.BLOCK_M == cfg.BLOCK_N == 128
    assert fg.schedule(256, 2, cfg, True, 3) == [0, 1, 2, 4] + [1, 3, 0, 2]
    assert fg.schedule(256, 2, cfg, False, 8) == [0, 1, 2, 3, 4] + [0, 1, 2, 3]  # 4 tiles: 4 CTAs
    # One CTA: "deal" keeps the order dealt (both tile 1s, then both tile 0s), "lpt" goes head by head.
    assert fg.schedule(256, 2, cfg._replace(balanced="deal"), True, 1) == [0, 4] + [1, 3, 0, 2]
    assert fg.schedule(256, 2, cfg, True, 1) == [0, 4] + [1, 0, 3, 2]
    # "tail": _work_item's pairs in whole rounds, the last round's tiles dealt. T 512, 4 tiles, pairs (3, 0), (2, 1):
    # 2 heads = 4 pairs; on 3 CTAs one round (pairs 0-2), then head 1's pair (2, 1) dealt as tiles 6 and 5.
    t = fg.schedule(512, 2, cfg._replace(balanced="tail"), True, 3)
    assert t == [0, 3, 6, 8] + [3, 0, 6] + [2, 1, 5] + [7, 4]


def _pairs_loads(n_q, BH, n_sms, cost):
    """The work per CTA of _work_item's schedule: pairs (n_q-1-r, r) of one head, round robin over the CTAs."""
    n_pairs = (n_q + 1) // 2
    loads = [0] * min(n_sms, n_pairs * BH)
    for w in range(n_pairs * BH):
        r = w % n_pairs
        loads[w % len(loads)] += cost(n_q - 1 - r) + (cost(r) if r != n_q - 1 - r else 0)
    return loads


@pytest.mark.parametrize("D,T,causal", [(64, 1024, True), (64, 2048, True), (64, 4096, True), (128, 1024, True),
                                        (128, 2048, True), (64, 384, True), (64, 1024, False)])
@pytest.mark.parametrize("policy", fg.SCHEDULES)
def test_balanced_schedule_shares_the_work_out(D, T, causal, policy):
    """Every tile once; ("lpt") each CTA's tiles head by head; the busiest CTA within one tile of the mean (greedy's
    bound: its last tile went to the least loaded CTA) and, causal, below the pairs' busiest."""
    BH, n_sms = 128, 132
    cfg = (fg.CONFIGS[64] if D == 64 else fg.SHORT_128)._replace(balanced=policy)
    n_q = T // cfg.BLOCK_M
    table = fg.schedule(T, BH, cfg, causal, n_sms)
    P = len(table) - 1 - BH * n_q
    offsets, entries = table[:P + 1], table[P + 1:]
    n_pairs = (n_q + 1) // 2
    assert P == min(n_sms, BH * (n_pairs if policy == "tail" else n_q)) and offsets[0] == 0
    assert offsets[-1] == len(entries) and all(a < b for a, b in zip(offsets, offsets[1:]))  # no CTA without work
    assert sorted(entries) == list(range(BH * n_q))

    def cost(tile):
        return fg.ITEM_COST + (-(-(tile + 1) * cfg.BLOCK_M // cfg.BLOCK_N) if causal else T // cfg.BLOCK_N)
    mine = [entries[offsets[p]:offsets[p + 1]] for p in range(P)]
    if policy == "lpt":
        assert all([it // n_q for it in m] == sorted(it // n_q for it in m) for m in mine)
    loads = [sum(cost(it % n_q) for it in m) for m in mine]
    assert max(loads) <= sum(loads) / P + cost(n_q - 1)
    if causal:
        assert max(loads) < max(_pairs_loads(n_q, BH, n_sms, cost))


# BALANCED_SWEEP's configs, and three consumer warpgroups with a table (192-row query tiles: T 1024 ends in a partial
# one; lpt and tail).
BALANCED_CONFIGS = [(D, cfg) for D, cfgs in fg.BALANCED_SWEEP.items() for cfg in cfgs if cfg.balanced] + [
    (64, fg.Config(192, 128, 2, 3, persistent=True, p_bufs=2, balanced=b)) for b in ("lpt", "tail")]


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("D,cfg", BALANCED_CONFIGS, ids=[f"D{D}-{cfg.name()}" for D, cfg in BALANCED_CONFIGS])
@pytest.mark.parametrize("causal", [False, True])
def test_gluon_balanced_schedule(D, cfg, causal):
    _on_both_lengths(D, cfg, causal)


# The seams between work items (Config.q_bufs, Config.overlap): OVERLAP_SWEEP's, SEAM_SWEEP's and SEAM_LS_SWEEP's
# configs, and three consumer warpgroups with both (192-row query tiles: T 384 and 768 are whole tiles, so they take
# _consumer_overlap without the mask; T 1024 ends in a partial tile and takes _consumer_persistent with two query
# buffers).
OVERLAP_CONFIGS = [(D, cfg) for sweep in (fg.OVERLAP_SWEEP, fg.SEAM_SWEEP, fg.SEAM_LS_SWEEP)
                   for D, cfgs in sweep.items() for cfg in cfgs if cfg.q_bufs > 1 or cfg.overlap] + [
    (64, fg.Config(192, 128, 2, 3, persistent=True, p_bufs=1, balanced="lpt", q_bufs=2, overlap=True))]


@pytest.mark.skipif(not _hopper(), reason="needs a Hopper GPU and Gluon")
@pytest.mark.parametrize("D,cfg", OVERLAP_CONFIGS, ids=[f"D{D}-{cfg.name()}" for D, cfg in OVERLAP_CONFIGS])
@pytest.mark.parametrize("causal", [False, True])
def test_gluon_item_seams(D, cfg, causal):
    """Both lengths on every SM and on 3, then one SM (every item of the problem through one CTA's seams, both query
    buffers many times over), and T 768 (whole 192-row tiles) on 5 SMs."""
    _on_both_lengths(D, cfg, causal)
    for T, num_sms in ((_lengths(cfg)[0], 1), (768, 5)):
        if T % cfg.BLOCK_N == 0:
            run((2, 3, T, D), causal, torch.bfloat16, device="cuda",
                impl=lambda q, k, v, o, c: fg.flash_attention(q, k, v, o, c, cfg, num_sms=num_sms))


def test_seam_configs_take_the_tested_lengths():
    with pytest.raises(ValueError, match="q_bufs"):
        fg.check_config(fg.CONFIGS[128]._replace(q_bufs=2), 128)  # not persistent
    with pytest.raises(ValueError, match="overlap"):
        fg.check_config(fg.CONFIGS[64]._replace(overlap=True), 64)  # no table
    with pytest.raises(ValueError, match="overlap"):
        fg.check_config(fg.BALANCED_64._replace(overlap=True, pingpong=True), 64)
    with pytest.raises(ValueError, match="2\\+ stages"):  # one stage would deadlock at the seam (check_config)
        fg.check_config(fg.BALANCED_64._replace(overlap=True, num_stages=1), 64)
    for D, cfg in OVERLAP_CONFIGS:
        for T in _lengths(cfg) + (768, ):
            if T % cfg.BLOCK_N == 0:
                fg.check_config(cfg, D, T)
    # A second query buffer costs BLOCK_M x D elements and two barriers.
    assert fg.smem_bytes(fg.BALANCED_64._replace(q_bufs=2), 64) - fg.smem_bytes(fg.BALANCED_64, 64) == 128 * 64 * 2 + 16


def test_balanced_configs_take_the_tested_lengths():
    assert all(cfg.balanced and cfg.persistent for _, cfg in BALANCED_CONFIGS)
    with pytest.raises(ValueError, match="persistent"):
        fg.check_config(fg.THREE_64._replace(balanced="lpt"), 64)
    with pytest.raises(ValueError, match="one of"):
        fg.check_config(fg.CONFIGS[64]._replace(balanced="random"), 64)
    for D, cfg in BALANCED_CONFIGS:
        for T in _lengths(cfg):
            fg.check_config(cfg, D, T)
