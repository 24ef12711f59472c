"""Chapter 6, exercise 4: long rows split over programs that stream their share twice, the second time from L2
(the kernel: kernels_ref/ch07_cross_entropy/cross_entropy_split.py), against the two-pass reference, Liger-Kernel's
kernel and the copy of as many bytes, in one process (CUDA events, L2 flushed). Every configuration is checked
against float64 first (ignored rows, label smoothing, in place, rows of +100 and -200).

    python benchmarks/ch06_ce_l2split.py [--focused] [OUT.json]

The sweep without a flag ran on an H200 and an H100, the focused one (base-2 statistics, deeper blocks,
a pipelined pass 1) on the H100 (archived run gpu_2026-11-26_s5).
"""
from __future__ import annotations

import json
import sys

import torch

from course import timing
from kernels_ref.ch07_cross_entropy import cross_entropy_triton as ref
from kernels_ref.ch07_cross_entropy.cross_entropy_split import cross_entropy_split

from benchmarks.ch06_ce_bench import liger_launch  # one launch of Liger-Kernel's kernel for both benchmarks


def ce_l2split(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0, chunk=16384, block=4096, warps=8,
               exp2=False, stages=1):
    cross_entropy_split(logits, target, loss, dlogits, z_weight, smoothing, chunk=chunk, block=block, warps=warps,
                        exp2=exp2, stages=stages)

W = 1e-4
# (CHUNK, BLOCK, warps): the best of a wider sweep on an H200 (archived run gpu_2026-11-26_s5/ce_l2split.log)
CONFIGS = ((16384, 8192, 8), (32768, 8192, 8), (32768, 16384, 16), (65536, 8192, 8), (32768, 4096, 4))


def want64(x, t, smoothing):
    xd = x.double()
    lse = torch.logsumexp(xd, -1)
    rows, cols = x.shape
    ok = t != -100
    tt = t.clamp(min=0)
    xt = xd[torch.arange(rows, device=x.device), tt]
    loss = lse - (1 - smoothing) * xt - smoothing * xd.mean(-1) + W * lse * lse
    g = torch.softmax(xd, -1) * (1 + 2 * W * lse[:, None]) - smoothing / cols
    g[torch.arange(rows, device=x.device), tt] -= 1 - smoothing
    return torch.where(ok, loss, 0.0), torch.where(ok[:, None], g, 0.0)


def check(label, fn, x, t, smoothing, inplace):
    loss = torch.empty(x.shape[0], device="cuda")
    xx = x.clone()
    dx = xx if inplace else torch.empty_like(x)
    fn(xx, t, loss, dx, W, smoothing)
    torch.cuda.synchronize()
    wl, wg = want64(x, t, smoothing)
    el = float((loss.double() - wl).abs().max())
    eg = float((dx.double() - wg).abs().max())
    ok = el < 1e-3 and eg < (2 * 2.0 ** -8 if x.dtype == torch.bfloat16 else 1e-5)
    print(f"  check {label} {tuple(x.shape)} {x.dtype} smoothing {smoothing} in place {inplace}: "
          f"max |err| loss {el:.1e} grad {eg:.1e} {'ok' if ok else 'WRONG'}", flush=True)
    return ok


def focused(path):
    """The second sweep (H100, same session): base-2 statistics only, deeper blocks and a pipelined pass 1."""
    print(torch.cuda.get_device_name(), flush=True)
    out = []
    for (rows, cols), dt in (((2048, 131072), torch.bfloat16), ((1024, 262144), torch.bfloat16)):
        x = (torch.randn(rows, cols, device="cuda") * 2).to(dt)
        t = torch.randint(0, cols, (rows,), device="cuda")
        loss = torch.empty(rows, device="cuda")
        dx = torch.empty_like(x)
        bad = 0
        for stages in (1, 2, 3):
            bad += not check(f"l2split stages {stages}", lambda *a, st=stages: ce_l2split(
                *a, chunk=32768, block=8192, warps=8, exp2=True, stages=st), x[:64], t[:64], 0.1, True)
        nbytes = 2 * x.numel() * x.element_size() + 12 * rows
        copy = timing.copy_gbps(nbytes)
        print(f"{rows}x{cols} {dt}: copy {copy:.0f} GB/s, {bad} checks wrong", flush=True)
        runs = [("reference (two passes, one program per row)", lambda: ref.cross_entropy(x, t, loss, dx, W))]
        for name, fn in runs + [
                (f"l2split CHUNK {c} BLOCK {b} warps {w} exp2 stages {st}",
                 lambda c=c, b=b, w=w, st=st: ce_l2split(x, t, loss, dx, W, chunk=c, block=b, warps=w, exp2=True,
                                                         stages=st))
                for c, b, w, st in ((32768, 8192, 8, 1), (32768, 8192, 8, 2), (32768, 8192, 8, 3),
                                    (32768, 16384, 8, 1), (65536, 16384, 8, 1), (16384, 8192, 8, 2),
                                    (32768, 8192, 16, 2))]:
            try:
                g = timing.gbps(nbytes, timing.bench(fn))
            except Exception as e:  # noqa: BLE001
                print(f"  {name:52} failed: {type(e).__name__} {str(e)[:150]}", flush=True)
                continue
            out.append({"shape": [rows, cols], "dtype": str(dt), "variant": name, "gbps": g, "fraction": g / copy})
            print(f"  {name:52} {100 * g / copy:5.1f}% of copy", flush=True)
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "runs": out}, f, indent=1)
    return 0


def main(path):
    print(torch.cuda.get_device_name(), flush=True)
    bad = 0
    for (rows, cols), dt in (((64, 131072), torch.bfloat16), ((37, 50257), torch.float32),
                             ((16, 262151), torch.bfloat16), ((300, 32000), torch.bfloat16), ((5, 1), torch.float32),
                             ((33, 100003), torch.float32)):
        x = (torch.randn(rows, cols, device="cuda") * 3).to(dt)
        x[::3] += 100
        x[1::5] -= 200
        t = torch.randint(0, cols, (rows,), device="cuda")
        t[1::4] = -100
        for cfg in ((16384, 4096, 8, False), (8192, 2048, 4, True), (32768, 8192, 8, True)):
            for sm, ip in ((0.0, False), (0.1, True)):
                bad += not check(f"l2split {cfg}", lambda *a, cfg=cfg: ce_l2split(*a, chunk=cfg[0], block=cfg[1],
                                                                                   warps=cfg[2], exp2=cfg[3]),
                                 x, t, sm, ip)
    print(f"checks: {bad} wrong", flush=True)
    liger = None
    try:
        from liger_kernel.ops import cross_entropy as liger
    except Exception as e:  # noqa: BLE001
        print(f"Liger-Kernel not available ({e})", flush=True)
    out = []
    for (rows, cols), dt in (((2048, 131072), torch.bfloat16), ((1024, 262144), torch.bfloat16),
                             ((4096, 32768), torch.bfloat16), ((2048, 131072), torch.float32)):
        x = (torch.randn(rows, cols, device="cuda") * 2).to(dt)
        t = torch.randint(0, cols, (rows,), device="cuda")
        loss = torch.empty(rows, device="cuda")
        dx = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size() + 12 * rows
        copy = timing.copy_gbps(nbytes)
        print(f"{rows}x{cols} {dt}: copy {copy:.0f} GB/s", flush=True)

        def record(name, fn):
            g = timing.gbps(nbytes, timing.bench(fn))
            out.append({"shape": [rows, cols], "dtype": str(dt), "variant": name, "gbps": g, "fraction": g / copy})
            print(f"  {name:48} {100 * g / copy:5.1f}% of copy", flush=True)

        record("reference (two passes, one program per row)", lambda: ref.cross_entropy(x, t, loss, dx, W))
        for chunk, block, warps in CONFIGS:
            for exp2 in (False, True):
                record(f"l2split CHUNK {chunk} BLOCK {block} warps {warps}{' exp2' if exp2 else ''}",
                       lambda: ce_l2split(x, t, loss, dx, W, chunk=chunk, block=block, warps=warps, exp2=exp2))
        xi = x.clone()
        record("l2split CHUNK 32768 BLOCK 8192 warps 8 exp2, in place",
               lambda: ce_l2split(xi, t, loss, xi, W, chunk=32768, block=8192, warps=8, exp2=True))
        if liger is not None:
            xl = x.clone()
            lg = torch.empty(rows, dtype=dt, device="cuda")

            def liger_kernel():
                liger_launch(liger, xl, t, lg)
            record("Liger-Kernel kernel (in place, 32 warps)", liger_kernel)
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "checks_wrong": bad, "runs": out}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    focus = "--focused" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--focused"]
    sys.exit((focused if focus else main)(args[0] if args else None))
