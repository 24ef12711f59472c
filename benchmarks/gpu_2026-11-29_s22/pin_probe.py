"""Does the softmax overlap its own warpgroup's P V? (twenty-second session, run b.) Offline, ptxas 12.8 (triton
3.6.0) places the wait for tile j-1's P V (wgmma.wait_group 0) above tile j's exponentials in every config with P in
registers or in one shared buffer: 0 of the 66 MUFU.EX2 sit between the two waits, so a warpgroup's softmax runs
after its own P V, not beside it. Passing the row sums through `bar.warp.sync -1` (inline asm, before the wait) keeps
all 66 there. This probe times the kernel as committed ("base") against the same source with that one line added in
_attend and in the seam of Config.overlap = 2 ("pin", a copy of the module loaded under another name), choose()'s
configs, with cuDNN beside them, checking every output against SDPA first.
Usage: PYTHONPATH=$PWD python benchmarks/gpu_2026-11-29_s22/pin_probe.py OUT.json"""
import importlib.util
import inspect
import json
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend

from benchmarks.attention_hopper_sweep import sdpa
from course import timing
from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg

PIN = ('{0} = gl.inline_asm_elementwise("{{ bar.warp.sync -1; mov.b32 $0, $1; }}", "=r,r", [{0}], '
       'dtype=gl.float32, is_pure=False, pack=1)\n')


def pinned_module():
    src = inspect.getsource(fg)
    marks = [("            acc, _ = warpgroup_mma_wait(0, deps=(o_tok, p_op))  # p_op: live until", "l_i", 12),
             ("                    acc, _ = warpgroup_mma_wait(0, deps=(o_tok, p_op))\n"
              "                    mbarrier.arrive(v_empty.index(last)", "l_0", 20)]
    for mark, var, indent in marks:
        assert src.count(mark) == 1, mark
        src = src.replace(mark, " " * indent + PIN.format(var) + mark)
    name = "kernels_ref.ch04_flash_attention.fag_pin"
    path = "/tmp/fag_pin.py"
    open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


fp = pinned_module()
SHAPES = [(64, 1024, False), (64, 2048, False), (64, 4096, False), (64, 1024, True), (64, 4096, True),
          (128, 1024, False), (128, 4096, False), (128, 4096, True), (128, 16384, False)]
out = {"device": torch.cuda.get_device_name(), "rows": []}
for D, T, causal in SHAPES:
    B, H = 4, 32
    q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref = sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal).float()
    variants = {"cudnn": lambda o: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal),
                "base": lambda o: fg.flash_attention(q, k, v, o, causal),
                "pin": lambda o: fp.flash_attention(q, k, v, o, causal)}
    if D == 64 and not causal:
        cfg2 = fp.choose(D, T, causal)._replace(overlap=2)
        variants["pin+ov2"] = lambda o, c=cfg2: fp.flash_attention(q, k, v, o, causal, c)
    ok = {}
    for name, fn in variants.items():
        o = torch.full_like(q, float("nan"))
        r = fn(o)
        got = (r if name == "cudnn" else o).float()
        err = (got - ref).abs().max().item()
        ok[name] = err < 3e-2
        print(f"D {D} T {T} causal {causal} {name}: max error {err:.3g}", flush=True)
    times = {n: [] for n in variants if ok[n]}
    for rnd in range(3):
        for name in (list(times) if rnd % 2 == 0 else list(times)[::-1]):
            o = torch.empty_like(q)
            times[name].append(timing.bench(lambda fn=variants[name], o=o: fn(o)))
    flops = 4 * B * H * T * T * D / (2 if causal else 1)
    row = {"D": D, "T": T, "causal": causal, "config": fg.choose(D, T, causal).name(), "errors_ok": ok}
    for name, ms in times.items():
        row[name] = [flops / (m * 1e-3) / 1e12 for m in ms]
    out["rows"].append(row)
    print(f"D {D} T {T} causal {causal} {row['config']}: " + "; ".join(
        f"{n} {statistics.median(row[n]):.0f}" for n in times), flush=True)
    json.dump(out, open(sys.argv[1], "w"), indent=1)
