"""The Hopper FlashAttention candidate (kernels_ref/ch04_flash_attention/flash_attention_hopper.py) against
float64 attention. On the CPU the Triton interpreter runs it (small shapes; bf16 runs on fp32 copies, since
the interpreter's bf16 tl.dot is wrong); its speed is a GPU question (benchmarks/attention_hopper_sweep.py).
The interpreter runs every path, TMA descriptors (host and in-kernel) included; warp_specialize is ignored
there, and whether a config compiles for sm_90 only the GPU test (or the sweep) says."""
import math

import pytest
import torch

from course import mode
from kernels_ref.ch04_flash_attention import flash_attention_hopper as fh

C = fh.Config


def reference(q, k, v, causal):
    q, k, v = (t.double() for t in (q, k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        T = s.shape[-1]
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


def run(shape, causal, dtype, config=None, kind="randn", device="cpu", impl=None):
    """impl(q, k, v, o, causal) against float64 (default: the candidate with config); raises if wrong."""
    g = torch.Generator(device=device).manual_seed(15)
    q, k, v = (torch.randn(*shape, generator=g, device=device) for _ in range(3))
    if kind == "negative":  # every score below -200·sqrt(D): the running max must start at -inf
        q, k = -(200 + 10 * q.abs()), 1 + k.abs()
    q, k, v = (t.to(dtype) for t in (q, k, v))
    o = torch.full_like(q, float("nan"))  # a row the kernel forgets to write stays NaN
    if impl is None:
        fh.flash_attention(q, k, v, o, causal, config)
    else:
        impl(q, k, v, o, causal)
    ref = reference(q, k, v, causal)
    err = (o.double() - ref).abs().max().item()
    # A few roundings of the output type (fp16 2^-11, bf16 2^-8; fp32 runs are much closer) of max|o|.
    unit = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float32: 2.0 ** -20}[dtype]
    assert err <= 8 * unit * max(1.0, ref.abs().max().item()), (shape, causal, dtype, config, err)


CPU_CASES = [  # (shape, causal, dtype, config)
    ((1, 2, 128, 64), False, torch.float16, None),                 # default: host TMA descriptors
    ((1, 2, 256, 64), True, torch.float16, None),
    ((1, 2, 256, 128), False, torch.float16, None),
    ((1, 2, 128, 128), True, torch.float16, None),
    ((1, 2, 200, 64), True, torch.float16, None),                  # partial tiles: masked keys, masked store
    ((1, 2, 200, 64), False, torch.float16, None),
    ((1, 2, 256, 64), True, torch.float32, C(64, 32, 4, 3, tma=0)),  # the fp32 (upcast) path, pointer loads
    ((1, 2, 130, 128), True, torch.float32, C(64, 32, 4, 3, tma=0)),
    ((1, 2, 256, 128), True, torch.bfloat16, C(64, 64, 4, 3)),     # bf16: run on fp32 copies on the CPU
    ((1, 2, 256, 64), True, torch.float16, C(64, 32, 4, 3, tma=2)),  # in-kernel descriptors
    ((1, 2, 200, 64), False, torch.float16, C(64, 32, 4, 3, tma=2)),
    ((1, 2, 256, 64), False, torch.float16, C(64, 32, 4, 3, pipe=True)),  # hand-pipelined main loop
    ((1, 2, 200, 64), True, torch.float16, C(64, 32, 4, 3, tma=0, pipe=True)),
    ((1, 2, 256, 128), True, torch.float16, C(128, 64, 8, 3, tma=2, ws=True)),  # ws: ignored by the interpreter
    ((1, 1, 1, 64), True, torch.float16, None),                    # one query, one key
    ((1, 2, 17, 128), False, torch.float16, C(64, 64, 4, 3, tma=0)),
]


@pytest.mark.skipif(mode.GPU, reason="the interpreter cases; on a GPU test_gpu_configs runs")
@pytest.mark.parametrize("shape,causal,dtype,config", CPU_CASES)
def test_candidate_matches_float64(shape, causal, dtype, config):
    run(shape, causal, dtype, config)


@pytest.mark.skipif(mode.GPU, reason="interpreter case")
def test_negative_scores():
    run((1, 1, 100, 64), True, torch.float16, kind="negative")


def test_configs_are_well_formed():
    from benchmarks.attention_hopper_sweep import SWEEP_CONFIGS
    for D, cfgs in list(SWEEP_CONFIGS.items()) + [(D, [c]) for D, c in fh.CONFIGS.items()]:
        assert len({c.name() for c in cfgs}) == len(cfgs)
        for c in cfgs:
            assert c.BLOCK_M % c.BLOCK_N == 0 and c.tma in (0, 1, 2), c


@pytest.mark.skipif(not mode.GPU, reason="needs a GPU")
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_configs(D, causal):
    """Every sweep config (compile errors included) on bf16 and fp16, full and partial tiles."""
    from benchmarks.attention_hopper_sweep import SWEEP_CONFIGS
    for cfg in SWEEP_CONFIGS[D]:
        for shape, dtype in (((2, 3, 1024, D), torch.bfloat16), ((1, 2, 777, D), torch.float16)):
            run(shape, causal, dtype, cfg, device="cuda")


@pytest.mark.skipif(mode.GPU, reason="the sweep's logic on the CPU; on a GPU run the sweep itself")
def test_sweep_logic_on_cpu(tmp_path, monkeypatch, capsys):
    """benchmarks/attention_hopper_sweep.py end to end on tiny shapes in the interpreter: records, error
    records (cuDNN has no CPU kernel; the teaching kernel's bf16 tl.dot is wrong in the interpreter),
    the TOP configs carried from KEY_T to the other T, the summary and the JSON."""
    import json
    import time
    import types

    from benchmarks import attention_hopper_sweep as sw
    monkeypatch.setattr(sw, "DEVICE", "cpu")
    monkeypatch.setattr(sw, "B", 1)
    monkeypatch.setattr(sw, "H", 1)
    monkeypatch.setattr(sw, "KEY_T", 128)
    monkeypatch.setattr(sw, "TOP", 1)
    monkeypatch.setattr(sw, "KEY_SHAPES", [(64, 128, True)])
    monkeypatch.setattr(sw, "OTHER_SHAPES", [(64, 64, True)])
    monkeypatch.setattr(sw, "SWEEP_CONFIGS", {64: [C(64, 32, 4, 3), C(32, 32, 4, 3, tma=0), C(64, 64, 4, 3, tma=2)]})

    def fake_bench(fn):
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    monkeypatch.setattr(sw, "timing", types.SimpleNamespace(bench=fake_bench))
    out = tmp_path / "sweep.json"
    monkeypatch.setattr("sys.argv", ["sweep", str(out), "--per-config", "120"])
    sw.main()
    doc = json.loads(out.read_text())
    recs = {(r["T"], r["variant"]): r for r in doc["records"]}
    assert "error" in recs[(128, "sdpa cudnn")]
    assert all(recs[(128, c.name())].get("tflops") for c in sw.SWEEP_CONFIGS[64])
    carried = [r["variant"] for r in doc["records"] if r["T"] == 64 and r["config"]]
    assert len(carried) == 1 and recs[(64, carried[0])].get("tflops")
    assert doc["complete"] and [(b["T"], bool(b["best"])) for b in doc["best"]] == [(128, True), (64, True)]
    assert "best candidate config per shape" in capsys.readouterr().out
