"""The split-row cross-entropy (kernels_ref/ch07_cross_entropy/cross_entropy_split.py) in Triton's interpreter.

The interpreter runs programs one after another, so only one program per row (K = 1) can run here: the row's
counter, the partial and the merge are exercised, the wait between programs is not (that part ran on an H100 and
an H200: benchmarks/gpu_2026-11-26_s5/ce_l2split*.log, every configuration checked against float64 first)."""
import course  # noqa: F401  (CPU mode: the interpreter is on before any kernel is defined)
import pytest
import torch

from kernels_ref.ch07_cross_entropy import cross_entropy_split as split

W = 1e-4


def _want(x, t, eps):
    xd = x.double()
    rows, cols = x.shape
    lse = torch.logsumexp(xd, -1)
    tt = t.clamp(min=0)
    loss = lse - (1 - eps) * xd[torch.arange(rows), tt] - eps * xd.mean(-1) + W * lse * lse
    g = torch.softmax(xd, -1) * (1 + 2 * W * lse[:, None]) - eps / cols
    g[torch.arange(rows), tt] -= 1 - eps
    ok = t != -100
    return torch.where(ok, loss, 0.0), torch.where(ok[:, None], g, 0.0)


@pytest.mark.skipif(course.GPU, reason="the interpreter's one-program case, on CPU tensors (on a GPU a "
                    "Triton kernel cannot take CPU tensors)")
@pytest.mark.parametrize("dtype,cols,exp2,eps,inplace", [
    (torch.float32, 3000, True, 0.1, True), (torch.float32, 1000, False, 0.0, False),
    (torch.bfloat16, 2048, True, 0.0, True), (torch.bfloat16, 777, False, 0.1, False)])
def test_one_program_per_row_matches_float64(dtype, cols, exp2, eps, inplace):
    torch.manual_seed(cols)
    rows = 6
    x = (torch.randn(rows, cols) * 3).to(dtype)
    x[::3] += 100  # large logits: the max must be taken
    x[1::5] -= 200
    t = torch.randint(0, cols, (rows,))
    t[1::4] = -100
    xx = x.clone()
    loss = torch.empty(rows)
    dx = xx if inplace else torch.empty_like(x)
    split.cross_entropy_split(xx, t, loss, dx, W, eps, chunk=4096, block=1024, warps=4, exp2=exp2)
    wl, wg = _want(x, t, eps)
    assert float((loss.double() - wl).abs().max()) < 1e-4
    tol = 2 * 2.0**-8 if dtype == torch.bfloat16 else 1e-5
    assert float((dx.double() - wg).abs().max()) < tol
    assert (dx[1::4] == 0).all() and (loss[1::4] == 0).all()  # ignored rows: nothing
