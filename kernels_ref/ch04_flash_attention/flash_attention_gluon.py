"""Candidate: a FlashAttention-3-style forward for Hopper (sm_90a), written in Gluon.

Same contract as `flash_attention_hopper.py` (`flash_attention(q, k, v, o, causal)`, q/k/v/o (B, H, T, D)
contiguous bf16 or fp16, o written in place, softmax scale D**-0.5 with log2(e) folded in for exp2, fp32
statistics and accumulator). Supported: D in {64, 128} and T a multiple of the config's BLOCK_M /
num_consumers and of BLOCK_N (a last partial query tile: the warpgroups past T compute nothing);
anything else raises ValueError (it does not fall back: a benchmark must never time another kernel under
this name). Gluon is Triton's lower level: we choose the layouts, the shared buffers, the
barriers and which warps run which code; the compiler does not pipeline or specialize for us.

Why plain Triton stops short of cuDNN on Hopper, by counting. Per key tile of BLOCK_N keys, a query
tile of M rows does two GEMMs (S = Q Kᵀ and O += P V, 4·M·BLOCK_N·D flops) and a softmax over M·BLOCK_N
scores (a max, an FMA, an exp2, a sum per score, plus the O rescale). An H100 SXM's tensor cores do
about 990 TFLOP/s of bf16, its special-function units about 3.9 T exp2/s (16 per SM per clock, 132
SMs, 1.83 GHz). For D = 128 the GEMMs of a tile take 4·128/990e12 = 0.52 ps per score, the exp2
alone 1/3.9e12 = 0.26 ps per score (the whole GPU's time per score): the softmax is half as long as
the GEMMs. Done one after the other (Triton's single instruction stream, each wgmma waited before the
softmax uses its result) the tensor cores idle a third of the time or more, if nothing else on the SM
fills the gap: 990 · 0.52/(0.52 + 0.26) = 660 TFLOP/s before the FMAs, max and sum (the Triton
candidate, flash_attention_hopper.py, measured about 500 on an H100: archived run gpu_2026-11-26_s10/h
and i). For D = 64 the GEMMs halve and the softmax does not, so it is worse. The
only way up is to run the softmax *while* the tensor cores work. Hopper gives us three tools:

* wgmma is asynchronous: `warpgroup_mma(..., is_async=True)` returns at once; the warpgroup can run
  other instructions until `warpgroup_mma_wait(n)` (at most n groups still in flight).
* TMA: one thread issues a whole tile copy, global -> shared, in the swizzled layout wgmma reads;
  completion is counted in bytes on an mbarrier (`mbarrier.expect` + the copy's `tx` bytes).
* `setmaxnreg`: warpgroups of one CTA can hand registers to each other at run time.

The kernel's partitions (`gl.warp_specialize`), FlashAttention-3's design:

* Producer (worker partition, 1 warp, 24 registers): loads the CTA's query tile once, then for each
  key tile j the K tile and the V tile into stage j % NUM_STAGES of a ring of shared buffers. Before
  reusing a stage it waits that stage's `k_empty`/`v_empty` barrier (the consumers are done with the
  previous tile there); each copy completes that stage's `k_ready`/`v_ready` barrier when its bytes
  have landed. It does no math, so it needs only a few registers: `setmaxnreg` hands the rest to the
  consumers, which need ~200 per thread (the S tile, the P tile and the O accumulator live in
  registers: for 64 rows per warpgroup and BLOCK_N = D = 128 that is 64 + 32 + 64 per thread, plus
  addresses and statistics). Loads run ahead of the math by up to NUM_STAGES tiles, so memory latency
  never shows in the consumers' loop.
* Consumers (the default partition, NUM_CONSUMERS warpgroups of 4 warps, each owning BLOCK_M /
  NUM_CONSUMERS query rows, sharing every K/V tile in shared memory): the online softmax with
  FlashAttention-3's intra-warpgroup overlap. Iteration j issues S_j = Q K_jᵀ and then
  O += P_{j-1} V_{j-1} (both async, in that order), waits only for S_j, runs the softmax of tile j
  (row max, exp2, row sum) while P_{j-1} V_{j-1} is still on the tensor cores, then waits for it,
  releases the K and V stages, and rescales O by exp2(m_old - m_new). So within one warpgroup the
  softmax of tile j overlaps the PV GEMM of tile j-1. Across warpgroups, the warp schedulers
  interleave two (or more) consumer warpgroups: while one is in its exp2s, the other's wgmmas keep the
  tensor cores fed (FA3's inter-warpgroup overlap; FA3 forces strict ping-pong with named barriers,
  Gluon 3.6 has none, here it comes from the scheduler; Config.pingpong forces it with one mbarrier per
  warpgroup, _turn_wait; choose() took it for D 128's non-persistent tiles when not causal, PINGPONG_128, until
  three consumer warpgroups (THREE_128) beat it).
  P goes from the S accumulator's registers to the A operand of the PV wgmma without shared memory:
  the wgmma accumulator and A-operand register layouts hold the same rows in the same threads. Or
  (Config.p_bufs, FA3's choice for D 64) through one or two shared buffers a warpgroup, which frees P's
  registers while its P V runs: room for a third consumer warpgroup (PSMEM_SWEEP), or for 256-key tiles'
  scores beside the accumulator (WIDE_64, SHORT_SWEEP).

Causal: key tiles right of the diagonal are never loaded; only tiles that straddle the diagonal are
masked (a second loop); the grid runs the longest query tiles first so the short ones fill the tail.
The output goes registers -> the query tile's shared buffer (free by then) -> one TMA store.

Configs per head dimension in CONFIGS (the two-consumer baselines), SHORT_128, THREE_*, WIDE_64, PERSIST_128,
BALANCED_64 (the persistent CTAs' query tiles shared out by the host: Config.balanced, schedule()), SEAM_64, SEAM_LS_64
and REG_128 (two query buffers, Config.q_bufs; SEAM_64 also overlaps the seams between work items, Config.overlap, and
SEAM_LS_64 keeps its row sums per thread as well), and SEAM_PIN_64 and SEAM_LS_PIN_64 (the same with the softmax kept
beside the warpgroup's own P V in the machine code, Config.pin: _pin); choose() says
which runs where; every field can be overridden per call (a GPU sweep picks:
benchmarks/attention_gluon_check.py).
"""
from __future__ import annotations

from typing import NamedTuple

import triton

from kernels_ref import sm_count

try:  # Gluon's Hopper module: triton >= 3.5 (checked: 3.6.0, 3.7.1)
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma,
                                                                  warpgroup_mma, warpgroup_mma_wait)
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    HAS_GLUON = True
except ImportError:  # pragma: no cover - older triton
    HAS_GLUON = False

LOG2E = 1.4426950408889634


class Config(NamedTuple):
    BLOCK_M: int        # query rows per CTA, split evenly over the consumer warpgroups (64 or 128 each)
    BLOCK_N: int        # keys per K/V tile
    num_stages: int     # K/V ring depth in shared memory
    num_consumers: int  # consumer warpgroups (the default partition has 4 * num_consumers warps)
    producer_regs: int = 24  # registers per thread of the TMA producer warp (setmaxnreg)
    persistent: bool = False  # one CTA per SM looping over (query tile, head) work items (see _persistent_kernel)
    pingpong: bool = False  # the consumer warpgroups take turns issuing their GEMMs (FA3's ping-pong: _turn_wait)
    p_bufs: int = 0  # 0: P goes to the P V wgmma in registers; 1 or 2: through that many shared buffers a warpgroup
    lazy_sum: bool = False  # each thread sums its own columns of a row; the 4 threads' sums added once (_row_sum)
    balanced: str = ""  # persistent: a table from the host says which CTA runs which query tile (schedule): "lpt",
    # "deal" or "tail" (SCHEDULES)
    q_bufs: int = 1  # persistent: query-tile buffers; 2: the next item's query tiles load while this item runs
    overlap: bool = False  # persistent with a table: the next item's first Q Kᵀ runs during this item's last P V and
    # output store (_consumer_overlap; without the mask and with whole query tiles, else the plain loop, though the
    # name keeps its "-ov")
    pin: bool = False  # the softmax kept before the wait for the warpgroup's own P V (_pin)

    def name(self) -> str:
        return (f"gluon-BM{self.BLOCK_M}-BN{self.BLOCK_N}-s{self.num_stages}-c{self.num_consumers}"
                + (f"-r{self.producer_regs}" if self.producer_regs != 24 else "") + ("-p" if self.persistent else "")
                + ("-pp" if self.pingpong else "") + (f"-ps{self.p_bufs}" if self.p_bufs else "")
                + ("-ls" if self.lazy_sum else "") + (f"-{self.balanced}" if self.balanced else "")
                + (f"-q{self.q_bufs}" if self.q_bufs != 1 else "") + ("-ov" if self.overlap else "")
                + ("-pin" if self.pin else ""))


# FA3's tiles for Hopper: 64 query rows per consumer warpgroup, 128-key tiles, two warpgroups per CTA (choose() now
# takes them for D 64 as SEAM_64: the balanced schedule, two query buffers and, without the mask, the seams overlapped;
# with the softmax kept beside the warpgroup's own P V (SEAM_PIN_64) with the mask below T 16384 and without it below
# T 2048; without the mask from T 2048, at any length, with row sums per thread, and the pin below T 4096
# (SEAM_LS_PIN_64, SEAM_LS_64); for D 128 REG_128 keeps
# them with row sums per thread and two query buffers; CONFIGS[128] and its ping-pong variant no longer). Chosen by
# benchmarks/attention_gluon_check.py on an H100 (bf16, B 4, H 32, TFLOP/s; archived run gpu_2026-11-26_s10/h, i):
# D 64: persistent, 3 stages, within 3% of the best candidate on every T and both maskings (T 1024 causal 254
#   against 217 for the same tiles not persistent; T 16384 causal 453 against 389);
# D 128: 128-key tiles, 2 stages, not persistent (T 8192: 650 against 561-578 persistent), except on short
#   sequences (choose): T 1024 causal 391 persistent with 64-key tiles against 336; T 2048 causal 508 against 481.
CONFIGS = {64: Config(128, 128, 3, 2, persistent=True), 128: Config(128, 128, 2, 2)}
SHORT_128 = Config(128, 64, 3, 2, persistent=True)  # D 128 where a sequence gives few key tiles per query tile


# Ping-pong (Config.pingpong), timed against choose()'s configs of the time in one process with cuDNN beside them
# (benchmarks/attention_gluon_check.py --pingpong, medians of 3 interleaved rounds; archived run
# gpu_2026-11-27_s11/e on an H200, /g on an H100): CONFIGS[128] not causal gains at T 2048 (x1.028 H200, x1.025
# H100) and T 4096 (x1.047, x1.021); causal T 4096 is even (x1.004, x0.998); the persistent configs lose or stay even
# (x0.959-1.003). So: ping-pong for D 128's non-persistent tiles when not causal (T 8192 and 16384 were not in those
# checks; the H100 report, gpu_2026-11-27_s11/l, has them at 1.02 and 1.03x cuDNN).
PINGPONG_128 = CONFIGS[128]._replace(pingpong=True)  # choose()'s until THREE_128 (below) replaced it


# Three consumer warpgroups, P through one shared buffer each (Config.p_bufs; PSMEM_SWEEP), timed against choose()'s
# earlier configs and cuDNN in one process on an H200 (benchmarks/attention_gluon_check.py --psmem, medians of 3
# interleaved rounds, TFLOP/s; archived run gpu_2026-11-28_s16/a and b):
# D 128 not causal T 2048 666-667 against 627-628 (ping-pong, PINGPONG_128), T 4096 709 / 650, T 8192 689 / 651,
#   T 16384 681 / 648; causal T 4096 612 / 607, T 8192 655 / 625, T 16384 661 / 626; T 1024 not causal 507 against
#   SHORT_128's 511 and causal T 2048 478 against 515 (so not THREE_128 there; choose() now takes REG_128 for T 1024
#   not causal, SEAM_SWEEP, and for causal T 2048, PIN_OFF_SWEEP).
# D 64 T 8192 477 / 467, causal 451 / 444; T 16384 473-474 / 462-464, causal 455-469 / 454-458; at T <= 4096 not
#   ahead (4096: 464-465 / 462, causal 392 / 413; 1024-2048: 3-23% behind), so CONFIGS[64]'s tiles stay there (SEAM_64).
# Ping-pong on top (three turns, another process) read within 2% of these (gpu_2026-11-28_s16/b; 3% with two P buffers).
# Row sums kept per thread (Config.lazy_sum, LAZY_SUM_SWEEP below) took it further for D 128 (archived run
# gpu_2026-11-28_s18/e: T 2048 676 against 662, causal T 4096 634 against 605); for D 64 they did not (causal T 16384
# 459 against 457), so THREE_64 keeps the shuffles.
THREE_128 = Config(192, 128, 2, 3, p_bufs=1, lazy_sum=True)
THREE_64 = Config(192, 128, 2, 3, p_bufs=1)  # THREE_128's tiles, row sums across the 4 threads every tile


# Not causal, where choose() was still behind cuDNN (SHORT_SWEEP below), timed against choose()'s earlier configs and
# cuDNN in one process on an H200 (benchmarks/attention_gluon_check.py --psmem --sweep SHORT_SWEEP, medians of 3
# interleaved rounds, TFLOP/s; archived run gpu_2026-11-28_s17/a and b):
# D 64, WIDE_64 (256-key tiles, persistent, P through one shared buffer a warpgroup) against CONFIGS[64] (T <= 4096)
#   or THREE_64 (T >= 8192): T 1024 376-377 / 374-375 (cuDNN 396-397), T 2048 453-454 / 430, T 4096 502-504 /
#   463-464 (484-485), T 8192 491 / 479 (471), T 16384 481 / 469 (469). When causal it lost everywhere (T 1024 210
#   against 256, T 4096 383 against 411: a 256-key tile on the diagonal is mostly masked).
# D 128 T 1024, PERSIST_128 (persistent BM128-BN128, P through one shared buffer) against SHORT_128: 540-541 / 509-511
#   (cuDNN 562); causal 378 / 405 (SHORT_128 stays); T 2048 639 against THREE_128's 661.
# Ping-pong on top of either read lower (T 1024 D 128 533, D 64 T 1024-16384 357-467).
# PERSIST_128 with row sums kept per thread (Config.lazy_sum; gpu_2026-11-28_s18/e): 556 against 542 (cuDNN 562).
# (choose() takes neither now: REG_128 for D 128 T 1024, SEAM_SWEEP; for D 64 without the mask SEAM_LS_64 and, below
# T 4096, SEAM_LS_PIN_64, SEAM_LS_SWEEP and PIN_SWEEP.)
WIDE_64 = Config(128, 256, 2, 2, persistent=True, p_bufs=1)
PERSIST_128 = Config(128, 128, 2, 2, persistent=True, p_bufs=1, lazy_sum=True)


def choose(D: int, T: int, causal: bool) -> Config | None:
    """The config flash_attention runs when none is given (the measurements above each): D 128 not causal
    REG_128 up to T 2048, causal SHORT_128 up to T 1024 and REG_128 to T 2048 (SHORT_128 where T is no multiple of
    128), THREE_128 beyond; D 64 not causal SEAM_PIN_64 below T 2048, SEAM_LS_PIN_64 from it below 4096, then
    SEAM_LS_64; causal SEAM_PIN_64 below T 16384, THREE_64 from it. SEAM_64 is CONFIGS[64] with the balanced
    schedule, two query buffers and, without the mask, the seams overlapped; LS: its row sums per thread; PIN: the
    softmax kept beside the warpgroup's own P V."""
    if D == 128 and not causal and T <= 2048:
        return REG_128
    if D == 128 and causal and T <= 2048:
        return REG_128 if T > 1024 and T % REG_128.BLOCK_N == 0 else SHORT_128
    if D == 128:
        return THREE_128
    if D == 64 and not causal and T >= 4096:
        return SEAM_LS_64
    if D == 64 and not causal and T >= 2048:
        return SEAM_LS_PIN_64
    if D == 64 and causal and T >= 16384:
        return THREE_64
    if D == 64:
        return SEAM_PIN_64
    return CONFIGS.get(D)


# Candidates for the GPU check, best guesses first (each fits 227 KB of shared memory and the register file).
SWEEP = {
    64: [Config(128, 128, 3, 2), Config(128, 128, 2, 2), Config(128, 128, 4, 2), Config(128, 64, 4, 2),
         Config(64, 128, 3, 1),
         Config(128, 128, 3, 2, persistent=True), Config(128, 128, 2, 2, persistent=True),
         Config(192, 64, 3, 3), Config(192, 64, 3, 3, persistent=True)],
    128: [Config(128, 128, 2, 2), Config(128, 128, 3, 2), Config(128, 64, 4, 2), Config(128, 64, 3, 2),
          Config(64, 128, 2, 1),
          Config(128, 64, 3, 2, persistent=True), Config(128, 64, 4, 2, persistent=True)],
}
SWEEP[64] += [THREE_64, WIDE_64]  # choose()'s with P through shared memory (PSMEM_SWEEP, SHORT_SWEEP)
SWEEP[128] += [THREE_128, PERSIST_128]
# Compiled offline (triton 3.6.0, ptxas 12.8, sm_90a): all of SWEEP without spills, but THREE_128 when causal (56 B
# of spill stores under triton 3.6.0 and 3.7.1; loads 72-84 B under 3.7.1, 100 B under 3.6.0) and WIDE_64 when causal
# (52 B under 3.7.1; choose() takes it only without the mask)
# (tests/test_attention_gluon.py checks the new ones: persistent, three consumers, a partial last query tile; and
# CONFIGS[64] and SHORT_128 with the balanced schedule, BALANCED_SWEEP).
# Left out: 128 rows per consumer with D = 64 (BM256-BN64: 16 B of spills when causal, 12 B persistent
# even without), three consumers with BLOCK_N = 128 and P in registers (BM192-BN128: kilobytes of spills at 160
# registers) and the persistent BM128-BN128-s2 for D = 128
# (12 B of spills when causal; the persistent loop's counters cost the consumers a few registers).
# P through shared memory (Config.p_bufs), FlashAttention-3's choice for D 64 (192 x 128 tiles, three consumer
# warpgroups; its tile_size_fwd_sm90 also names 192 x 128 with P in shared memory as "quite good" for D 128). In
# registers, P (bf16, BLOCK_N / 4 registers a thread) stays live while its P V wgmma runs, beside the next tile's S
# (BLOCK_N / 2) and the accumulator (D / 2): three consumers (160 registers each) spilled kilobytes. Written to a
# shared buffer, P's registers die at once. Compiled offline (triton 3.7.1, Triton's ptxas, sm_90a): every config
# below without spills, causal or not, with a last partial query tile or not, except D 128 BM192-BN128 when causal
# (56 B of spill stores) and the persistent D 128 BM192-BN64-ps1 when causal (20 B). Timed by
# benchmarks/attention_gluon_check.py --psmem against choose() and cuDNN.
PSMEM_SWEEP = {
    64: [Config(192, 128, 2, 3, p_bufs=2), Config(192, 128, 3, 3, p_bufs=2), Config(192, 128, 2, 3, p_bufs=1),
         Config(192, 128, 2, 3, persistent=True, p_bufs=2), Config(128, 128, 3, 2, p_bufs=2),
         Config(256, 64, 3, 2), Config(192, 128, 2, 3, pingpong=True, p_bufs=1),
         Config(192, 128, 2, 3, pingpong=True, p_bufs=2)],
    128: [Config(192, 64, 3, 3, p_bufs=2), Config(192, 64, 4, 3, p_bufs=2), Config(192, 128, 2, 3, p_bufs=1),
          Config(128, 128, 2, 2, p_bufs=1), Config(192, 64, 3, 3, persistent=True, p_bufs=1),
          Config(192, 128, 2, 3, pingpong=True, p_bufs=1)],
}
# Where choose() (its configs of the time) was behind cuDNN in the H200 report (archived run gpu_2026-11-28_s16/c: D 64
# T 1024-4096, 0.92-0.96x; D 128 T 1024 not causal, 0.92x): larger key tiles for D 64 (BLOCK_N 256 halves the work done
# once a tile, the row reductions, O's rescale, the barrier waits; its 64 x 256 scores are 128 registers a thread, so P
# goes through shared memory), 128 query rows a warpgroup (BM256-BN64), and P through shared memory in the persistent
# configs. Compiled offline (triton 3.7.1, Triton's ptxas, sm_90a) without spills, but BM128-BN256-s2-c2-p-ps1 when
# causal (52 B, ping-pong or not); with P in registers BM128-BN256 spills about 1 KB, and BM256-BN128 with P in shared
# memory 100 B or more. Timed by benchmarks/attention_gluon_check.py --psmem --sweep SHORT_SWEEP.
SHORT_SWEEP = {
    64: [Config(128, 256, 2, 2, p_bufs=1), Config(128, 256, 2, 2, persistent=True, p_bufs=1),
         Config(128, 256, 2, 2, pingpong=True, p_bufs=1), Config(256, 64, 3, 2, p_bufs=1),
         Config(256, 64, 3, 2, persistent=True, p_bufs=1), Config(256, 64, 4, 2, p_bufs=2),
         Config(128, 128, 3, 2, persistent=True, p_bufs=1),
         Config(128, 256, 2, 2, persistent=True, pingpong=True, p_bufs=1),
         # causal: narrower key tiles waste less of the diagonal tile (64 keys: half of it). gpu_2026-11-28_s17/e: none
         # won clearly (T 1024-2048 2-20% behind choose(); T 4096-8192 the three-consumer one 1% ahead, within the
         # spread)
         Config(128, 64, 4, 2, persistent=True), Config(128, 64, 4, 2, persistent=True, p_bufs=2),
         Config(192, 64, 3, 3, persistent=True), Config(192, 64, 4, 3, persistent=True, p_bufs=1)],
    128: [Config(128, 128, 2, 2, persistent=True, p_bufs=1), Config(128, 64, 3, 2, persistent=True, p_bufs=1),
          Config(128, 64, 4, 2, persistent=True, p_bufs=2), Config(128, 128, 2, 2, p_bufs=1),
          Config(192, 128, 2, 3, p_bufs=1), Config(128, 128, 2, 2, persistent=True, pingpong=True, p_bufs=1)],
}
# Row sums kept per thread (Config.lazy_sum, FlashAttention-3's choice). Nsight Compute on the H200 (archived run
# gpu_2026-11-28_s18/d, D 64 T 1024 causal, CONFIGS[64] against cuDNN's kernel, which has the same tiles) finds ours
# issuing on 39% of the cycles against cuDNN's 46%, with more stalls on the MIO queue (0.34 warps a cycle against 0.06:
# shuffles, shared-memory stores, mbarrier operations). A row's sum across the 4 threads that share it costs two
# shuffles a row a tile; kept per thread, once an item. Timed against choose()'s configs of the time
# (gpu_2026-11-28_s18/e, TFLOP/s, medians of 3 rounds): D 128 T 1024 556 against 542 (PERSIST_128; cuDNN 562), T 2048
# 676 / 662 and causal T 4096 634 / 605 (THREE_128); D 64 no gain (causal T 1024 258 / 257, T 4096 398 / 413, T 16384
# 459 / 457; T 1024 not causal 365 / 367). So PERSIST_128 and THREE_128 keep them, the D 64 configs do not (but
# SEAM_LS_64, below, without the mask). Compiled offline (triton 3.7.1) without spills but WIDE_64's when causal (56 B)
# and THREE_128's when causal (20 B stores, 40 B loads). The D 128 lists hold the configs without (as choose() took them
# before this measurement), for a rerun against choose().
LAZY_SUM_SWEEP = {
    64: [CONFIGS[64]._replace(lazy_sum=True), WIDE_64._replace(lazy_sum=True), THREE_64._replace(lazy_sum=True)],
    128: [SHORT_128._replace(lazy_sum=True), PERSIST_128._replace(lazy_sum=False), THREE_128._replace(lazy_sum=False)],
}
# The balanced schedule (Config.balanced). The pairs of _work_item even out a causal head's tiles, but the CTAs get
# whole pairs, round robin: 512 pairs (D 64 T 1024, B 4, H 32) over 132 SMs give 116 CTAs four and 16 three, so the
# kernel lasts 4 pairs where 3.88 would do, about 3% (T 2048-8192 lose about as much; the loss depends on the remainder:
# 16384 gives 63 rounds for 62.06, 1.5%). The host knows every tile's work before the launch (its key tiles), so it can
# share the tiles out better: "lpt": longest first, each to the CTA with the least work so far (greedy LPT: longest
# processing time first); then each CTA runs its tiles head by head (meant to keep the CTAs running at one time on
# nearby heads, K/V in L2; it does not: a CTA's share spans the heads, and each starts on its lowest). "deal": the same
# shares, each CTA's tiles in the order they were dealt (longest first). "tail": the pairs' whole rounds as _work_item
# runs them (each CTA a long tile, then the short one of the same head, whose K/V it has just read), and only the last,
# partial round's tiles dealt longest first. Timed against the pairs and cuDNN on an H200
# (benchmarks/attention_gluon_check.py --psmem --sweep BALANCED_SWEEP, medians of 3 interleaved rounds, TFLOP/s;
# archived run gpu_2026-11-29_s19/a, b (two processes) and c), on CONFIGS[64], D 64 causal, lpt / deal / tail against
# the pairs (cuDNN): T 1024 270-272 / 248-252 / 256-257 against 256-258 (279-281); T 2048 351-353 / 331-333 / 351-352
# against 340-344 (362-363); T 4096 417-420 / 402-403 / 415-417 against 410-412 (430-432). Two more orders of lpt's
# shares lost too (gpu_2026-11-29_s19/c: a CTA's longest and shortest tiles alternating, 256 / 336 / 407; shortest
# first, 268 / 345 / 406). So it is not the balance alone (at T 1024 tail's busiest CTA has as much work as lpt's, and
# deal has lpt's very shares) but the order too, for a reason not known. Elsewhere lpt did not win: D 64 T 8192 causal
# 434-441 against THREE_64's 449-450; SHORT_128 (64-key tiles), D 128 causal, T 1024 386-391
# against the pairs' 402-404, T 2048 503-508 / 513-514. Not causal, every tile costs the same:
# CONFIGS[64] at T 1024 369-371 with any schedule. So choose() takes lpt for CONFIGS[64] when causal (BALANCED_64).
SCHEDULES = ("lpt", "deal", "tail")

# The balanced schedules (Config.balanced, schedule() below) on choose()'s persistent configs, and CONFIGS[64] with
# the pairs (choose()'s before BALANCED_64), for a rerun against choose() and cuDNN.
BALANCED_SWEEP = {
    64: [CONFIGS[64]] + [CONFIGS[64]._replace(balanced=b) for b in SCHEDULES] + [WIDE_64._replace(balanced="lpt")],
    128: [SHORT_128._replace(balanced=b) for b in SCHEDULES] + [PERSIST_128._replace(balanced="lpt")],
}
BALANCED_64 = CONFIGS[64]._replace(balanced="lpt")
# The seams between a persistent CTA's work items. At T 1024 without the mask a query tile of 128 rows meets 8 key tiles
# (WIDE_64: 4), and at each seam a consumer warpgroup runs its last P V, normalizes and stores the output, waits for the
# next query tile and computes that item's first scores and softmax before the tensor cores have work from it again;
# both warpgroups reach the seam together. Config.q_bufs = 2 loads the next item's query tiles during the current item;
# Config.overlap issues the next item's first Q Kᵀ behind the last P V, so it runs during the output's normalization and
# store (_consumer_overlap). Timed against choose() and cuDNN by benchmarks/attention_gluon_check.py --psmem --sweep
# OVERLAP_SWEEP (H200, archived run gpu_2026-11-29_s20/b, TFLOP/s, medians of 3 rounds). D 64 without the mask, T 1024 /
# 2048 / 4096: BALANCED_64 371 / 426 / 459, with two query buffers 390 / 432 / 468, with overlap alone 355 / 410 / 455,
# with both 392 / 453 / 485; WIDE_64 (choose()'s then) 365 / 439 / 486, WIDE_64 with overlap 332 / 405 / 468; cuDNN 393
# / 449 / 481. D 64 causal (QBUF_SWEEP; overlap gave wrong rows there with two query buffers, so the mask takes the
# plain loop): BALANCED_64 272 / 351 / 418, two query buffers 283 / 369 / 434, cuDNN 281 / 361 / 431. D 128 T 1024
# (gpu_2026-11-29_s20/a and b): SHORT_128 with the table 507-509, with two query buffers 518-522, with both 517-519;
# PERSIST_128 with the table 540-545, with overlap 515-520 (one query buffer: the next tiles load only at the seam),
# choose()'s PERSIST_128 549-553, cuDNN 557-558. So SEAM_64 (below) for D 64.
OVERLAP_SWEEP = {
    64: [BALANCED_64, BALANCED_64._replace(q_bufs=2), BALANCED_64._replace(overlap=True),
         BALANCED_64._replace(q_bufs=2, overlap=True), WIDE_64._replace(balanced="lpt", overlap=True)],
    128: [SHORT_128._replace(balanced="lpt"), SHORT_128._replace(balanced="lpt", q_bufs=2),
          SHORT_128._replace(balanced="lpt", q_bufs=2, overlap=True), PERSIST_128._replace(balanced="lpt"),
          PERSIST_128._replace(balanced="lpt", overlap=True)],
}
QBUF_SWEEP = {D: [cfg for cfg in cfgs if not cfg.overlap] for D, cfgs in OVERLAP_SWEEP.items()}  # (its causal shapes)
SEAM_64 = BALANCED_64._replace(q_bufs=2, overlap=True)  # D 64 (choose() takes it with the pin: SEAM_PIN_64)
REG_128 = Config(128, 128, 2, 2, persistent=True, lazy_sum=True, balanced="lpt", q_bufs=2)  # D 128, T <= 2048
# (with the mask above T 1024: PIN_OFF_SWEEP)
# Where choose() stayed behind cuDNN in the H200 report with SEAM_64 (archived run gpu_2026-11-29_s20/c: D 128 T 1024
# without the mask, 0.99; D 64 T 2048, 0.98): for D 128, PERSIST_128's tiles with P in registers, which frees the shared
# memory a second query buffer needs (row sums once or every tile); for D 64, SEAM_64 with 2 and 4 stages. Compiled
# offline (triton 3.6.0, sm_90a) without spills without the mask (4 B of spills with it). Timed on the H200
# (gpu_2026-11-29_s20/d, two processes, TFLOP/s, first / second):
# D 128 T 1024: P in registers with two query buffers 580 / 579 (with overlap 554 / 553, without the row sums kept per
# thread 556 / 554), choose()'s PERSIST_128 553 / 553, cuDNN 558 / 559; T 2048: 692 / 694 (666 / 667, 665 / 665),
# choose()'s THREE_128 679 / 683, cuDNN 652 / 655. D 64 T 2048: SEAM_64 442 / 446, with 2 stages 440 / 444, with 4
# 440 / 445, WIDE_64 442 / 445, cuDNN 451 / 453 (still behind; T 1024: 397 / 395 against 396 / 395). So REG_128 for
# D 128 without the mask up to T 2048.
SEAM_SWEEP = {
    64: [SEAM_64._replace(num_stages=2), SEAM_64._replace(num_stages=4), WIDE_64],
    128: [REG_128, REG_128._replace(overlap=True),
          Config(128, 128, 2, 2, persistent=True, balanced="lpt", q_bufs=2, overlap=True)],
}
# D 64 without the mask at T 2048 read 0.98 of cuDNN with SEAM_64 (H200, archived run gpu_2026-11-29_s20/e). SEAM_64
# with row sums per thread, with P through one or two shared buffers, and with 64-key tiles (4 or 6 stages), against
# choose() and cuDNN. Compiled offline (triton 3.7.1, sm_90a, no mask) without spills or serialized wgmmas.
# (Also tried offline: exp2 two at a time in bfloat16, ex2.approx.ftz.bf16x2, which ptxas 12.8 compiles to one
# MUFU.EX2.BF16 a value, as many special-function instructions as before: not timed.)
SEAM_MORE_SWEEP = {
    64: [SEAM_64._replace(lazy_sum=True), SEAM_64._replace(p_bufs=1), SEAM_64._replace(p_bufs=2),
         Config(128, 64, 4, 2, persistent=True, balanced="lpt", q_bufs=2, overlap=True),
         Config(128, 64, 6, 2, persistent=True, balanced="lpt", q_bufs=2, overlap=True)],
    128: [],
}
# Archived run gpu_2026-11-29_s21/a (H200, two processes, TFLOP/s, first / second): T 2048: row sums per thread 448 /
# 447 against SEAM_64's 442 / 443 (cuDNN 448 / 449); T 4096 493 / 494 against WIDE_64's 485 / 486 (cuDNN 479 / 483); T
# 1024 371 / 372 against 393 / 392 (cuDNN 393 / 392). P through one or two shared buffers and 64-key tiles lost
# everywhere (324-475). gpu_2026-11-29_s21/b (two processes): SEAM_LS_64 at T 2048 447 / 446 (SEAM_64 441 / 441, cuDNN
# 448 / 448), T 4096 497 / 498 (WIDE_64 487 / 487, cuDNN 482 / 480), T 8192 507 / 498 (491 / 483; 477 / 466), T 16384
# 478 / 481 (475 / 476; 465 / 466); with 2 stages 436-483, with one query buffer 404-436. So choose() takes SEAM_LS_64
# without the mask from T 2048 (at T 2048 level with cuDNN, not above it; below T 4096 with the pin: SEAM_LS_PIN_64,
# PIN_SWEEP).
SEAM_LS_64 = SEAM_64._replace(lazy_sum=True)
SEAM_LS_SWEEP = {64: [SEAM_LS_64, SEAM_LS_64._replace(num_stages=2), SEAM_LS_64._replace(q_bufs=1)], 128: []}
# The softmax kept beside the warpgroup's own P V (Config.pin, _pin). Archived run gpu_2026-11-29_s22/b (pin_probe.py,
# H200, two processes, TFLOP/s, choose()'s config as it was / with the pin / cuDNN): D 64 without the mask T 1024
# 396-394 / 399-397 / 396, T 2048 451 / 457-458 / 451, T 4096 497 / 489 / 477-481; D 64 causal T 1024 278-282 / 294-297
# / 279-280, T 4096 436-438 / 460-461 / 434; D 128 0.4-2% lower with it (T 1024 582-584 / 577-578, T 4096 695-703 /
# 681-693, causal T 4096 629-630 / 626-627, T 16384 677 / 671-672). The same with overlap = 2 (the next item's first Q
# Kᵀ issued before the last P V, its softmax beside that P V; gpu_2026-11-29_s22/a, without the pin: D 64 T 1024 393
# against 399, D 128 T 1024 496 against 587) lost with it too (392-394, 439-440, 481-482; code in ee4c92d).
# PIN_SWEEP: choose()'s configs with the pin, for every shape of the report.
PIN_SWEEP = {64: [SEAM_64._replace(pin=True), SEAM_LS_64._replace(pin=True), THREE_64._replace(pin=True)],
             128: [REG_128._replace(pin=True), SHORT_128._replace(pin=True), THREE_128._replace(pin=True)]}
# gpu_2026-11-29_s22/c (H200, one process, every shape of the report, TFLOP/s: choose()'s config then / the best with
# the pin / cuDNN): D 64 without the mask T 1024 390 / 394 (SEAM_64's; with row sums per thread 396) / 391, T 2048 448 /
# 455 (SEAM_LS_64's) / 448, T 4096 495 / 489 / 481, T 8192 496 / 485 / 474, T 16384 487 / 477 / 470; D 64 causal
# (SEAM_64 with the pin) T 1024 281 / 296 / 277, T 2048 371 / 388 / 364, T 4096 434 / 457 / 431, T 8192 447 (THREE_64's)
# / 473 / 461, T 16384 458 / 426 (THREE_64 with the pin 458) / 457; D 128 without the mask level or lower with it (T
# 1024 REG_128 576 / 570, T 2048 686 / 687, T 4096 THREE_128 716 / 718-719), causal lower (T 1024 SHORT_128 400 / 395, T
# 4096 THREE_128 629 / 625) but at T 2048, where REG_128 with the pin read 532 against SHORT_128's 512 (cuDNN 506). So
# choose() takes: D 64 without the mask SEAM_PIN_64 below T 2048 and SEAM_LS_PIN_64 at T 2048; D 64 causal SEAM_PIN_64
# below T 16384 (where THREE_64 stays); D 128 causal T 2048 REG_128 (without the pin after all: PIN_OFF_SWEEP).
# With the mask ptxas spills 4 B of REG_128, pinned or not (tests/test_attention_gluon.py).
SEAM_PIN_64 = SEAM_64._replace(pin=True)
SEAM_LS_PIN_64 = SEAM_LS_64._replace(pin=True)
# D 128 causal T 1024 and 2048, with the pin and without, side by side (two reports disagreed: gpu_2026-11-29_s20/e1
# read REG_128 without the pin 553 against SHORT_128's 517, gpu_2026-11-29_s22/c REG_128 with it 532 against 512).
# Archived run gpu_2026-11-29_s23/a (H200, one process, medians of 3 interleaved rounds, TFLOP/s): T 2048 REG_128 537,
# with the pin 528, SHORT_128 514, with the pin 505, cuDNN 506; T 1024 SHORT_128 402, with the pin 397, REG_128 393,
# with the pin 381, cuDNN 379. So choose() takes REG_128 without the pin for causal T 2048 (T 1024 keeps SHORT_128).
PIN_OFF_SWEEP = {64: [], 128: [REG_128, REG_128._replace(pin=True), SHORT_128, SHORT_128._replace(pin=True)]}
# Tried and removed (the code is in commit 9246b30): the last round split by key tiles (stream-K). Without the mask
# every query tile costs the same, so 2048 tiles (D 64, B 4, H 32, T 2048) on 132 SMs take 16 rounds where 15.52 would
# do: about 3% of the time (T 1024: 8 rounds for 7.76, the same). Config.split gave every CTA 248 or 249 key tiles' work
# (256 before), pieces of the last round's query tiles, whose partial outputs and log-sum-exps went to a workspace, the
# piece that finished last combining them (per-thread counters, acquire-release at GPU scope, no waiting). Right on the
# GPU (49 tests), but slower (H200, TFLOP/s; archived run gpu_2026-11-29_s21/e): T 1024 319 against SEAM_64's 395, T
# 2048 395 against choose()'s SEAM_LS_64's 449. The run's split_probe.py (its output in gpu_2026-11-29_s21/f2) found
# where: the kernel compiled with the split's code and a table without pieces read 358 and 399 (so the code alone cost
# the main loop 9-11%), with pieces but without their combining 365 and 407, with both 318 and 392. The loops over key
# tiles compiled to the same instructions either way (split_sass.py beside it: 414-416, 168 registers); the whole
# kernel's code grew from 3376 instructions to 5288 (the instruction cache is suspected, not measured).
SMEM_LIMIT = 227 * 1024  # bytes of shared memory one CTA may use on sm_90


def smem_bytes(cfg: Config, D: int, itemsize: int = 2) -> int:
    """Query tile + the K/V ring + barriers (the output reuses the query buffer; persistent: its own buffer,
    so the next work item's query tile can load while this one's output is stored, and one more barrier;
    pingpong: one turn barrier per consumer warpgroup; p_bufs: P's buffers, p_bufs tiles of M_WG x BLOCK_N a
    consumer warpgroup; q_bufs: that many query tiles, each with a ready and a free barrier)."""
    o_rows = cfg.BLOCK_M if cfg.persistent else 0
    return ((cfg.q_bufs * cfg.BLOCK_M + o_rows + 2 * cfg.num_stages * cfg.BLOCK_N) * D * itemsize
            + cfg.p_bufs * cfg.BLOCK_M * cfg.BLOCK_N * itemsize
            + 8 * (cfg.q_bufs * (1 + int(cfg.persistent)) + 4 * cfg.num_stages + cfg.num_consumers * int(cfg.pingpong)))


def check_config(cfg: Config, D: int, T: int | None = None) -> None:
    """ValueError naming the first thing this kernel does not support."""
    if D not in (64, 128):
        raise ValueError(f"flash_attention_gluon: head dimension {D} not supported (64 or 128)")
    rows = cfg.BLOCK_M // max(cfg.num_consumers, 1)
    if cfg.num_consumers < 1 or rows * cfg.num_consumers != cfg.BLOCK_M or rows not in (64, 128):
        raise ValueError(f"flash_attention_gluon: {cfg}: BLOCK_M / num_consumers must be 64 or 128")
    if cfg.balanced and not cfg.persistent or cfg.balanced not in ("", ) + SCHEDULES:
        raise ValueError(f"flash_attention_gluon: {cfg}: balanced is one of {SCHEDULES}, for persistent CTAs")
    if cfg.q_bufs not in (1, 2) or cfg.q_bufs == 2 and not cfg.persistent:
        raise ValueError(f"flash_attention_gluon: {cfg}: q_bufs is 1, or 2 for persistent CTAs")
    if cfg.overlap and (not cfg.balanced or cfg.pingpong or cfg.num_stages < 2):
        # one stage: at the seam the consumers hold the last V stage until the next query tiles land, and the
        # producer loads the next item's first K/V tile into that stage before those query tiles
        raise ValueError(f"flash_attention_gluon: {cfg}: overlap needs a balanced schedule, no ping-pong, 2+ stages")
    if cfg.pingpong and cfg.num_consumers < 2:
        raise ValueError(f"flash_attention_gluon: {cfg}: pingpong needs two or more consumer warpgroups")
    if cfg.p_bufs not in (0, 1, 2):
        raise ValueError(f"flash_attention_gluon: {cfg}: p_bufs is 0, 1 or 2")
    if cfg.BLOCK_N not in (64, 128, 256) or cfg.num_stages < 1:
        raise ValueError(f"flash_attention_gluon: {cfg}: BLOCK_N in 64/128/256, num_stages >= 1")
    if smem_bytes(cfg, D) > SMEM_LIMIT:
        raise ValueError(f"flash_attention_gluon: {cfg} needs {smem_bytes(cfg, D)} B of shared memory for D={D}")
    if T is not None and (T % rows or T % cfg.BLOCK_N):
        raise ValueError(f"flash_attention_gluon: T={T} must be a multiple of BLOCK_M / num_consumers={rows} and "
                         f"BLOCK_N={cfg.BLOCK_N} (use flash_attention_hopper for other lengths)")


if HAS_GLUON:

    @gluon.jit
    def _load_kv(k_desc, v_desc, k_smem, v_smem, bars, row, i, NUM_STAGES: gl.constexpr):
        """K and V tiles at `row` into ring slot i (i counts the CTA's key tiles, across work items)."""
        k_ready = bars[1]
        v_ready = bars[2]
        k_empty = bars[3]
        v_empty = bars[4]
        s = i % NUM_STAGES
        # Round r = i // NUM_STAGES of stage s may start once round r-1 was released. A fresh mbarrier
        # counts as having completed the phase before phase 0, so round 0 passes at once (parity 1).
        free_parity = (i // NUM_STAGES & 1) ^ 1
        mbarrier.wait(k_empty.index(s), free_parity)
        mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(k_desc, [row, 0], k_ready.index(s), k_smem.index(s))
        mbarrier.wait(v_empty.index(s), free_parity)
        mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(v_desc, [row, 0], v_ready.index(s), v_smem.index(s))

    @gluon.jit
    def _load_q(q_desc, q_smem, q_bar, row, M_WG: gl.constexpr, NUM_CONSUMERS: gl.constexpr, qb=0):
        """The consumers' query tiles into query buffer qb (rows past T, in a last partial tile: the next head's
        rows or TMA's zero fill past the tensor; never used, and the full box's bytes count either way)."""
        mbarrier.expect(q_bar, NUM_CONSUMERS * q_desc.block_type.nbytes)
        for c in gl.static_range(NUM_CONSUMERS):
            tma.async_copy_global_to_shared(q_desc, [row + c * M_WG, 0], q_bar, q_smem.index(qb * NUM_CONSUMERS + c))

    @gluon.jit
    def _producer(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, head_row, row0, n_tiles,
                  M_WG: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr, NUM_CONSUMERS: gl.constexpr):
        """One warp: TMA loads of the consumers' query tiles, then of every K and V tile into the ring."""
        _load_q(q_desc, q_smem, bars[0], head_row + row0, M_WG, NUM_CONSUMERS)
        for j in range(n_tiles):
            _load_kv(k_desc, v_desc, k_smem, v_smem, bars, head_row + j * BLOCK_N, j, NUM_STAGES)

    @gluon.jit
    def _work_item(w, k, T, BH, BLOCK_M: gl.constexpr):
        """Persistent schedule: work unit w (a pair of query tiles of one head, heads outermost so the CTAs
        running at one time share a few heads' K/V in L2), its k-th tile (k = 0, 1): tile n_q-1-r, then
        tile r. The pair's causal work is the same for every r (n_q + 1 tile rows), so a static round robin
        of units over the CTAs evens out the heads' work (but not the last, partial round: Config.balanced).
        Returns (head_row, row0) and whether unit w has a k-th tile."""
        n_q = gl.cdiv(T, BLOCK_M)
        n_pairs = (n_q + 1) // 2
        r = w % n_pairs
        tile = r + (n_q - 1 - 2 * r) * (1 - k)
        return (w // n_pairs) * T, tile * BLOCK_M, (k == 0) | (n_q - 1 - r != r)

    @gluon.jit
    def _scheduled_item(sched, idx, T, BLOCK_M: gl.constexpr):
        """Balanced schedule (Config.balanced): entry idx of the host's table (schedule(); the CTA's entries are
        offsets[pid] .. offsets[pid + 1] - 1), a query tile numbered head * n_q + tile. Returns (head_row, row0)."""
        n_q = gl.cdiv(T, BLOCK_M)
        item = gl.load(sched + gl.num_programs(0) + 1 + idx)
        return (item // n_q) * T, (item % n_q) * BLOCK_M

    @gluon.jit
    def _item_bars(bars, qb, PINGPONG: gl.constexpr):
        """The barriers of one persistent work item: its query buffer qb's ready and free barriers in place of the
        arrays of them (bars[0], bars[5])."""
        ib = (bars[0].index(qb), bars[1], bars[2], bars[3], bars[4], bars[5].index(qb))
        if PINGPONG:
            ib = ib + (bars[6], )
        return ib

    @gluon.jit
    def _produce_item(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, head_row, row0, T, i, c,
                      M_WG: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                      NUM_CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr, ROW_TAIL: gl.constexpr,
                      Q_BUFS: gl.constexpr):
        """The loads of one work item, its key tiles in ring slots i, i + 1, ..; c counts the CTA's items (item c's
        query tiles go to buffer c % Q_BUFS; bars: _item_bars of that buffer). Returns how many key tiles it
        loaded."""
        n_tiles = _n_key_tiles(row0, T, NUM_CONSUMERS - 1, M_WG, BLOCK_N, NUM_CONSUMERS, CAUSAL, ROW_TAIL)
        # The first K/V tile first: its stage frees while the consumers still run the last item.
        _load_kv(k_desc, v_desc, k_smem, v_smem, bars, head_row, i, NUM_STAGES)
        # The query buffer is free once every consumer has retired its last Q Kᵀ of item c - Q_BUFS.
        mbarrier.wait(bars[5], (c // Q_BUFS & 1) ^ 1)
        _load_q(q_desc, q_smem, bars[0], head_row + row0, M_WG, NUM_CONSUMERS, c % Q_BUFS)
        for j in range(1, n_tiles):
            _load_kv(k_desc, v_desc, k_smem, v_smem, bars, head_row + j * BLOCK_N, i + j, NUM_STAGES)
        return n_tiles

    @gluon.jit
    def _producer_persistent(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, T, BH, sched,
                             M_WG: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                             NUM_CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr, ROW_TAIL: gl.constexpr,
                             BALANCED: gl.constexpr, Q_BUFS: gl.constexpr, PINGPONG: gl.constexpr):
        """The producer over the CTA's work items. The ring slot counter i and the query-tile count c run on
        across items, so every barrier's phase continues where the last item left it."""
        BLOCK_M: gl.constexpr = NUM_CONSUMERS * M_WG
        i = 0
        c = 0
        if BALANCED:
            for idx in range(gl.load(sched + gl.program_id(0)), gl.load(sched + gl.program_id(0) + 1)):
                head_row, row0 = _scheduled_item(sched, idx, T, BLOCK_M)
                i += _produce_item(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem,
                                   _item_bars(bars, c % Q_BUFS, PINGPONG), head_row, row0, T, i, c, M_WG, BLOCK_N,
                                   NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, Q_BUFS)
                c += 1
        else:
            n_units = (gl.cdiv(T, BLOCK_M) + 1) // 2 * BH
            for w in range(gl.program_id(0), n_units, gl.num_programs(0)):
                for k in range(2):
                    head_row, row0, has = _work_item(w, k, T, BH, BLOCK_M)
                    if has:
                        i += _produce_item(q_desc, k_desc, v_desc, q_smem, k_smem, v_smem,
                                           _item_bars(bars, c % Q_BUFS, PINGPONG), head_row, row0, T, i, c, M_WG,
                                           BLOCK_N, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, Q_BUFS)
                        c += 1

    @gluon.jit
    def _alloc_p(dtype: gl.constexpr, q_smem, M_WG: gl.constexpr, BLOCK_N: gl.constexpr, NUM_CONSUMERS: gl.constexpr,
                 P_BUFS: gl.constexpr):
        """P's shared buffers (Config.p_bufs): a tuple with one [P_BUFS, M_WG, BLOCK_N] buffer per consumer
        warpgroup, in the layout wgmma reads its A operand in; without them the query buffer stands in (never read
        as P: _p_operand)."""
        if P_BUFS == 0:
            return (q_smem, q_smem, q_smem)
        else:
            layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([M_WG, BLOCK_N], dtype)
            p0 = gl.allocate_shared_memory(dtype, [P_BUFS, M_WG, BLOCK_N], layout)
            p1 = p0
            p2 = p0
            if NUM_CONSUMERS > 1:
                p1 = gl.allocate_shared_memory(dtype, [P_BUFS, M_WG, BLOCK_N], layout)
            if NUM_CONSUMERS > 2:
                p2 = gl.allocate_shared_memory(dtype, [P_BUFS, M_WG, BLOCK_N], layout)
            return (p0, p1, p2)

    @gluon.jit
    def _my_p(p_smem, WG: gl.constexpr, P_BUFS: gl.constexpr):
        """Consumer WG's P buffers."""
        return p_smem[WG]

    @gluon.jit
    def _turn_barriers(NUM_CONSUMERS: gl.constexpr):
        """Ping-pong: one turn barrier per consumer warpgroup, one arrive (the previous warpgroup's) per phase."""
        turn = gl.allocate_shared_memory(gl.int64, [NUM_CONSUMERS, 1], mbarrier.MBarrierLayout())
        for w in gl.static_range(NUM_CONSUMERS):
            mbarrier.init(turn.index(w), count=1)
        return turn

    @gluon.jit
    def _turn_wait(bars, i, WG: gl.constexpr, PINGPONG: gl.constexpr):
        """Ping-pong (FA3's warp scheduler barriers, on mbarriers: Gluon 3.6 has no named barriers): in round i
        (the ring slot of the key tile whose Q Kᵀ is issued; every consumer goes through every round of every
        work item, in order: _consumer_item) warpgroup WG may issue its GEMMs once warpgroup WG-1 has issued
        its own of round i (WG 0: once the last warpgroup has issued round i-1). The turn barrier of WG
        (bars[-1], one per warpgroup, count 1) completes its phase r when the previous warpgroup passes round r
        (_turn_pass): WG > 0 waits phase i, WG 0 phase i-1 (round 0: the phase before phase 0, which a fresh
        mbarrier counts as completed). A warpgroup passes round r only after waiting its turn of round r, so no
        barrier runs two phases ahead of its waiter (parity waits cannot alias)."""
        if PINGPONG:
            turn = bars[-1]
            if WG == 0:
                mbarrier.wait(turn.index(0), (i & 1) ^ 1)
            else:
                mbarrier.wait(turn.index(WG), i & 1)

    @gluon.jit
    def _turn_pass(bars, WG: gl.constexpr, NUM_CONSUMERS: gl.constexpr, PINGPONG: gl.constexpr):
        """Ping-pong: WG has issued this round's GEMMs; the next warpgroup's turn (its turn barrier's next phase).
        The arrive is one thread's after a barrier of the warpgroup's 4 warps, so all of them have issued."""
        if PINGPONG:
            mbarrier.arrive(bars[-1].index((WG + 1) % NUM_CONSUMERS), count=1)

    @gluon.jit
    def _scores(q_smem, k_smem, bars, i, s_layout: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                NUM_STAGES: gl.constexpr, WG: gl.constexpr = 0, PINGPONG: gl.constexpr = False):
        """Issue S = Q Kᵀ (async) once the K tile of ring slot i has landed (and, ping-pong, once it is WG's
        turn: the caller passes the turn on after its GEMMs); returns the wgmma token."""
        k_ready = bars[1]
        s = i % NUM_STAGES
        mbarrier.wait(k_ready.index(s), i // NUM_STAGES & 1)
        _turn_wait(bars, i, WG, PINGPONG)
        zero = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
        # K's tile is [BLOCK_N, D] in shared memory; its transposed view is the B operand (D x BLOCK_N).
        return warpgroup_mma(q_smem, k_smem.index(s).permute((1, 0)), zero, use_acc=False, is_async=True)

    @gluon.jit
    def _row_sum(p, BLOCK_N: gl.constexpr, LAZY_SUM: gl.constexpr):
        """Sum of each row of p: across the 4 threads that share a row (two shuffles a row), or (LAZY_SUM) each
        thread's own columns only, a [M, 4] tensor whose column t lives in thread t of the row's quad (in the wgmma
        accumulator layout the columns 8k + 2t, 8k + 2t + 1 of a row are thread t's), added up once at the end."""
        if LAZY_SUM:
            p4 = gl.reshape(p, [p.shape[0], BLOCK_N // 8, 4, 2])
            return gl.sum(gl.sum(p4, axis=3), axis=1)
        else:
            return gl.sum(p, axis=1)

    @gluon.jit
    def _softmax_step(sc, m_i, l_i, j, q_pos, qk_scale, s_layout: gl.constexpr, BLOCK_N: gl.constexpr,
                      MASKED: gl.constexpr, LAZY_SUM: gl.constexpr = False):
        """Online-softmax update for the raw scores sc of key tile j: new max, P (fp32), alpha, new sum."""
        if MASKED:  # causal, a tile on the diagonal: keys after the query are -inf
            k_pos = j * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
            sc = gl.where(k_pos[None, :] <= q_pos[:, None], sc, -float("inf"))
        # Max of the raw scores, scaled after (BLOCK_M multiplies, not BLOCK_M * BLOCK_N); qk_scale > 0.
        m_new = gl.maximum(m_i, gl.max(sc, axis=1) * qk_scale)
        p = gl.exp2(sc * qk_scale - m_new[:, None])  # one FMA + one exp2 per score
        alpha = gl.exp2(m_i - m_new)  # m_i = -inf on the first tile: alpha = 0, no NaN (m_new is finite)
        psum = _row_sum(p, BLOCK_N, LAZY_SUM)
        if LAZY_SUM:
            l_i = l_i * gl.convert_layout(alpha, gl.SliceLayout(1, psum.type.layout))[:, None] + psum
        else:
            l_i = l_i * alpha + psum
        return p, m_new, l_i, alpha

    @gluon.jit
    def _pin(x, PIN: gl.constexpr):
        """x, passed through `bar.warp.sync` when PIN (Config.pin). Given the row sums, which need every exponential
        of the tile, just before the wait for the warpgroup's own P V: without it ptxas 12.8 places that wait above
        the exponentials (0 of a tile's 66 MUFU.EX2 between the two waits in choose()'s 128-key configs, at most 3
        of 34 with SHORT_128's 64-key tiles; tests/test_attention_gluon.py counts them), so the softmax runs after
        the P V, not beside it. ptxas 12.8 (triton 3.6.0's; 3.7.1's too) did not move the wait above the warp
        barrier; a plain inline mov did not keep it down."""
        if PIN:
            return gl.inline_asm_elementwise("{ bar.warp.sync -1; mov.b32 $0, $1; }", "=r,r", [x], dtype=gl.float32,
                                             is_pure=False, pack=1)
        else:
            return x

    @gluon.jit
    def _p_operand(p, my_p, j, p_layout: gl.constexpr, P_BUFS: gl.constexpr):
        """The A operand of tile j's P V: P in registers (converted to the operand's layout), or (P_BUFS) the
        shared buffer _stage_p wrote it to."""
        if P_BUFS == 0:
            return gl.convert_layout(p.to(my_p.dtype), p_layout)
        else:
            return my_p.index(j % P_BUFS)

    @gluon.jit
    def _stage_p(p, alpha, my_p, j, P_BUFS: gl.constexpr):
        """P_BUFS: write tile j's P to its shared buffer (bf16/fp16), fenced for the wgmma that reads it (the
        compiler's barrier makes every warp's part land first); returns what the loop carries in P's place:
        P itself in registers, else a small placeholder (alpha), so P's registers die here."""
        if P_BUFS == 0:
            return p
        else:
            my_p.index(j % P_BUFS).store(p.to(my_p.dtype))
            fence_async_shared()  # generic-proxy stores before the async-proxy (wgmma) read
            return alpha

    @gluon.jit
    def _attend(acc, p, m_i, l_i, q_smem, k_smem, v_smem, my_p, bars, q_pos, qk_scale, lo, hi, base,
                s_layout: gl.constexpr, p_layout: gl.constexpr, o_layout: gl.constexpr,
                BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr, MASKED: gl.constexpr,
                WG: gl.constexpr, NUM_CONSUMERS: gl.constexpr, PINGPONG: gl.constexpr, P_BUFS: gl.constexpr,
                LAZY_SUM: gl.constexpr = False, PIN: gl.constexpr = False):
        """Key tiles [lo, hi) (ring slots base + j), tile j-1's P V overlapping tile j's softmax. On entry p
        holds P_{lo-1} (not yet multiplied by V; P_BUFS: in its shared buffer) and acc is scaled to m_i; on exit
        the same for hi-1. Ping-pong: both GEMMs of a round are issued in WG's turn (FA3's order), the softmax
        outside it. P_BUFS = 2: P_j goes to its buffer as soon as it is computed (P_{j-1} V still reads the
        other); P_BUFS = 1: once P_{j-1} V has retired."""
        v_ready = bars[2]
        k_empty = bars[3]
        v_empty = bars[4]
        for j in range(lo, hi):
            if PINGPONG:  # P's conversion before the turn, so the turn covers only the waits and the issues
                p_op = _p_operand(p, my_p, j - 1, p_layout, P_BUFS)
            s_tok = _scores(q_smem, k_smem, bars, base + j, s_layout, BLOCK_M, BLOCK_N, NUM_STAGES, WG, PINGPONG)
            prev = (base + j - 1) % NUM_STAGES
            mbarrier.wait(v_ready.index(prev), (base + j - 1) // NUM_STAGES & 1)
            if not PINGPONG:
                p_op = _p_operand(p, my_p, j - 1, p_layout, P_BUFS)
            o_tok = warpgroup_mma(p_op, v_smem.index(prev), acc, is_async=True)
            _turn_pass(bars, WG, NUM_CONSUMERS, PINGPONG)
            # wgmma groups retire in order: at most one in flight means S_j is done, P V may still run.
            sc = warpgroup_mma_wait(1, deps=(s_tok, ))
            mbarrier.arrive(k_empty.index((base + j) % NUM_STAGES), count=1)
            p, m_i, l_i, alpha = _softmax_step(sc, m_i, l_i, j, q_pos, qk_scale, s_layout, BLOCK_N, MASKED,
                                               LAZY_SUM)
            if P_BUFS != 1:
                p = _stage_p(p, alpha, my_p, j, P_BUFS)
            l_i = _pin(l_i, PIN)
            acc, _ = warpgroup_mma_wait(0, deps=(o_tok, p_op))  # p_op: live until the wgmma read it
            mbarrier.arrive(v_empty.index(prev), count=1)
            if P_BUFS == 1:  # the one buffer is free now
                p = _stage_p(p, alpha, my_p, j, P_BUFS)
            acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, o_layout))[:, None]
        return acc, p, m_i, l_i

    @gluon.jit
    def _consume(o_desc, my_q, o_smem, k_smem, v_smem, my_p, bars, head_row, start, n_tiles, base, q_phase,
                 qk_scale, M_WG: gl.constexpr, BLOCK_N: gl.constexpr, D: gl.constexpr, NUM_STAGES: gl.constexpr,
                 CAUSAL: gl.constexpr, PERSISTENT: gl.constexpr, WG: gl.constexpr, NUM_CONSUMERS: gl.constexpr,
                 PINGPONG: gl.constexpr, P_BUFS: gl.constexpr, LAZY_SUM: gl.constexpr = False,
                 PIN: gl.constexpr = False):
        """One consumer warpgroup's M_WG query rows from `start` against key tiles 0 .. n_tiles-1 (ring
        slots base ..), output stored through o_smem."""
        q_bar = bars[0]
        v_ready = bars[2]
        k_empty = bars[3]
        v_empty = bars[4]
        if CAUSAL:
            n_unmasked = start // BLOCK_N  # key tiles entirely left of the diagonal
        else:
            n_unmasked = n_tiles
        # wgmma register layouts of one warpgroup (4 warps stacked along M, 16 rows each per step);
        # instruction tile m16 x N x k16 (bf16/fp16), N = BLOCK_N for S, D for O.
        s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                          instr_shape=[16, BLOCK_N, 16])
        o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                          instr_shape=[16, D, 16])
        p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
        q_pos = start + gl.arange(0, M_WG, layout=gl.SliceLayout(1, s_layout))
        m_i = gl.full([M_WG], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
        l_i = _row_sum(gl.zeros([M_WG, BLOCK_N], gl.float32, s_layout), BLOCK_N, LAZY_SUM)
        acc = gl.zeros([M_WG, D], gl.float32, o_layout)

        mbarrier.wait(q_bar, q_phase)
        # Prologue, tile 0: scores and softmax only (its P V is issued in the next iteration). Tile 0 is
        # never right of the diagonal, so the causal mask there is exact even when it changes nothing.
        s_tok = _scores(my_q, k_smem, bars, base, s_layout, M_WG, BLOCK_N, NUM_STAGES, WG, PINGPONG)
        _turn_pass(bars, WG, NUM_CONSUMERS, PINGPONG)
        sc = warpgroup_mma_wait(0, deps=(s_tok, ))
        mbarrier.arrive(k_empty.index(base % NUM_STAGES), count=1)
        p, m_i, l_i, alpha = _softmax_step(sc, m_i, l_i, 0, q_pos, qk_scale, s_layout, BLOCK_N, CAUSAL, LAZY_SUM)
        p = _stage_p(p, alpha, my_p, 0, P_BUFS)  # (no P V in flight yet)
        # Tiles 1 .. n_unmasked-1 without a mask, then (causal) the diagonal tiles with one.
        lo = gl.minimum(gl.maximum(n_unmasked, 1), n_tiles)
        acc, p, m_i, l_i = _attend(acc, p, m_i, l_i, my_q, k_smem, v_smem, my_p, bars, q_pos, qk_scale, 1, lo,
                                   base, s_layout, p_layout, o_layout, M_WG, BLOCK_N, NUM_STAGES, False, WG,
                                   NUM_CONSUMERS, PINGPONG, P_BUFS, LAZY_SUM, PIN)
        if CAUSAL:
            acc, p, m_i, l_i = _attend(acc, p, m_i, l_i, my_q, k_smem, v_smem, my_p, bars, q_pos, qk_scale, lo,
                                       n_tiles, base, s_layout, p_layout, o_layout, M_WG, BLOCK_N, NUM_STAGES, True,
                                       WG, NUM_CONSUMERS, PINGPONG, P_BUFS, LAZY_SUM, PIN)
        if PERSISTENT:  # every Q Kᵀ of this item has retired: the producer may load the next query tile
            mbarrier.arrive(bars[5], count=1)
        # Epilogue: the last tile's P V (outside the turns, as in FA3: the other warpgroup's next round runs).
        last = (base + n_tiles - 1) % NUM_STAGES
        mbarrier.wait(v_ready.index(last), (base + n_tiles - 1) // NUM_STAGES & 1)
        p_op = _p_operand(p, my_p, n_tiles - 1, p_layout, P_BUFS)
        o_tok = warpgroup_mma(p_op, v_smem.index(last), acc, is_async=True)
        acc, _ = warpgroup_mma_wait(0, deps=(o_tok, p_op))
        mbarrier.arrive(v_empty.index(last), count=1)

        _store_output(acc, l_i, o_desc, o_smem, head_row + start, o_layout, LAZY_SUM, PERSISTENT)

    @gluon.jit
    def _consumer_item(o_desc, q_smem, o_smem, k_smem, v_smem, my_p, bars, head_row, row0, T, base, q_phase,
                       qk_scale, WG: gl.constexpr, M_WG: gl.constexpr, BLOCK_N: gl.constexpr, D: gl.constexpr,
                       NUM_STAGES: gl.constexpr, NUM_CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr,
                       ROW_TAIL: gl.constexpr, PERSISTENT: gl.constexpr, PINGPONG: gl.constexpr,
                       P_BUFS: gl.constexpr, LAZY_SUM: gl.constexpr = False, qb=0, PIN: gl.constexpr = False):
        """Consumer warpgroup WG on one work item (query tile at row0 of the head at head_row, in query buffer
        qb), its key tiles in ring slots base ..; returns how many slots the item used (the CTA's key tiles).
        Ping-pong: every warpgroup takes one turn per slot, base .. base + n_cta - 1 in order (a turn per computed
        tile, then one per released tile), so the turn counts match however many tiles each warpgroup computes."""
        k_ready = bars[1]
        v_ready = bars[2]
        k_empty = bars[3]
        v_empty = bars[4]
        start = row0 + WG * M_WG  # this warpgroup's first query position in the head
        n_tiles = _n_key_tiles(row0, T, WG, M_WG, BLOCK_N, NUM_CONSUMERS, CAUSAL, ROW_TAIL)
        n_cta = _n_key_tiles(row0, T, NUM_CONSUMERS - 1, M_WG, BLOCK_N, NUM_CONSUMERS, CAUSAL, ROW_TAIL)
        n_done = n_tiles
        if ROW_TAIL:  # a last partial query tile: a warpgroup whose rows all lie past T computes nothing
            if start < T:
                _consume(o_desc, q_smem.index(qb * NUM_CONSUMERS + WG), o_smem.index(WG), k_smem, v_smem, my_p,
                         bars, head_row, start, n_tiles, base, q_phase, qk_scale, M_WG, BLOCK_N, D, NUM_STAGES,
                         CAUSAL, PERSISTENT, WG, NUM_CONSUMERS, PINGPONG, P_BUFS, LAZY_SUM, PIN)
            else:
                n_done = 0
                if PERSISTENT:
                    mbarrier.arrive(bars[5], count=1)
        else:
            _consume(o_desc, q_smem.index(qb * NUM_CONSUMERS + WG), o_smem.index(WG), k_smem, v_smem, my_p, bars,
                     head_row, start, n_tiles, base, q_phase, qk_scale, M_WG, BLOCK_N, D, NUM_STAGES, CAUSAL,
                     PERSISTENT, WG, NUM_CONSUMERS, PINGPONG, P_BUFS, LAZY_SUM, PIN)
        if CAUSAL or ROW_TAIL:
            # Causal: a lower warpgroup needs fewer key tiles than the CTA's last one, which the producer
            # loads for the others. Release those stages in order (waiting each load, so every arrive
            # lands in its own round), or the producer would wait for this warpgroup forever.
            for j in range(base + n_done, base + n_cta):
                # Ping-pong: the turn first (passed on at once), then the loads: a turn held while waiting
                # for V_j could deadlock with one stage (V_j's load waits the other warpgroup's P V_{j-1},
                # issued in its turn j).
                _turn_wait(bars, j, WG, PINGPONG)
                _turn_pass(bars, WG, NUM_CONSUMERS, PINGPONG)
                s = j % NUM_STAGES
                mbarrier.wait(k_ready.index(s), j // NUM_STAGES & 1)
                mbarrier.arrive(k_empty.index(s), count=1)
                mbarrier.wait(v_ready.index(s), j // NUM_STAGES & 1)
                mbarrier.arrive(v_empty.index(s), count=1)
        return n_cta

    @gluon.jit
    def _consumer(q_desc, o_desc, q_smem, k_smem, v_smem, p_smem, bars, head_row, row0, T, qk_scale,
                  WG: gl.constexpr, M_WG: gl.constexpr, BLOCK_N: gl.constexpr, D: gl.constexpr,
                  NUM_STAGES: gl.constexpr, NUM_CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr,
                  ROW_TAIL: gl.constexpr, PINGPONG: gl.constexpr, P_BUFS: gl.constexpr, LAZY_SUM: gl.constexpr = False,
                  PIN: gl.constexpr = False):
        """Consumer warpgroup WG: scores, online softmax and P V for its M_WG query rows of the CTA's tile
        (the output goes through the query buffer, free by then)."""
        _consumer_item(o_desc, q_smem, q_smem, k_smem, v_smem, _my_p(p_smem, WG, P_BUFS), bars, head_row, row0, T,
                       0, 0, qk_scale, WG, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, False,
                       PINGPONG, P_BUFS, LAZY_SUM, 0, PIN)

    @gluon.jit
    def _consumer_persistent(q_desc, o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, BH, sched, qk_scale,
                             WG: gl.constexpr, M_WG: gl.constexpr, BLOCK_N: gl.constexpr, D: gl.constexpr,
                             NUM_STAGES: gl.constexpr, NUM_CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr,
                             ROW_TAIL: gl.constexpr, PINGPONG: gl.constexpr, P_BUFS: gl.constexpr,
                             LAZY_SUM: gl.constexpr, BALANCED: gl.constexpr, Q_BUFS: gl.constexpr,
                             OVERLAP: gl.constexpr, PIN: gl.constexpr = False):
        """Consumer warpgroup WG over the CTA's work items, in the producer's order (_work_item, or BALANCED
        the host's table: _scheduled_item); item c's query tiles in buffer c % Q_BUFS. OVERLAP (the table, no
        ping-pong) without the mask and with every query tile whole: _consumer_overlap (with the mask and
        Q_BUFS = 2 it gave wrong rows, each head's second query tile, and once an illegal address, on an H200:
        archived run gpu_2026-11-29_s20/a and b; the cause is unknown, so the mask takes this loop)."""
        BLOCK_M: gl.constexpr = NUM_CONSUMERS * M_WG
        my_p = _my_p(p_smem, WG, P_BUFS)
        base = 0
        c = 0
        if OVERLAP and not ROW_TAIL and not CAUSAL:
            _consumer_overlap(o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, sched, qk_scale, WG, M_WG,
                              BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, P_BUFS, LAZY_SUM, Q_BUFS, PIN)
        elif BALANCED:
            for idx in range(gl.load(sched + gl.program_id(0)), gl.load(sched + gl.program_id(0) + 1)):
                head_row, row0 = _scheduled_item(sched, idx, T, BLOCK_M)
                base += _consumer_item(o_desc, q_smem, o_smem, k_smem, v_smem, my_p,
                                       _item_bars(bars, c % Q_BUFS, PINGPONG), head_row, row0, T, base,
                                       c // Q_BUFS & 1, qk_scale, WG, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS,
                                       CAUSAL, ROW_TAIL, True, PINGPONG, P_BUFS, LAZY_SUM, c % Q_BUFS, PIN)
                c += 1
        else:
            n_units = (gl.cdiv(T, BLOCK_M) + 1) // 2 * BH
            for w in range(gl.program_id(0), n_units, gl.num_programs(0)):
                for k in range(2):
                    head_row, row0, has = _work_item(w, k, T, BH, BLOCK_M)
                    if has:
                        base += _consumer_item(o_desc, q_smem, o_smem, k_smem, v_smem, my_p,
                                               _item_bars(bars, c % Q_BUFS, PINGPONG), head_row, row0, T, base,
                                               c // Q_BUFS & 1, qk_scale, WG, M_WG, BLOCK_N, D, NUM_STAGES,
                                               NUM_CONSUMERS, CAUSAL, ROW_TAIL, True, PINGPONG, P_BUFS, LAZY_SUM,
                                               c % Q_BUFS, PIN)
                        c += 1
        tma.store_wait(0)

    @gluon.jit
    def _consumer_overlap(o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, sched, qk_scale,
                          WG: gl.constexpr, M_WG: gl.constexpr, BLOCK_N: gl.constexpr, D: gl.constexpr,
                          NUM_STAGES: gl.constexpr, NUM_CONSUMERS: gl.constexpr, P_BUFS: gl.constexpr,
                          LAZY_SUM: gl.constexpr, Q_BUFS: gl.constexpr, PIN: gl.constexpr = False):
        """Consumer warpgroup WG over the host's table (Config.overlap; no mask, every query tile whole, no
        ping-pong), with the items' seams overlapped: an item's last P V is issued, then the next item's first
        Q Kᵀ (its query tiles already in the other buffer when Q_BUFS = 2), and the output is normalized and
        stored while that Q Kᵀ runs, so the tensor cores have work across the seam. The next item's raw scores S_0
        cross the loop's back edge in registers, its wgmma retired: an accumulator still in flight there (or where
        an if joins) makes ptxas wait for it and serialize the wgmmas. Otherwise the steps are _consume's."""
        BLOCK_M: gl.constexpr = NUM_CONSUMERS * M_WG
        v_ready = bars[2]
        k_empty = bars[3]
        v_empty = bars[4]
        s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                          instr_shape=[16, BLOCK_N, 16])
        o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                          instr_shape=[16, D, 16])
        p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
        my_p = _my_p(p_smem, WG, P_BUFS)
        n_tiles = T // BLOCK_N
        first = gl.load(sched + gl.program_id(0))
        end = gl.load(sched + gl.program_id(0) + 1)  # schedule() gives every CTA at least one item
        mbarrier.wait(bars[0].index(0), 0)
        s_tok = _scores(q_smem.index(WG), k_smem, bars, 0, s_layout, M_WG, BLOCK_N, NUM_STAGES)
        sc = warpgroup_mma_wait(0, deps=(s_tok, ))
        mbarrier.arrive(k_empty.index(0), count=1)
        base = 0
        for idx in range(first, end):
            c = idx - first
            head_row, row0 = _scheduled_item(sched, idx, T, BLOCK_M)
            start = row0 + WG * M_WG
            my_q = q_smem.index(c % Q_BUFS * NUM_CONSUMERS + WG)
            q_pos = start + gl.arange(0, M_WG, layout=gl.SliceLayout(1, s_layout))
            m_i = gl.full([M_WG], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
            l_i = _row_sum(gl.zeros([M_WG, BLOCK_N], gl.float32, s_layout), BLOCK_N, LAZY_SUM)
            acc = gl.zeros([M_WG, D], gl.float32, o_layout)
            # Tile 0: its scores sc came from before the loop or from the last item's seam.
            p, m_i, l_i, alpha = _softmax_step(sc, m_i, l_i, 0, q_pos, qk_scale, s_layout, BLOCK_N, False,
                                               LAZY_SUM)
            p = _stage_p(p, alpha, my_p, 0, P_BUFS)
            acc, p, m_i, l_i = _attend(acc, p, m_i, l_i, my_q, k_smem, v_smem, my_p, bars, q_pos, qk_scale, 1,
                                       n_tiles, base, s_layout, p_layout, o_layout, M_WG, BLOCK_N, NUM_STAGES, False,
                                       WG, NUM_CONSUMERS, False, P_BUFS, LAZY_SUM, PIN)
            mbarrier.arrive(bars[5].index(c % Q_BUFS), count=1)  # every Q Kᵀ of this item has retired
            last = (base + n_tiles - 1) % NUM_STAGES
            mbarrier.wait(v_ready.index(last), (base + n_tiles - 1) // NUM_STAGES & 1)
            p_op = _p_operand(p, my_p, n_tiles - 1, p_layout, P_BUFS)
            o_tok = warpgroup_mma(p_op, v_smem.index(last), acc, is_async=True)
            base += n_tiles
            if idx + 1 < end:  # the seam: the next item's S_0 on the tensor cores behind this item's last P V
                mbarrier.wait(bars[0].index((c + 1) % Q_BUFS), (c + 1) // Q_BUFS & 1)
                s_tok = _scores(q_smem.index((c + 1) % Q_BUFS * NUM_CONSUMERS + WG), k_smem, bars, base, s_layout,
                                M_WG, BLOCK_N, NUM_STAGES)
                acc, _ = warpgroup_mma_wait(1, deps=(o_tok, p_op))  # in order: P V has retired, S_0 may run
                mbarrier.arrive(v_empty.index(last), count=1)
                _store_output(acc, l_i, o_desc, o_smem.index(WG), head_row + start, o_layout, LAZY_SUM)
                sc = warpgroup_mma_wait(0, deps=(s_tok, ))
                mbarrier.arrive(k_empty.index(base % NUM_STAGES), count=1)
            else:
                acc, _ = warpgroup_mma_wait(0, deps=(o_tok, p_op))
                mbarrier.arrive(v_empty.index(last), count=1)
                _store_output(acc, l_i, o_desc, o_smem.index(WG), head_row + start, o_layout, LAZY_SUM)
                sc = gl.zeros([M_WG, BLOCK_N], gl.float32, s_layout)  # (not read: the loop ends)
        tma.store_wait(0)

    @gluon.jit
    def _store_output(acc, l_i, o_desc, my_o, row, o_layout: gl.constexpr, LAZY_SUM: gl.constexpr,
                      PERSISTENT: gl.constexpr = True):
        """O = acc / l (the row sums; LAZY_SUM: added up across the 4 threads of a row first) through the
        warpgroup's output buffer to rows row .. of o. PERSISTENT: once the previous item's store has read the
        buffer; else the buffer is the query tile's (every wgmma that read it has retired) and the store is waited
        for before the CTA ends."""
        if LAZY_SUM:
            l_i = gl.sum(l_i, axis=1)
        o = acc / gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))[:, None]
        if PERSISTENT:
            tma.store_wait(0)  # the previous item's output store has read the buffer
        my_o.store(o.to(o_desc.dtype))
        fence_async_shared()  # order the generic-proxy stores before the async-proxy (TMA) read
        tma.async_copy_shared_to_global(o_desc, [row, 0], my_o)
        if not PERSISTENT:
            tma.store_wait(0)

    @gluon.jit
    def _n_key_tiles(row0, T, WG: gl.constexpr, M_WG: gl.constexpr, BLOCK_N: gl.constexpr,
                     NUM_CONSUMERS: gl.constexpr, CAUSAL: gl.constexpr, ROW_TAIL: gl.constexpr):
        """Key tiles consumer WG reads: all of them, or (causal) up to and including its diagonal (rows past
        T of a last partial query tile need none)."""
        if CAUSAL:
            if ROW_TAIL:
                return gl.cdiv(gl.minimum(row0 + (WG + 1) * M_WG, T), BLOCK_N)
            else:
                return gl.cdiv(row0 + (WG + 1) * M_WG, BLOCK_N)
        else:
            return T // BLOCK_N

    @gluon.jit
    def _fa3_forward_kernel(q_desc, k_desc, v_desc, o_desc, T, qk_scale, D: gl.constexpr, M_WG: gl.constexpr,
                            BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr, NUM_CONSUMERS: gl.constexpr,
                            CAUSAL: gl.constexpr, PRODUCER_REGS: gl.constexpr, CONSUMER_REGS: gl.constexpr,
                            ROW_TAIL: gl.constexpr = False, PINGPONG: gl.constexpr = False,
                            P_BUFS: gl.constexpr = 0, LAZY_SUM: gl.constexpr = False, PIN: gl.constexpr = False):
        """Program (i, bh): query tile i (NUM_CONSUMERS * M_WG rows; longest causal tiles first) of head bh.
        The descriptors view q/k/v/o as (B*H*T, D) matrices; T is a multiple of BLOCK_N and of M_WG (of the
        query tile too unless ROW_TAIL), so no key tile and no warpgroup's query rows cross a head."""
        BLOCK_M: gl.constexpr = NUM_CONSUMERS * M_WG
        tile = gl.num_programs(0) - 1 - gl.program_id(0)
        head_row = gl.program_id(1) * T
        row0 = tile * BLOCK_M
        n_tiles = _n_key_tiles(row0, T, NUM_CONSUMERS - 1, M_WG, BLOCK_N, NUM_CONSUMERS, CAUSAL, ROW_TAIL)

        dtype: gl.constexpr = q_desc.dtype
        q_smem = gl.allocate_shared_memory(dtype, [NUM_CONSUMERS, M_WG, D], q_desc.layout)
        k_smem = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, D], k_desc.layout)
        v_smem = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, D], v_desc.layout)
        p_smem = _alloc_p(dtype, q_smem, M_WG, BLOCK_N, NUM_CONSUMERS, P_BUFS)
        q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        k_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        v_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        k_empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        v_empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        mbarrier.init(q_bar, count=1)
        for s in gl.static_range(NUM_STAGES):
            mbarrier.init(k_ready.index(s), count=1)  # completed by the TMA's byte count
            mbarrier.init(v_ready.index(s), count=1)
            mbarrier.init(k_empty.index(s), count=NUM_CONSUMERS)  # one arrive per consumer warpgroup
            mbarrier.init(v_empty.index(s), count=NUM_CONSUMERS)
        bars = (q_bar, k_ready, v_ready, k_empty, v_empty)
        if PINGPONG:
            bars = bars + (_turn_barriers(NUM_CONSUMERS), )  # bars[-1]: _turn_wait

        # One partition per consumer warpgroup (its own instruction stream: an arrive synchronizes only
        # its 4 warps, so the warpgroups drift apart and one's softmax overlaps another's wgmmas), the
        # first one in the default partition (num_warps = 4), then the producer warp.
        if NUM_CONSUMERS == 1:
            gl.warp_specialize([
                (_consumer, (q_desc, o_desc, q_smem, k_smem, v_smem, p_smem, bars, head_row, row0, T, qk_scale,
                             0, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, PINGPONG,
                             P_BUFS, LAZY_SUM, PIN)),
                (_producer, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, head_row, row0, n_tiles,
                             M_WG, BLOCK_N, NUM_STAGES, NUM_CONSUMERS)),
            ], [1], [PRODUCER_REGS])
        elif NUM_CONSUMERS == 2:
            gl.warp_specialize([
                (_consumer, (q_desc, o_desc, q_smem, k_smem, v_smem, p_smem, bars, head_row, row0, T, qk_scale,
                             0, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, PINGPONG,
                             P_BUFS, LAZY_SUM, PIN)),
                (_consumer, (q_desc, o_desc, q_smem, k_smem, v_smem, p_smem, bars, head_row, row0, T, qk_scale,
                             1, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, PINGPONG,
                             P_BUFS, LAZY_SUM, PIN)),
                (_producer, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, head_row, row0, n_tiles,
                             M_WG, BLOCK_N, NUM_STAGES, NUM_CONSUMERS)),
            ], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])
        else:
            gl.static_assert(NUM_CONSUMERS == 3, "1, 2 or 3 consumer warpgroups")
            gl.warp_specialize([
                (_consumer, (q_desc, o_desc, q_smem, k_smem, v_smem, p_smem, bars, head_row, row0, T, qk_scale,
                             0, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, PINGPONG,
                             P_BUFS, LAZY_SUM, PIN)),
                (_consumer, (q_desc, o_desc, q_smem, k_smem, v_smem, p_smem, bars, head_row, row0, T, qk_scale,
                             1, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, PINGPONG,
                             P_BUFS, LAZY_SUM, PIN)),
                (_consumer, (q_desc, o_desc, q_smem, k_smem, v_smem, p_smem, bars, head_row, row0, T, qk_scale,
                             2, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, PINGPONG,
                             P_BUFS, LAZY_SUM, PIN)),
                (_producer, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, head_row, row0, n_tiles,
                             M_WG, BLOCK_N, NUM_STAGES, NUM_CONSUMERS)),
            ], [4, 4, 1], [CONSUMER_REGS, CONSUMER_REGS, PRODUCER_REGS])

    @gluon.jit
    def _persistent_kernel(q_desc, k_desc, v_desc, o_desc, T, BH, sched, D: gl.constexpr, M_WG: gl.constexpr,
                           BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr, NUM_CONSUMERS: gl.constexpr,
                           CAUSAL: gl.constexpr, PRODUCER_REGS: gl.constexpr, CONSUMER_REGS: gl.constexpr,
                           ROW_TAIL: gl.constexpr = False, QK_SCALE: gl.constexpr = 1.0,
                           PINGPONG: gl.constexpr = False, P_BUFS: gl.constexpr = 0, LAZY_SUM: gl.constexpr = False,
                           BALANCED: gl.constexpr = False, Q_BUFS: gl.constexpr = 1, OVERLAP: gl.constexpr = False,
                           PIN: gl.constexpr = False):
        """Persistent: a grid of (at most) one CTA per SM, each looping over work units w = program_id,
        program_id + num_programs, ... (two query tiles of one head each: _work_item), or (BALANCED) over the query
        tiles the host's table `sched` gives it (schedule(): offsets, then tiles). The producer loads the
        next item's first K/V tile and query tiles while the consumers finish the current item (q_free: the
        consumers' last Q Kᵀ of an item has retired), and the output has its own buffer, its TMA store
        overlapping the next item (waited before the buffer is rewritten). Q_BUFS = 2: two query buffers (item c
        in buffer c % 2, each with its ready and free barrier), so the next item's query tiles load while this one
        runs. OVERLAP (with a table, every query tile whole): _consumer_overlap."""
        dtype: gl.constexpr = q_desc.dtype
        q_smem = gl.allocate_shared_memory(dtype, [Q_BUFS * NUM_CONSUMERS, M_WG, D], q_desc.layout)
        o_smem = gl.allocate_shared_memory(dtype, [NUM_CONSUMERS, M_WG, D], o_desc.layout)
        k_smem = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, D], k_desc.layout)
        v_smem = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, D], v_desc.layout)
        p_smem = _alloc_p(dtype, q_smem, M_WG, BLOCK_N, NUM_CONSUMERS, P_BUFS)
        q_bar = gl.allocate_shared_memory(gl.int64, [Q_BUFS, 1], mbarrier.MBarrierLayout())
        q_free = gl.allocate_shared_memory(gl.int64, [Q_BUFS, 1], mbarrier.MBarrierLayout())
        k_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        v_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        k_empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        v_empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
        for b in gl.static_range(Q_BUFS):
            mbarrier.init(q_bar.index(b), count=1)
            mbarrier.init(q_free.index(b), count=NUM_CONSUMERS)
        for s in gl.static_range(NUM_STAGES):
            mbarrier.init(k_ready.index(s), count=1)
            mbarrier.init(v_ready.index(s), count=1)
            mbarrier.init(k_empty.index(s), count=NUM_CONSUMERS)
            mbarrier.init(v_empty.index(s), count=NUM_CONSUMERS)
        bars = (q_bar, k_ready, v_ready, k_empty, v_empty, q_free)
        if PINGPONG:
            bars = bars + (_turn_barriers(NUM_CONSUMERS), )  # bars[-1]: _turn_wait

        if NUM_CONSUMERS == 1:
            gl.warp_specialize([
                (_consumer_persistent, (q_desc, o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, BH, sched,
                                        QK_SCALE, 0, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL,
                                        PINGPONG, P_BUFS, LAZY_SUM, BALANCED, Q_BUFS, OVERLAP, PIN)),
                (_producer_persistent, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, T, BH, sched,
                                        M_WG, BLOCK_N, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, BALANCED,
                                        Q_BUFS, PINGPONG)),
            ], [1], [PRODUCER_REGS])
        elif NUM_CONSUMERS == 2:
            gl.warp_specialize([
                (_consumer_persistent, (q_desc, o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, BH, sched,
                                        QK_SCALE, 0, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL,
                                        PINGPONG, P_BUFS, LAZY_SUM, BALANCED, Q_BUFS, OVERLAP, PIN)),
                (_consumer_persistent, (q_desc, o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, BH, sched,
                                        QK_SCALE, 1, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL,
                                        PINGPONG, P_BUFS, LAZY_SUM, BALANCED, Q_BUFS, OVERLAP, PIN)),
                (_producer_persistent, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, T, BH, sched,
                                        M_WG, BLOCK_N, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, BALANCED,
                                        Q_BUFS, PINGPONG)),
            ], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])
        else:
            gl.static_assert(NUM_CONSUMERS == 3, "1, 2 or 3 consumer warpgroups")
            gl.warp_specialize([
                (_consumer_persistent, (q_desc, o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, BH, sched,
                                        QK_SCALE, 0, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL,
                                        PINGPONG, P_BUFS, LAZY_SUM, BALANCED, Q_BUFS, OVERLAP, PIN)),
                (_consumer_persistent, (q_desc, o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, BH, sched,
                                        QK_SCALE, 1, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL,
                                        PINGPONG, P_BUFS, LAZY_SUM, BALANCED, Q_BUFS, OVERLAP, PIN)),
                (_consumer_persistent, (q_desc, o_desc, q_smem, o_smem, k_smem, v_smem, p_smem, bars, T, BH, sched,
                                        QK_SCALE, 2, M_WG, BLOCK_N, D, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL,
                                        PINGPONG, P_BUFS, LAZY_SUM, BALANCED, Q_BUFS, OVERLAP, PIN)),
                (_producer_persistent, (q_desc, k_desc, v_desc, q_smem, k_smem, v_smem, bars, T, BH, sched,
                                        M_WG, BLOCK_N, NUM_STAGES, NUM_CONSUMERS, CAUSAL, ROW_TAIL, BALANCED,
                                        Q_BUFS, PINGPONG)),
            ], [4, 4, 1], [CONSUMER_REGS, CONSUMER_REGS, PRODUCER_REGS])


def _gl_dtype(torch_dtype):
    name = str(torch_dtype).removeprefix("torch.")
    return {"bfloat16": gl.bfloat16, "float16": gl.float16}[name]


def consumer_regs(cfg: Config) -> int:
    """Registers per consumer thread after setmaxnreg: the 64K register file of the SM (one CTA) less the
    producer's warpgroup, shared by the consumer warpgroups, a multiple of 8, at most 240 (FA3's split:
    240 with two consumers, 160 with three)."""
    per_thread = (65536 // 128 - cfg.producer_regs) // cfg.num_consumers
    return min(240, per_thread // 8 * 8)


def kernel_args(cfg: Config, D: int) -> dict:
    """Constexprs and launch options of one config (shared by the launcher and the offline compile test)."""
    return dict(D=D, M_WG=cfg.BLOCK_M // cfg.num_consumers, BLOCK_N=cfg.BLOCK_N, NUM_STAGES=cfg.num_stages,
                NUM_CONSUMERS=cfg.num_consumers, PRODUCER_REGS=cfg.producer_regs, CONSUMER_REGS=consumer_regs(cfg),
                PINGPONG=cfg.pingpong, P_BUFS=cfg.p_bufs, LAZY_SUM=cfg.lazy_sum, PIN=cfg.pin,
                **(dict(BALANCED=bool(cfg.balanced), Q_BUFS=cfg.q_bufs, OVERLAP=cfg.overlap)
                   if cfg.persistent else {}),
                num_warps=4)  # the default partition is consumer warpgroup 0


def flash_attention(q, k, v, o, causal, config: Config | None = None, num_sms: int | None = None):
    """o = softmax(q kᵀ / sqrt(D) [+ causal mask]) v; q, k, v, o (B, H, T, D) bf16/fp16 contiguous, on an
    sm_90 GPU. Raises ValueError for what it does not support (see the module docstring). num_sms: the
    persistent grid's size (default: the device's SM count)."""
    if not HAS_GLUON:
        raise ValueError("flash_attention_gluon: this triton has no triton.experimental.gluon Hopper module")
    B, H, T, D = q.shape
    cfg = config or choose(D, T, causal)
    if cfg is None:
        raise ValueError(f"flash_attention_gluon: head dimension {D} not supported (64 or 128)")
    check_config(cfg, D, T)
    if q.dtype not in _ok_dtypes() or any(t.dtype != q.dtype or t.shape != q.shape for t in (k, v, o)):
        raise ValueError("flash_attention_gluon: q, k, v, o must share one shape and be bf16 or fp16")
    if not all(t.is_contiguous() for t in (q, k, v, o)):
        raise ValueError("flash_attention_gluon: q, k, v, o must be contiguous")
    n_rows = B * H * T
    dt = _gl_dtype(q.dtype)

    def desc(t, rows):
        layout = gl.NVMMASharedLayout.get_default_for([rows, D], dt)
        return TensorDescriptor(t.view(n_rows, D), [n_rows, D], [D, 1], [rows, D], layout)
    m_wg = cfg.BLOCK_M // cfg.num_consumers
    descs = (desc(q, m_wg), desc(k, cfg.BLOCK_N), desc(v, cfg.BLOCK_N), desc(o, m_wg))
    n_q = -(-T // cfg.BLOCK_M)
    extra = dict(CAUSAL=bool(causal), ROW_TAIL=T % cfg.BLOCK_M != 0)
    if cfg.persistent:
        n_sms = num_sms if num_sms else sm_count(q.device)
        if cfg.balanced:
            sched = schedule_tensor(T, B * H, cfg, bool(causal), n_sms, q.device)
            grid = (len(sched) - 1 - n_q * B * H, )
        else:
            sched = _no_schedule(q.device)
            grid = (min(n_sms, (n_q + 1) // 2 * B * H), )  # pairs of query tiles (_work_item)
        _persistent_kernel[grid](*descs, T, B * H, sched, QK_SCALE=D ** -0.5 * LOG2E, **extra, **kernel_args(cfg, D))
    else:
        _fa3_forward_kernel[(n_q, B * H)](*descs, T, D ** -0.5 * LOG2E, **extra, **kernel_args(cfg, D))




ITEM_COST = 1  # key tiles' worth of time an item costs besides its key tiles (the first loads, the output's store)


def schedule(T: int, BH: int, cfg: Config, causal: bool, n_sms: int) -> list[int]:
    """The balanced schedule's table (cfg.balanced: SCHEDULES): offsets[0..P] (CTA p runs entries
    offsets[p]..offsets[p+1]-1) then the entries, query tiles numbered head * n_q + tile. A tile's work: ITEM_COST
    plus its key tiles. Dealing: the longest tile first, each to the CTA with the least work so far (ties: the lower
    CTA). "lpt" and "deal" deal every tile over P = min(n_sms, tiles) CTAs, then "lpt" orders each CTA's tiles by
    head (the longest first within a head); "tail" gives P = min(n_sms, pairs) CTAs the pairs' whole rounds
    (_work_item's order) and deals only the last round's tiles."""
    import heapq
    n_q = -(-T // cfg.BLOCK_M)

    def key_tiles(tile):  # the CTA's key tiles for a query tile (_n_key_tiles of its last warpgroup)
        return -(-min((tile + 1) * cfg.BLOCK_M, T) // cfg.BLOCK_N) if causal else T // cfg.BLOCK_N

    costs = [key_tiles(t) + ITEM_COST for t in range(n_q)]
    if cfg.balanced == "tail":
        n_pairs = (n_q + 1) // 2
        n_units = n_pairs * BH
        n_cta = min(n_sms, n_units)
        whole = n_units - n_units % n_cta
        mine: list[list[int]] = [[] for _ in range(n_cta)]
        for w in range(whole):  # _work_item's order
            r, head = w % n_pairs, w // n_pairs
            mine[w % n_cta] += [head * n_q + n_q - 1 - r] + ([head * n_q + r] if n_q - 1 - r != r else [])
        rest = [head * n_q + t for w in range(whole, n_units) for head, r in [(w // n_pairs, w % n_pairs)]
                for t in ([n_q - 1 - r] + ([r] if n_q - 1 - r != r else []))]
    else:
        n_cta = min(n_sms, BH * n_q)
        mine = [[] for _ in range(n_cta)]
        rest = list(range(BH * n_q))
    heap = [(sum(costs[it % n_q] for it in mine[p]), p) for p in range(n_cta)]
    heapq.heapify(heap)
    for it in sorted(rest, key=lambda it: (-costs[it % n_q], it)):
        load, p = heapq.heappop(heap)
        mine[p].append(it)
        heapq.heappush(heap, (load + costs[it % n_q], p))
    offsets, entries = [0], []
    for p in range(n_cta):
        if cfg.balanced == "lpt":
            mine[p].sort(key=lambda it: (it // n_q, -costs[it % n_q]))
        entries += mine[p]
        offsets.append(len(entries))
    return offsets + entries


_SCHEDULES: dict = {}


def schedule_tensor(T, BH, cfg, causal, n_sms, device):
    """schedule() as an int32 tensor on the device, made once per shape and kept."""
    import torch
    key = (T, BH, cfg.BLOCK_M, cfg.BLOCK_N, cfg.balanced, ITEM_COST, causal, n_sms, str(device))
    if key not in _SCHEDULES:
        _SCHEDULES[key] = torch.tensor(schedule(T, BH, cfg, causal, n_sms), dtype=torch.int32, device=device)
    return _SCHEDULES[key]


def _no_schedule(device):
    """The table argument of an unbalanced persistent launch (never read)."""
    import torch
    key = ("none", str(device))
    if key not in _SCHEDULES:
        _SCHEDULES[key] = torch.zeros(1, dtype=torch.int32, device=device)
    return _SCHEDULES[key]


def _ok_dtypes():
    import torch
    return (torch.bfloat16, torch.float16)


# -- offline compile (no GPU): used by tests/test_attention_gluon.py ----------------------------------------

def compile_offline(cfg: Config, D: int, causal: bool, dtype_str: str = "bf16", row_tail: bool = False):
    """Compile the kernel for sm_90a without a GPU; returns triton's CompiledKernel (asm: ttgir, ptx, cubin).
    row_tail: the variant for a T that is no multiple of BLOCK_M (a last partial query tile)."""
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    check_config(cfg, D)
    gdt = {"bf16": gl.bfloat16, "fp16": gl.float16}[dtype_str]

    def desc_sig(rows):
        layout = gl.NVMMASharedLayout.get_default_for([rows, D], gdt)
        return f"tensordesc<{dtype_str}[{rows}, {D}],{layout!r}>"
    args = kernel_args(cfg, D)
    num_warps = args.pop("num_warps")
    constexprs = dict(args, CAUSAL=bool(causal), ROW_TAIL=bool(row_tail))
    if cfg.persistent:
        constexprs["QK_SCALE"] = D ** -0.5 * LOG2E
    m_wg = args["M_WG"]
    runtime = {"q_desc": desc_sig(m_wg), "k_desc": desc_sig(cfg.BLOCK_N), "v_desc": desc_sig(cfg.BLOCK_N),
               "o_desc": desc_sig(m_wg), "T": "i32", "BH": "i32", "sched": "*i32", "qk_scale": "fp32"}
    kernel = _persistent_kernel if cfg.persistent else _fa3_forward_kernel
    signature = {name: runtime.get(name, "constexpr") for name in kernel.arg_names}
    src = GluonASTSource(kernel, signature, constexprs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
