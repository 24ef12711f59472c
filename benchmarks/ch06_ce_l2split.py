"""Chapter 6, exercise 4: long rows split over programs that stream their share twice, the second time from L2.

The reference reads a row twice (pass 1: max and sum; pass 2: the gradient) and relies on L2 to serve the second
read. One program per row means that every running program has a whole row between its two reads: 132 SMs x
512 KiB (262144 bf16 columns) is more than the H100's 50 MiB L2, so most of pass 2 comes from HBM again. Here K
programs share a row, each takes CHUNK columns, reads them (pass 1), publishes its partial (m, d, sum x), waits
for the K - 1 others of its row (a counter per row), merges the K partials into lse and reads its CHUNK again
(pass 2, now from L2) to write the gradient. Nothing is held in registers across the wait, so several programs
share an SM and one streams while another waits.

Each program takes a ticket (an atomic counter) when it starts and works on the row and chunk its ticket names,
so the programs of a row are running or about to start whenever one of them waits: no reliance on the order in
which the GPU starts blocks. (Not in Triton's interpreter, which runs programs one after another.)

    python benchmarks/ch06_ce_l2split.py [OUT.json]
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


@triton.jit
def ce_l2split_kernel(x_ptr, t_ptr, loss_ptr, dx_ptr, part_ptr, sync_ptr, rows, cols, z_weight, smoothing,
                      K: tl.constexpr, KP: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
                      SMOOTH: tl.constexpr):
    tk = tl.atomic_add(sync_ptr + rows, 1)  # ticket: the order in which programs started
    row = tk // K
    k = tk - row * K
    base = row.to(tl.int64) * cols
    lo = k * CHUNK
    c = tl.arange(0, BLOCK)
    t = tl.load(t_ptr + row)
    if t == -100:
        for s in range(0, CHUNK, BLOCK):
            idx = lo + s + c
            tl.store(dx_ptr + base + idx, tl.zeros([BLOCK], tl.float32).to(dx_ptr.dtype.element_ty),
                     mask=(idx < cols) & (s + c < CHUNK))
        if k == 0:
            tl.store(loss_ptr + row, 0.0)
    else:
        m = -float("inf")
        d = 0.0
        sx = 0.0
        for s in range(0, CHUNK, BLOCK):
            idx = lo + s + c
            mask = (idx < cols) & (s + c < CHUNK)
            x = tl.load(x_ptr + base + idx, mask=mask, other=-float("inf"), eviction_policy="evict_last").to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            # a chunk past the row's end keeps m = -inf: guard the rescale against (-inf) - (-inf)
            d = d * tl.exp(tl.where(m_new == m, 0.0, m - m_new)) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
            if SMOOTH:
                sx += tl.sum(tl.where(mask, x, 0.0), axis=0)
        xt = tl.load(x_ptr + base + t).to(tl.float32)  # before anyone of the row writes (in place)
        p = part_ptr + (row.to(tl.int64) * K + k) * 3
        tl.store(p, m)
        tl.store(p + 1, d)
        tl.store(p + 2, sx)
        n = tl.atomic_add(sync_ptr + row, 1, sem="release") + 1  # release: the partial before the count
        while n < K:
            n = tl.load(sync_ptr + row, volatile=True)
        tl.atomic_add(sync_ptr + row, 0, sem="acquire")  # acquire: the others' partials are seen after this
        kk = tl.arange(0, KP)
        q = part_ptr + (row.to(tl.int64) * K + kk) * 3
        ms = tl.load(q, mask=kk < K, other=-float("inf"), volatile=True)
        ds = tl.load(q + 1, mask=kk < K, other=0.0, volatile=True)
        M = tl.max(ms, axis=0)
        lse = M + tl.log(tl.sum(tl.where(ds > 0, ds * tl.exp(ms - M), 0.0), axis=0))
        if k == 0:
            sxs = 0.0
            if SMOOTH:
                sxs = tl.sum(tl.load(q + 2, mask=kk < K, other=0.0, volatile=True), axis=0)
            tl.store(loss_ptr + row, lse - (1.0 - smoothing) * xt - smoothing / cols * sxs + z_weight * lse * lse)
        grow = 1.0 + 2.0 * z_weight * lse
        for s in range(0, CHUNK, BLOCK):
            idx = lo + s + c
            mask = (idx < cols) & (s + c < CHUNK)
            x = tl.load(x_ptr + base + idx, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            g = tl.exp(x - lse) * grow - smoothing / cols
            g = tl.where(idx == t, g - (1.0 - smoothing), g)
            tl.store(dx_ptr + base + idx, g.to(dx_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")


def ce_l2split(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0, chunk=16384, block=4096, warps=8):
    rows, cols = logits.shape
    chunk = min(chunk, triton.next_power_of_2(cols))
    block = min(block, chunk)
    k = triton.cdiv(cols, chunk)
    part = torch.empty(rows * k * 3, dtype=torch.float32, device=logits.device)
    sync = torch.zeros(rows + 1, dtype=torch.int32, device=logits.device)
    ce_l2split_kernel[(rows * k,)](logits, target, loss, dlogits, part, sync, rows, cols, z_weight, smoothing,
                                   K=k, KP=triton.next_power_of_2(k), CHUNK=chunk, BLOCK=block,
                                   SMOOTH=smoothing != 0, num_warps=warps)


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
        for cfg in ((16384, 4096, 8), (8192, 2048, 4), (32768, 8192, 16)):
            for sm, ip in ((0.0, False), (0.1, True)):
                bad += not check(f"l2split {cfg}", lambda *a, cfg=cfg: ce_l2split(*a, chunk=cfg[0], block=cfg[1],
                                                                                   warps=cfg[2]),
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
        for chunk in (8192, 16384, 32768):
            for block, warps in ((2048, 4), (4096, 8), (8192, 8), (8192, 16), (16384, 16)):
                if block > chunk:
                    continue
                record(f"l2split CHUNK {chunk} BLOCK {block} warps {warps}",
                       lambda: ce_l2split(x, t, loss, dx, W, chunk=chunk, block=block, warps=warps))
        if liger is not None:
            xl = x.clone()
            lg = torch.empty(rows, dtype=dt, device="cuda")

            def liger_kernel():
                liger.liger_cross_entropy_kernel[(rows,)](
                    X_ptr=xl, X_stride=xl.stride(-2), Y_ptr=t, Y_stride=t.stride(-1), weight_ptr=None,
                    loss_ptr=lg, z_loss_ptr=None, loss_stride=1, token_accuracy_ptr=None,
                    token_accuracy_stride=0, predicted_tokens_ptr=None, predicted_tokens_stride=0, n_cols=cols,
                    n_non_ignore=rows, sum_non_ignore_weight=rows, weight_sum=0.0, ignore_index=-100,
                    lse_square_scale=W, label_smoothing=0.0, reduction="sum", softcap=None, RETURN_Z_LOSS=False,
                    RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False,
                    BLOCK_SIZE=min(32768, triton.next_power_of_2(cols)), HAS_WEIGHT=False,
                    HAS_SOFTCAPPING=False, HAS_GRADIENTS=True, num_warps=32)
            record("Liger-Kernel kernel (in place, 32 warps)", liger_kernel)
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "checks_wrong": bad, "runs": out}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
