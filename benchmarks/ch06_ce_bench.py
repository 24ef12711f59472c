"""Chapter 6, exercise 4 on a GPU: cross-entropy loss + gradient (z-loss 1e-4) over large vocabularies.
The reference `cross_entropy` and launch variants of it (block, warps, programs), a three-pass kernel,
Liger-Kernel's fused cross-entropy (its kernel alone, and its forward function with its host syncs) and
PyTorch (F.cross_entropy + logsumexp², forward and backward by autograd), all timed in this process
(CUDA events, L2 flushed) against the copy of the bytes the op must move: read the logits once, write
the gradient once (+ 8 B target and 4 B loss per row). Each result is checked against float64 first.

    python benchmarks/ch06_ce_bench.py [OUT.json]

Liger-Kernel comes from a wheel (`pip download liger-kernel --no-deps`); without it, its rows are skipped.
"""
from __future__ import annotations

import json
import sys

import torch
import triton
import triton.language as tl

from course import timing
from kernels_ref.ch06_low_precision import cross_entropy_triton as ref

W = 1e-4
SHAPES = [(4096, 32768), (2048, 131072), (1024, 262144)]


@triton.jit
def three_pass_kernel(x_ptr, t_ptr, loss_ptr, dx_ptr, cols, z_weight, BLOCK: tl.constexpr):
    """One program per row; max, then sum, then gradient: the row read three times."""
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    base = row * cols
    m = tl.max(tl.full([BLOCK], -float("inf"), tl.float32), axis=0)
    for s in range(0, cols, BLOCK):
        m = tl.maximum(m, tl.max(tl.load(x_ptr + base + s + c, mask=s + c < cols, other=-float("inf"))
                                 .to(tl.float32), axis=0))
    d = tl.sum(tl.zeros([BLOCK], tl.float32), axis=0)
    for s in range(0, cols, BLOCK):
        x = tl.load(x_ptr + base + s + c, mask=s + c < cols, other=-float("inf")).to(tl.float32)
        d += tl.sum(tl.exp(x - m), axis=0)
    lse = m + tl.log(d)
    t = tl.load(t_ptr + row)
    tl.store(loss_ptr + row, lse - tl.load(x_ptr + base + t).to(tl.float32) + z_weight * lse * lse)
    for s in range(0, cols, BLOCK):
        x = tl.load(x_ptr + base + s + c, mask=s + c < cols, other=0.0).to(tl.float32)
        g = tl.exp(x - lse) * (1.0 + 2.0 * z_weight * lse)
        g = tl.where(s + c == t, g - 1.0, g)
        tl.store(dx_ptr + base + s + c, g.to(dx_ptr.dtype.element_ty), mask=s + c < cols)


def launch(x, t, loss, dx, block, warps, programs):
    rows, cols = x.shape
    ref.cross_entropy_kernel[(programs,)](x, t, loss, dx, rows, cols, W, 0.0, BLOCK=block, num_warps=warps)


def reference64(x, t):
    x = x.double()
    lse = torch.logsumexp(x, -1)
    loss = lse - x.gather(1, t[:, None])[:, 0] + W * lse * lse
    g = torch.softmax(x, -1) * (1 + 2 * W * lse[:, None])
    g[torch.arange(len(t), device=x.device), t] -= 1.0
    return loss, g


def errors(loss, dx, want):
    return (float((loss.double() - want[0]).abs().max()), float((dx.double() - want[1]).abs().max()))


def main(path: str | None) -> int:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    print(f"{torch.cuda.get_device_name()}: {sms} SMs, L2 {l2 >> 20} MiB", flush=True)
    liger = None
    try:
        from liger_kernel.ops import cross_entropy as liger  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"Liger-Kernel not available ({e}): its rows are skipped", flush=True)
    out = []
    cases = [(s, torch.bfloat16) for s in SHAPES] + [((2048, 131072), torch.float32)]
    for (rows, cols), dt in cases:
        g = torch.Generator(device="cuda").manual_seed(rows + cols)
        x = (torch.randn(rows, cols, device="cuda", generator=g) * 2).to(dt)
        t = torch.randint(0, cols, (rows,), device="cuda", generator=g)
        want = reference64(x, t)
        loss = torch.empty(rows, device="cuda")
        dx = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size() + rows * 12
        copy = timing.copy_gbps(nbytes)
        res = {"shape": [rows, cols], "dtype": str(dt).removeprefix("torch."), "bytes": nbytes, "copy_gbps": copy,
               "row_kib": cols * x.element_size() / 1024, "runs": {}}

        def record(name, fn, check=None):
            try:
                fn()
                torch.cuda.synchronize()
                err = check() if check else errors(loss, dx, want)
                ms = timing.bench(fn)
            except Exception as e:  # noqa: BLE001
                print(f"  {name:44} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
                return
            r = {"ms": ms, "gbps": timing.gbps(nbytes, ms), "fraction": timing.gbps(nbytes, ms) / copy,
                 "loss_err": err[0], "grad_err": err[1]}
            res["runs"][name] = r
            print(f"  {name:44} {r['gbps']:6.0f} GB/s = {100 * r['fraction']:5.1f}% of copy; "
                  f"max |err| loss {err[0]:.1e} grad {err[1]:.1e}", flush=True)

        print(f"{rows}x{cols} {res['dtype']} (row {res['row_kib']:.0f} KiB), copy {copy:.0f} GB/s", flush=True)
        record("reference cross_entropy", lambda: ref.cross_entropy(x, t, loss, dx, W, 0.0))
        for block in (4096, 8192, 16384):
            for warps in (8, 16, 32):
                for per_sm in (1, 2, 4, 0):
                    programs = rows if per_sm == 0 else min(rows, per_sm * sms)
                    record(f"BLOCK {block} warps {warps} programs {'rows' if per_sm == 0 else f'{per_sm}/SM'}",
                           lambda b=block, w=warps, p=programs: launch(x, t, loss, dx, b, w, p))
        record("naive: BLOCK 256, 1 warp, one program per row", lambda: launch(x, t, loss, dx, 256, 1, rows))
        record("naive: three passes (max, sum, gradient)",
               lambda: three_pass_kernel[(rows,)](x, t, loss, dx, cols, W, BLOCK=4096, num_warps=16))
        xin = x.clone()
        record("reference, in place (dlogits is logits)", lambda: ref.cross_entropy(xin, t, loss, xin, W, 0.0),
               check=lambda: errors(loss, xin, want))

        def torch_fb():
            xf = x.detach().float().requires_grad_()
            lse = torch.logsumexp(xf, -1)
            lo = torch.nn.functional.cross_entropy(xf, t, reduction="none") + W * lse * lse
            (gx,) = torch.autograd.grad(lo.sum(), xf)
            loss.copy_(lo.detach())
            dx.copy_(gx)
        record("PyTorch F.cross_entropy + z-loss, autograd", torch_fb)
        if liger is not None:
            xl = x.clone()
            lg = torch.empty(rows, dtype=dt, device="cuda")
            blk = min(65536 // 2, triton.next_power_of_2(cols))

            def liger_kernel():
                liger.liger_cross_entropy_kernel[(rows,)](
                    X_ptr=xl, X_stride=xl.stride(-2), Y_ptr=t, Y_stride=t.stride(-1), weight_ptr=None,
                    loss_ptr=lg, z_loss_ptr=None, loss_stride=1, token_accuracy_ptr=None,
                    token_accuracy_stride=0, predicted_tokens_ptr=None, predicted_tokens_stride=0, n_cols=cols,
                    n_non_ignore=rows, sum_non_ignore_weight=rows, weight_sum=0.0, ignore_index=-100,
                    lse_square_scale=W, label_smoothing=0.0, reduction="sum", softcap=None, RETURN_Z_LOSS=False,
                    RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False, BLOCK_SIZE=blk, HAS_WEIGHT=False,
                    HAS_SOFTCAPPING=False, HAS_GRADIENTS=True, num_warps=32)

            def liger_check():
                xl.copy_(x)
                liger_kernel()
                return errors(lg.float(), xl, want)
            record("Liger-Kernel kernel (in place, 32 warps)", liger_kernel, check=liger_check)

            def liger_forward():
                xl.requires_grad_(True)
                liger.cross_entropy_forward(xl, t, None, -100, W, 0.0, "sum", None, False)
                xl.requires_grad_(False)

            def liger_forward_check():
                xl.copy_(x)
                liger_forward()
                return (float("nan"), float((xl.double() - want[1]).abs().max()))
            record("Liger-Kernel cross_entropy_forward (host syncs)", liger_forward, check=liger_forward_check)
        out.append(res)
        x = dx = want = xin = None  # noqa: F841  (free the case before the next one)
        torch.cuda.empty_cache()
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "sms": sms, "l2_bytes": l2, "cases": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
