"""The Gluon FA3-style candidate (kernels_ref/ch04_flash_attention/flash_attention_gluon.py), compiled for sm_90a
without a GPU: Gluon does not run in the interpreter, so on the CPU we check what the compiler made of it. Its
numbers (and its correctness on data) come from benchmarks/attention_gluon_check.py on a GPU.

Asserted in the PTX of each default config (D 64 and 128, causal or not): the GEMMs are wgmma.mma_async; loads are
TMA (cp.async.bulk.tensor) completed on mbarriers; the partitions re-split the register file (setmaxnreg: the
producer down to its 24, the consumers up to their share); and ptxas reports no spills (no local memory). The same
for the sweep's newer configs (NEW: persistent CTAs, three consumer warpgroups, and for BLOCK_M = 192 the variant for
a T that is no multiple of it, a last partial query tile; persistent ones with the balanced schedule), causal or not.
And for the ping-pong variants (PINGPONG:
Config.pingpong, persistent or not, D 64 and 128, causal or not, and D 128's three-stage tiles): the same, plus the
turn protocol in the PTX (one more count-1 mbarrier per consumer warpgroup; in every loop iteration the turn is
passed on, an mbarrier.arrive, after both GEMMs are issued and before the wait for S), against the same config
without ping-pong, which has no arrive there."""
import json
import os
import re
import subprocess
import sys

import pytest

from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
from tests.ptxas_tools import ptxas_log, ptxas_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not fg.HAS_GLUON:
    pytest.skip("this triton has no triton.experimental.gluon Hopper module", allow_module_level=True)


# Ping-pong: each D's default tiles persistent and not (D 128's persistent one is SHORT_128, its short-sequence
# config: the persistent BM128-BN128-s2 spills when causal, pingpong or not), and D 128's three-stage tiles.
PINGPONG_CONFIGS = [(64, fg.CONFIGS[64]._replace(pingpong=True)),
                    (64, fg.CONFIGS[64]._replace(persistent=False, pingpong=True)),
                    (128, fg.CONFIGS[128]._replace(pingpong=True)),
                    (128, fg.SHORT_128._replace(pingpong=True)),
                    (128, fg.Config(128, 128, 3, 2, pingpong=True))]

# The sweep's configs, the balanced schedule's first of each D (Config.balanced: the host's table read in the
# loops of the persistent kernel; CONFIGS[64] and SHORT_128 with it), and the seams' configs (Config.q_bufs,
# Config.overlap: OVERLAP_SWEEP, SEAM_SWEEP's for D 128: REG_128), SEAM_LS_64 (choose()'s for D 64 from T 4096
# without the mask) and choose()'s configs with the softmax kept beside the warpgroup's own P V (PIN_SWEEP).
COMPILED = {D: fg.SWEEP[D] + [c for c in fg.BALANCED_SWEEP[D] if c.balanced][:1]
            + [c for c in fg.OVERLAP_SWEEP[D] if c.q_bufs > 1 or c.overlap] + (fg.SEAM_SWEEP[D] if D == 128 else [])
            + fg.SEAM_LS_SWEEP[D][:1] + fg.PIN_SWEEP[D]
            for D in fg.SWEEP}


# Run in a child process without the Triton interpreter: the course's CPU mode (tests/conftest.py imports
# course) sets TRITON_INTERPRET=1 before the kernels are defined, which turns the @jit combine functions of
# gl.max/gl.sum into interpreter objects that the Gluon compiler rejects.
_COMPILE = """
import json, sys
from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
from tests.test_attention_gluon import COMPILED, PINGPONG_CONFIGS
tmp, shard, shards = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
jobs = []  # (key, config, D, causal, row_tail, also the shared-memory size)
for D in (64, 128):
    for causal in (False, True):
        jobs.append((f"{D},{int(causal)}", fg.CONFIGS[D], D, causal, False, False))
for D, cfgs in COMPILED.items():
    for cfg in cfgs:
        if not (cfg.persistent or cfg.num_consumers == 3):
            continue
        for tail in ((False, True) if cfg.BLOCK_M % 128 else (False,)):
            for causal in (False, True):
                jobs.append((f"{D},{cfg.name()},{int(causal)},{int(tail)}", cfg, D, causal, tail, False))
for D, cfg in PINGPONG_CONFIGS:
    for causal in (False, True):
        for c in (cfg, cfg._replace(pingpong=False)):
            jobs.append((f"pp,{D},{c.name()},{int(causal)}", c, D, causal, False, True))
out = {}
for key, cfg, D, causal, tail, shared in jobs[shard::shards]:
    path = f"{tmp}/{key.replace(',', '_')}.ptx"
    kernel = fg.compile_offline(cfg, D, causal, row_tail=tail)
    with open(path, "w") as f:
        f.write(kernel.asm["ptx"])
    if shared:
        with open(path + ".shared", "w") as f:
            f.write(str(kernel.metadata.shared))
    out[key] = path
print(json.dumps(out))
"""

NEW = [(D, cfg, causal, tail) for D, cfgs in COMPILED.items() for cfg in cfgs
       if cfg.persistent or cfg.num_consumers == 3
       for tail in ((False, True) if cfg.BLOCK_M % 128 else (False,)) for causal in (False, True)]


@pytest.fixture(scope="module")
def ptx_files(tmp_path_factory):
    import triton
    tmp = tmp_path_factory.mktemp("gluon_ptx")
    env = dict(os.environ, TRITON_INTERPRET="0", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    shards = max(1, min(4, len(os.sched_getaffinity(0))))  # the compiles are independent: one process per core
    procs = [subprocess.Popen([sys.executable, "-c", _COMPILE, str(tmp), str(k), str(shards)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT) for k in range(shards)]
    out = {}
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        if p.returncode != 0:
            last = [ln for ln in stderr.splitlines() if ln.strip() and not ln.strip().startswith("^")][-1:]
            if triton.__version__ != "3.6.0":  # the Gluon API moves between releases; the GPU machines run 3.6.0
                pytest.skip(f"does not compile with triton {triton.__version__} (written for 3.6.0): {last}")
            raise AssertionError(stderr[-3000:])
        out.update(json.loads(stdout))
    return {tuple(int(x) if x.isdigit() else x for x in key.split(",")): path for key, path in out.items()}


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_ptx_is_warp_specialized_wgmma_with_tma(ptx_files, D, causal):
    _check_ptx(fg.CONFIGS[D], ptx_files[D, int(causal)])


@pytest.mark.parametrize("D,cfg,causal,tail", NEW, ids=[f"D{d}-{c.name()}-causal{int(k)}" + ("-tail" if t else "")
                                                        for d, c, k, t in NEW])
def test_new_configs_ptx_and_no_spills(ptx_files, D, cfg, causal, tail, tmp_path):
    path = ptx_files[D, cfg.name(), int(causal), int(tail)]
    _check_ptx(cfg, path)
    # THREE_128 when causal: ptxas spills 56 B of stores and 72-100 B of loads (72 / 84 with triton 3.7.1 here, 100
    # with the partial tile under the GPU machines' triton 3.6.0, benchmarks/gpu_2026-11-28_s16/c/pytest.txt), and
    # it still led the two-consumer configs from T 4096 (fg.THREE_128's comment)
    # WIDE_64 when causal (52 B with triton 3.7.1; with Config.overlap 80 B, and 100 B of stores and 188 of loads
    # under triton 3.6.0): choose() takes it only when not causal.
    # D 128 with P in registers and two query buffers (REG_128 and SEAM_SWEEP's two variants of it) when causal: 4 B
    # of stores and of loads under triton 3.6.0, with the pin too; choose() takes REG_128 with the mask at T 1152-2048
    # (run s23/a: faster than SHORT_128, which does not spill, 537 against 514 TFLOP/s at T 2048).
    spilling = {(128, fg.THREE_128, True): 128, (64, fg.WIDE_64, True): 128,
                (64, fg.WIDE_64._replace(balanced="lpt", overlap=True), True): 192,
                **{(128, c, True): 8 for c in fg.SEAM_SWEEP[128] + [fg.REG_128._replace(pin=True)]},
                (128, fg.THREE_128._replace(pin=True), True): 128}
    _check_ptxas(path, tmp_path, spilling.get((D, cfg, causal), 0))


def _check_ptx(cfg, path):
    with open(path) as f:
        ptx = f.read()
    # Per consumer warpgroup: S of tile 0, S and PV in the loop (twice if causal), the last PV: each a
    # (D or BLOCK_N) / 16-step chain of m64nNk16 instructions.
    n_wgmma = len(re.findall(r"wgmma\.mma_async", ptx))
    assert n_wgmma >= cfg.num_consumers * 4, n_wgmma
    # TMA loads completing on an mbarrier (shared::cluster in triton 3.6.0's PTX, shared::cta in 3.7.1's)
    assert re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::\w+\.global\.mbarrier::complete_tx", ptx)
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx  # TMA store of O
    assert "mbarrier.try_wait" in ptx and "mbarrier.arrive" in ptx
    regs = {int(n) for n in re.findall(r"setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx)}
    assert cfg.producer_regs in regs and fg.consumer_regs(cfg) in regs, regs
    assert "ld.local" not in ptx and "st.local" not in ptx
    assert "wgmma.wait_group.sync.aligned 1" in ptx  # S waited while P V stays in flight
    # P V's A operand: P in registers ({...}, {...}, B's descriptor), or (p_bufs) P's shared buffer (a descriptor)
    assert bool(re.search(r"wgmma\.mma_async[^;]*\},\s*\{", ptx)) == (cfg.p_bufs == 0)
    # P stored to shared memory and fenced for the async proxy: every fence but the output's (which its TMA store
    # follows before any wgmma; a P fence may have neither a wgmma nor a store after it in the text, as the
    # persistent configs put the loop's fence last: its wgmma comes through the loop's back edge), at least the
    # prologue's and the loop's in every consumer
    p_fences = 0
    for f in (m.start() for m in re.finditer(r"fence\.proxy\.async\.shared::cta", ptx)):
        nxt, store = ptx.find("wgmma.fence.sync.aligned", f), ptx.find("cp.async.bulk.tensor.2d.global.shared::cta", f)
        p_fences += not (store != -1 and (nxt == -1 or store < nxt))
    assert (p_fences >= 2 * cfg.num_consumers) if cfg.p_bufs else p_fences == 0, p_fences


PP = [(D, cfg, causal) for D, cfg in PINGPONG_CONFIGS for causal in (False, True)]


@pytest.mark.parametrize("D,cfg,causal", PP, ids=[f"D{d}-{c.name()}-causal{int(k)}" for d, c, k in PP])
def test_pingpong_ptx_turns_and_no_spills(ptx_files, D, cfg, causal, tmp_path):
    path = ptx_files["pp", D, cfg.name(), int(causal)]
    plain = ptx_files["pp", D, cfg._replace(pingpong=False).name(), int(causal)]
    _check_ptx(cfg, path)
    _check_ptxas(path, tmp_path)
    with open(path + ".shared") as f:  # triton's count of the shared memory (alignment included)
        assert int(f.read()) <= fg.SMEM_LIMIT
    with open(path) as f:
        ptx = f.read()
    with open(plain) as f:
        ptx_plain = f.read()
    inits = lambda text: re.findall(r"mbarrier\.init\.shared(?:::cta)?\.b64\s+\[[^]]+\],\s*(\d+);", text)  # noqa: E731
    # One turn barrier per consumer warpgroup, count 1 (each phase: the previous warpgroup's one arrive).
    assert inits(ptx).count("1") == inits(ptx_plain).count("1") + cfg.num_consumers, (inits(ptx), inits(ptx_plain))
    assert inits(ptx).count(str(cfg.num_consumers)) == inits(ptx_plain).count(str(cfg.num_consumers))
    # Main loop, every consumer: S_j and P_{j-1} V_{j-1} issued, then the turn passed on, then S_j waited.
    for text, turns in ((ptx, True), (ptx_plain, False)):
        waits = [m.start() for m in re.finditer(r"wgmma\.wait_group\.sync\.aligned 1;", text)]
        assert len(waits) >= cfg.num_consumers * (2 if causal else 1), len(waits)
        for w in waits:
            since_issue = text[text.rfind("wgmma.commit_group.sync.aligned", 0, w):w]
            assert ("mbarrier.arrive" in since_issue) == turns, since_issue
    # Turn waits in each consumer: at least the prologue's and the loop's (causal: more loops; LLVM may merge some).
    n_waits = lambda text: len(re.findall(r"mbarrier\.try_wait", text))  # noqa: E731
    assert n_waits(ptx) >= n_waits(ptx_plain) + 2 * cfg.num_consumers, (n_waits(ptx), n_waits(ptx_plain))


PIN_SASS = [(64, fg.SEAM_64, False, 0), (64, fg.SEAM_PIN_64, False, 66), (128, fg.THREE_128, False, 0),
            (128, fg.SHORT_128, True, 3)]


@pytest.mark.parametrize("D,cfg,causal,most", PIN_SASS, ids=["SEAM_64", "SEAM_PIN_64", "THREE_128", "SHORT_128-causal"])
def test_pin_keeps_the_exponentials_beside_the_p_v(ptx_files, D, cfg, causal, most, tmp_path):
    """Chapter 4's point on the softmax beside its own product: in the machine code, the exponentials (MUFU.EX2)
    between a warpgroup's wait for its scores (WARPGROUP.DEPBAR.LE gsb0, 0x1) and its wait for its P V (the next
    DEPBAR): without Config.pin none (ptxas moves the second wait above them), at most 3 of the 34 of SHORT_128's
    64-key tiles; with it all 66 of a tile (64 scores a thread and the 2 rows' alphas). Seen with the ptxas of triton
    3.6.0 and of 3.7.1."""
    ptxas_log(ptx_files[D, cfg.name(), int(causal), 0], tmp_path)
    cuobjdump = os.path.join(os.path.dirname(ptxas_path()), "cuobjdump")
    if not os.path.exists(cuobjdump):
        pytest.skip("no cuobjdump beside ptxas")
    sass = subprocess.run([cuobjdump, "-sass", str(tmp_path / "k.cubin")], capture_output=True, text=True,
                          timeout=120).stdout
    ins = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", sass)
    counts = []
    for k, i in enumerate(ins):
        if "WARPGROUP.DEPBAR.LE gsb0, 0x1" in i:
            end = next(j for j in range(k + 1, len(ins)) if "WARPGROUP.DEPBAR" in ins[j])
            counts.append(sum("MUFU.EX2" in x for x in ins[k:end]))
    assert len(counts) >= 2 and max(counts) == most, counts  # (the seam's wait for one product: none either way)


@pytest.mark.parametrize("D", [64, 128])
def test_ptxas_no_spills(ptx_files, D, tmp_path):
    _check_ptxas(ptx_files[D, 1], tmp_path)


def _check_ptxas(path, tmp_path, max_spill_bytes=0):
    log = ptxas_log(path, tmp_path, max_spill_bytes)  # assembled, no spills (or at most max_spill_bytes)
    assert "serialized" not in log, log  # ptxas's warning when wgmma pipelining across calls is lost


def test_configs_fit_and_unsupported_raise():
    for D, cfgs in fg.SWEEP.items():
        assert fg.CONFIGS[D] in cfgs and len({c.name() for c in cfgs}) == len(cfgs)
        for c in cfgs:
            fg.check_config(c, D)
    with pytest.raises(ValueError, match="head dimension"):
        fg.check_config(fg.CONFIGS[64], 96)
    with pytest.raises(ValueError, match="multiple"):
        fg.check_config(fg.CONFIGS[128], 128, T=1000)
    with pytest.raises(ValueError, match="shared memory"):
        fg.check_config(fg.Config(128, 128, 4, 2), 128)
    with pytest.raises(ValueError, match="shared memory"):  # persistent: the output has its own buffer
        fg.check_config(fg.Config(128, 128, 3, 2, persistent=True), 128)
    fg.check_config(fg.Config(192, 64, 3, 3), 64, T=1024)  # a last partial query tile (rows 1024..1151 unused)
    # D 128 with three 128-key stages fits (229 KB with its barriers; the compile test: triton's own count too),
    # ping-pong or not; ping-pong needs two consumer warpgroups to alternate.
    for pp in (False, True):
        cfg = fg.Config(128, 128, 3, 2, pingpong=pp)
        fg.check_config(cfg, 128, T=1024)
        assert fg.smem_bytes(cfg, 128) <= fg.SMEM_LIMIT
    with pytest.raises(ValueError, match="pingpong"):
        fg.check_config(fg.Config(64, 128, 3, 1, pingpong=True), 64)
    # Off by default; choose() no longer takes it (three consumer warpgroups beat it: THREE_128), and takes P through
    # shared memory only with three consumers (WIDE_64 and PERSIST_128, with P buffers too, are no longer chosen)
    picks = {(D, T, c): fg.choose(D, T, c) for D in (64, 128) for T in (1024, 2048, 4096, 8192) for c in (False, True)}
    assert not any(cfg.pingpong for cfg in picks.values())
    assert {k for k, cfg in picks.items() if cfg.p_bufs} == {k for k, cfg in picks.items() if cfg.num_consumers == 3}
    assert fg.smem_bytes(fg.WIDE_64, 64) <= fg.SMEM_LIMIT < fg.smem_bytes(fg.WIDE_64._replace(num_stages=3), 64)
    for p_bufs in (1, 2):  # P's buffers count in the shared memory: D 128's 192 x 128 tiles fit one, not two
        assert fg.smem_bytes(fg.Config(192, 128, 2, 3, p_bufs=p_bufs), 128) - fg.smem_bytes(
            fg.Config(192, 128, 2, 3), 128) == p_bufs * 192 * 128 * 2
    fg.check_config(fg.THREE_128, 128, T=2048)
    with pytest.raises(ValueError, match="shared memory"):
        fg.check_config(fg.THREE_128._replace(p_bufs=2), 128)
    with pytest.raises(ValueError, match="p_bufs"):
        fg.check_config(fg.THREE_128._replace(p_bufs=3), 128)
    assert not fg.Config(128, 128, 2, 2).pingpong and not fg.PINGPONG_128.persistent
    cfg = fg.CONFIGS[128]._replace(pingpong=True)
    assert cfg.name() == fg.CONFIGS[128].name() + "-pp" and "pingpong=True" in str(cfg)
    with pytest.raises(ValueError, match="multiple"):
        fg.check_config(fg.Config(192, 64, 3, 3), 64, T=1000)
