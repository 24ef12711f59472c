"""Draw the course's static diagrams (the pictures the chapters show without running code).

    python course/diagrams/make_diagrams.py            # rewrite every PNG here and STAMP
    python course/diagrams/make_diagrams.py OUTDIR     # draw into OUTDIR (tests compare)

Each diagram is a function below; the chapters reference the PNGs as
`../../course/diagrams/NAME.png` (both `source/CH/` and `release/CH/` are two levels down).
STAMP records the SHA-256 of this script: tests/test_prose.py fails when the script changed and the
PNGs were not redrawn. Only matplotlib is needed; nothing here is measured (every number drawn is
either an example value, derived in the chapter that shows the picture, or computed here from an example:
the Chapter 6 pictures run the chapter's integer algorithm on one row, in Python integers, and enumerate the
fp8 and fp4 formats' values from their bit fields).
"""
from __future__ import annotations

import hashlib
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DPI = 80
C = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C"]


def _box(ax, x, y, w, h, text="", fc="white", ec="black", fs=9, lw=1.0, **kw):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, lw=lw))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs, **kw)


def _arrow(ax, xy0, xy1, color="black", lw=1.0, style="->", **kw):
    ax.add_patch(FancyArrowPatch(xy0, xy1, arrowstyle=style, color=color, lw=lw,
                                 mutation_scale=10, shrinkA=0, shrinkB=0, **kw))


def _blank(figsize):
    fig, ax = plt.subplots(figsize=figsize)
    ax.set_axis_off()
    return fig, ax


def thread_grid():
    """Chapter 1: grid = rows blocks; block b owns row b; thread t reads columns t, t+256, ..."""
    fig, ax = _blank((8, 3.6))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 46)
    ax.text(0, 44, "grid: one block per row (grid = rows)", fontsize=10, weight="bold", va="top")
    for r in range(4):
        y = 36 - r * 5
        fc = "#dce6f2" if r != 1 else "#f6d5bf"
        _box(ax, 0, y, 22, 4, f"block {r}" if r < 3 else "...", fc=fc)
        _box(ax, 26, y, 72, 4, f"row {r} of x" if r < 3 else "...", fc="#f2f2f2")
        _arrow(ax, (22, y + 2), (26, y + 2))
    ax.text(0, 17.5, "block 1: 256 threads\n= 8 warps of 32", fontsize=8, weight="bold", va="top")
    ax.text(26, 17.5, "row 1: thread t reads columns t, t+256, t+512, t+768", fontsize=8, weight="bold",
            va="top")
    for w in range(8):
        _box(ax, w * 2.75, 7, 2.75, 4, "", fc=C[w % 8])
    ax.text(11, 5.5, "warp 0 ... warp 7", ha="center", va="top", fontsize=8)
    # the row, split in 4 chunks of 256 columns; thread t handles column t of every chunk
    for k in range(4):
        x0 = 26 + k * 18
        for w in range(8):
            _box(ax, x0 + w * 18 / 8, 7, 18 / 8, 4, "", fc=C[w % 8], lw=0.3)
        ax.text(x0 + 9, 11.6, f"cols {256 * k}..{256 * k + 255}", ha="center", fontsize=7)
    ax.text(62, 5.5, "same colour = same warp: at every step the 32 lanes of a warp read\n"
            "32 neighbouring floats (coalesced)", ha="center", va="top", fontsize=8)
    return fig


def memory_hierarchy():
    """Chapter 1: where data lives (H100 values from NVIDIA's datasheet and tuning guide)."""
    fig, ax = _blank((8, 3.4))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 44)
    levels = [
        ("registers", "per thread; 256 KiB per SM", "fastest", "#c6dbef"),
        ("shared memory / L1", "per block, on the SM; up to 228 KiB per SM", "on chip", "#9ecae1"),
        ("L2 cache", "whole GPU, 50 MiB", "on chip", "#6baed6"),
        ("HBM (GPU memory)", "80 GB, 3.35 TB/s (datasheet)", "off chip", "#4292c6"),
    ]
    for i, (name, what, where, fc) in enumerate(levels):
        y = 34 - i * 9.5
        w = 22 + 8 * i
        x = 34 - w / 2
        _box(ax, x, y, w, 7.5, name, fc=fc, fs=10, weight="bold")
        ax.text(x + w + 2, y + 3.75, what, va="center", fontsize=8)
        ax.text(x - 2, y + 3.75, where, va="center", ha="right", fontsize=8, color="#555555")
    ax.text(45, 43, "132 SMs, each with its registers and shared memory; one L2 and one HBM for all",
            ha="center", fontsize=9)
    ax.text(45, 0.5, "smaller and faster at the top; a memory-bound kernel's time is set by the HBM traffic",
            ha="center", fontsize=8, style="italic")
    return fig


def reduction_tree():
    """Chapters 1-2: sequential addressing; step s: thread t < s adds buf[t + s] into buf[t]."""
    n = 16
    fig, ax = _blank((8, 3.4))
    ax.set_xlim(-4, n + 0.5)
    ax.set_ylim(-1.1, 4.5)
    steps = [8, 4, 2, 1]
    for lvl in range(5):
        y = 4 - lvl
        live = n if lvl == 0 else steps[lvl - 1]
        for t in range(n):
            fc = C[0] if t < live else "#eeeeee"
            _box(ax, t + 0.1, y - 0.3, 0.8, 0.6, "", fc=fc, ec="#666666", lw=0.5)
        ax.text(-0.3, y, "buf" if lvl == 0 else f"s = {steps[lvl - 1]}", ha="right", va="center", fontsize=9)
        if lvl:
            s = steps[lvl - 1]
            for t in range(s):
                _arrow(ax, (t + s + 0.5, y + 0.7), (t + 0.5, y + 0.3), color=C[3], lw=0.7)
                _arrow(ax, (t + 0.5, y + 0.7), (t + 0.5, y + 0.3), color=C[3], lw=0.7)
    ax.text(n / 2, -0.9, "n values, log2(n) steps (8 for 256); a __syncthreads() between steps; "
            "active threads contiguous", ha="center", fontsize=8)
    return fig


def masked_lanes():
    """Chapter 1: a row of 10 values in a block of 16 lanes; lanes 10-15 are masked, load -inf (the max's identity),
    add exp(-inf) = 0 to the sum, and are not stored. Example values, not measured."""
    n, block = 10, 16
    vals = [0.3, -1.2, 2.0, 0.7, -0.4, 1.1, -2.3, 0.9, 0.0, -0.8]
    fig, ax = _blank((7.5, 2.7))
    ax.set_xlim(-2.9, block + 0.1)
    ax.set_ylim(-0.95, 4.6)
    rows = [("offsets", [str(i) for i in range(block)]),
            ("mask", ["T" if i < n else "F" for i in range(block)]),
            ("x (load)", [f"{v:g}" for v in vals] + ["-inf"] * (block - n)),
            ("exp(x - M)", [f"{math.exp(v - max(vals)):.2f}" for v in vals] + ["0"] * (block - n))]
    for r, (label, cells) in enumerate(rows):
        y = 3.6 - r * 1.0
        ax.text(-0.15, y + 0.35, label, ha="right", va="center", fontsize=8)
        for i, c in enumerate(cells):
            fc = "#dce6f2" if i < n else "#eeeeee"
            _box(ax, i + 0.05, y, 0.9, 0.7, c, fc=fc, ec="#666666", lw=0.5, fs=7,
                 color="black" if i < n else C[3])
    ax.text(n / 2, -0.45, f"cols = {n}: real lanes (stored)", ha="center", fontsize=8)
    ax.text(n + (block - n) / 2, -0.45, "masked lanes: never win the max,\nadd 0 to the sum, not stored",
            ha="center", fontsize=8, color=C[3])
    ax.text(block / 2, 4.45, f"BLOCK = {block} (next power of two >= cols);  mask = offsets < cols;  "
            f"M = max = {max(vals):g}", ha="center", fontsize=9, weight="bold")
    return fig


def smem_banks():
    """Chapter 2: 32 banks of 4-byte words; sequential vs stride-2 access by one warp."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 2.3))
    for ax, (title, stride) in zip(axes, [("lane t reads word t: 32 banks, 1 step", 1),
                                          ("lane t reads word 2t: 2-way conflict, 2 steps", 2)]):
        ax.set_axis_off()
        ax.set_xlim(-1.5, 32.5)
        ax.set_ylim(-0.2, 3.8)
        for row in range(2):
            for b in range(32):
                word = row * 32 + b
                hit = word % stride == 0 and word // stride < 32
                lane = word // stride
                _box(ax, b, 2 - row * 1.1, 1, 1, "", fc=(C[0] if lane < 16 else C[1]) if hit else "white",
                     ec="#888888", lw=0.4)
            ax.text(-0.3, 2.5 - row * 1.1, f"words {32 * row}..{32 * row + 31}", ha="right",
                    va="center", fontsize=6)
        for b in (0, 8, 16, 24, 31):
            ax.text(b + 0.5, 3.25, str(b), ha="center", fontsize=6)
        ax.text(16, 3.55, "bank", ha="center", fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.text(16, 0.25, "word i lives in bank i % 32; blue: read by lanes 0-15, orange: by lanes 16-31",
                ha="center", fontsize=7)
    fig.tight_layout()
    return fig


def butterfly():
    """Chapter 2: xor butterfly on 8 lanes; after log2(8) steps every lane holds the total."""
    lanes = 8
    fig, ax = _blank((8, 3.4))
    ax.set_xlim(-1.8, lanes + 0.2)
    ax.set_ylim(-0.9, 3.7)
    letters = "abcdefgh"
    held = [{i} for i in range(lanes)]
    masks = [4, 2, 1]
    for lvl in range(4):
        y = 3 - lvl
        for lane in range(lanes):
            label = "+".join(letters[i] for i in sorted(held[lane])) if len(held[lane]) < 8 else "all 8"
            _box(ax, lane + 0.05, y - 0.28, 0.9, 0.56, label, fc="#dce6f2", fs=6 if len(label) > 3 else 8)
        ax.text(-0.2, y, "values" if lvl == 0 else f"xor {masks[lvl - 1]}", ha="right", va="center", fontsize=9)
        if lvl < 3:
            mk = masks[lvl]
            for lane in range(lanes):
                ax.plot([lane + 0.5, (lane ^ mk) + 0.5], [y - 0.3, y - 0.7], color=C[lvl + 1], lw=0.8)
            held = [held[lane] | held[lane ^ mk] for lane in range(lanes)]
    ax.text(lanes / 2, -0.75, "each step: v += __shfl_xor_sync(0xffffffff, v, mask); lanes exchange registers, "
            "no memory, no barrier", ha="center", fontsize=8)
    return fig


def online_softmax():
    """Chapter 3: the running max m and the running sum d; a new max rescales d."""
    xs = [1.0, 0.2, 2.5, 1.8, 0.5, 4.0, 3.1, 3.6]
    # straight from the definitions: m_j = max of the first j values, d_j = sum of exp(x_i - m_j) over them
    ms = [max(xs[:j + 1]) for j in range(len(xs))]
    ds = [sum(math.exp(x - ms[j]) for x in xs[:j + 1]) for j in range(len(xs))]
    rescaled = [j > 0 and ms[j] > ms[j - 1] for j in range(len(xs))]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.0))
    j = list(range(1, len(xs) + 1))
    axes[0].bar(j, xs, color="#c6dbef", label="$x_j$")
    axes[0].step(j, ms, where="mid", color=C[3], lw=2, label="running max $m_j$")
    axes[0].set_xlabel("j")
    axes[0].legend(fontsize=8, loc="upper left")
    axes[0].set_title("the max only grows", fontsize=9)
    axes[1].plot(j, ds, "o-", color=C[0], label="$d_j$")
    for jj, r, dv in zip(j, rescaled, ds):
        if r:
            axes[1].annotate("new max: $d \\leftarrow d\\,e^{m_{old}-m_{new}} + 1$", (jj, dv),
                             (1.1, 2.35) if jj < 5 else (4.0, 3.0),
                             fontsize=7, arrowprops=dict(arrowstyle="->", lw=0.7))
    axes[1].set_xlabel("j")
    axes[1].set_ylim(0, max(ds) + 1.2)
    axes[1].set_title("$d_j = \\sum_{i \\leq j} e^{x_i - m_j}$: rescaled when the max moves", fontsize=9)
    for a in axes:
        a.grid(alpha=0.3)
        a.set_xticks(j)
    fig.tight_layout()
    return fig


def merge_states():
    """Chapter 3: two pieces of a row, each with its own (m, d), re-based on the larger max and added."""
    xs = [1.0, 0.2, 2.5, 1.8, 0.5, 4.0, 3.1, 3.6]  # online_softmax's example row, cut in two
    A, B = xs[:4], xs[4:]
    mA, mB = max(A), max(B)
    dA, dB = sum(math.exp(x - mA) for x in A), sum(math.exp(x - mB) for x in B)
    m = max(mA, mB)
    d = dA * math.exp(mA - m) + dB * math.exp(mB - m)
    assert abs(d - sum(math.exp(x - m) for x in xs)) < 1e-12  # the merge is exact
    fig, ax = _blank((8.6, 3.4))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 44)
    for k, (part, name, mp, dp, col) in enumerate(((A, "A", mA, dA, C[0]), (B, "B", mB, dB, C[1]))):
        x0 = 4 + 50 * k
        ax.text(x0, 43, f"piece {name}: columns {4 * k + 1}-{4 * k + 4}", fontsize=9, weight="bold", va="top")
        for i, v in enumerate(part):
            ax.add_patch(Rectangle((x0 + 2 + 8 * i, 20), 6, 3.2 * v, facecolor="#c6dbef", edgecolor="black", lw=0.6))
            ax.text(x0 + 5 + 8 * i, 19, f"{v:g}", ha="center", va="top", fontsize=7.5)
        ax.plot([x0 + 1, x0 + 35], [20 + 3.2 * mp] * 2, color=col, lw=1.6)
        ax.text(x0 + 36, 20 + 3.2 * mp, f"$m_{name}$ = {mp:g}", color=col, fontsize=8, va="center")
        _box(ax, x0 + 4, 10, 30, 5, f"$(m_{name}, d_{name})$ = ({mp:g}, {dp:.3f})", fc="#f2f2f2", fs=8.5)
        _arrow(ax, (x0 + 19, 10), (50, 6.2))
    _box(ax, 12, 0.5, 76, 5.5, f"$m$ = max({mA:g}, {mB:g}) = {m:g};   $d = d_A e^{{m_A - m}} + d_B e^{{m_B - m}}$ = "
         f"{dA:.3f} $\\cdot$ {math.exp(mA - m):.3f} + {dB:.3f} $\\cdot$ 1 = {d:.3f}", fc="#e5f5e0", fs=8.5)
    ax.text(50, -2.5, "the state with the larger max keeps the factor $e^0 = 1$: one exponential per merge",
            ha="center", va="top", fontsize=7.5)
    ax.set_ylim(-5, 44)
    return fig


def flash_tiles():
    """Chapter 4: the tile loop; Q, K, V, O in HBM, one program's working set on chip."""
    fig, ax = _blank((9, 4.1))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 51)
    _box(ax, 1, 26, 98, 24, "", fc="#f2f2f2", ec="#888888")
    ax.text(2.5, 49.3, "HBM (GPU memory)", fontsize=9, weight="bold", va="top")
    for i, (name, x) in enumerate([("Q", 6), ("K", 30), ("V", 54), ("O", 78)]):
        _box(ax, x, 28, 16, 14, "", fc="white")
        ax.text(x + 8, 43.2, f"{name}  (T x D)", ha="center", fontsize=8)
        if name == "Q":
            _box(ax, x, 36, 16, 3, "query tile", fc=C[1], fs=7)
        elif name == "O":
            _box(ax, x, 36, 16, 3, "output tile", fc=C[1], fs=7)
        else:
            for k in range(4):
                _box(ax, x, 39 - 3.5 * (k + 1) + 3, 16, 3, f"tile {k}" if k < 3 else "...",
                     fc=C[2] if k == 1 else "white", fs=7)
    _box(ax, 1, 1, 98, 21, "", fc="#fff7e6", ec="#888888")
    ax.text(2.5, 21, "on chip (registers and shared memory of one SM): one program", fontsize=9,
            weight="bold", va="top")
    _box(ax, 4, 6, 14, 8, "query tile\n(B_r x D)", fc=C[1], fs=7)
    _box(ax, 22, 10, 14, 5, "K tile (b x D)", fc=C[2], fs=7)
    _box(ax, 22, 3, 14, 5, "V tile (b x D)", fc=C[2], fs=7)
    _box(ax, 42, 6, 16, 8, "S = Q Kᵀ tile\n(B_r x b), then P", fc="#fde0dd", fs=7)
    _box(ax, 64, 10, 14, 5, "m, d (B_r)", fc="#e5f5e0", fs=7)
    _box(ax, 64, 3, 14, 5, "acc õ (B_r x D)", fc="#e5f5e0", fs=7)
    ax.text(88.5, 11.5, "for each key tile:\nm_new = max(m, rowmax S)\nα = exp(m - m_new)\n"
            "d = α d + rowsum P\nõ = α õ + P V", fontsize=6.5, ha="center", va="center")
    _arrow(ax, (14, 36), (11, 14), color=C[1], lw=1.2)
    _arrow(ax, (38, 32), (29, 15), color=C[2], lw=1.2)
    _arrow(ax, (62, 32), (36, 7), color=C[2], lw=1.2)
    _arrow(ax, (71, 15), (86, 36), color=C[1], lw=1.2)
    ax.text(87, 24.5, "written once, õ / d", fontsize=7, ha="center")
    ax.text(44, 24.2, "K, V tiles streamed in, one after the other; S and P never leave the chip",
            fontsize=7, ha="center")
    return fig


def welford_chan():
    """Chapter 5: Welford's one-value update and Chan's merge of two partial states."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.1))
    ax = axes[0]
    ax.set_axis_off()
    ax.set_xlim(0, 50)
    ax.set_ylim(0, 30)
    ax.set_title("Welford: one value at a time", fontsize=9)
    for i in range(4):
        _box(ax, 2 + i * 12, 20, 10, 5, f"(n={i + 1}, μ, M2)", fc="#dce6f2", fs=7)
        ax.text(7 + i * 12, 27.5, f"x{i + 1}", ha="center", fontsize=8)
        _arrow(ax, (7 + i * 12, 27), (7 + i * 12, 25.1))
        if i:
            _arrow(ax, (i * 12, 22.5), (2 + i * 12, 22.5))
    ax.text(25, 12, "δ = x - μ_old,   μ_new = μ_old + δ / n\nM2_new = M2_old + δ (x - μ_new)",
            ha="center", fontsize=8)
    ax.text(25, 3, "a chain: each step waits for the one before", ha="center", fontsize=7, style="italic")
    ax = axes[1]
    ax.set_axis_off()
    ax.set_xlim(0, 50)
    ax.set_ylim(0, 30)
    ax.set_title("Chan: merge any two parts, in any tree", fontsize=9)
    _box(ax, 3, 20, 18, 6, "A: (n_A, μ_A, M2_A)", fc="#dce6f2", fs=7)
    _box(ax, 29, 20, 18, 6, "B: (n_B, μ_B, M2_B)", fc="#fde0dd", fs=7)
    _box(ax, 14, 8, 22, 6, "A ∪ B: (n, μ, M2)", fc="#e5f5e0", fs=7)
    _arrow(ax, (12, 20), (20, 14.1))
    _arrow(ax, (38, 20), (30, 14.1))
    ax.text(25, 3.5, "n = n_A + n_B,  δ = μ_B - μ_A,  μ = μ_A + δ n_B / n\n"
            "M2 = M2_A + M2_B + δ² n_A n_B / n", ha="center", fontsize=8)
    fig.tight_layout()
    return fig


def fusion_trips():
    """Chapter 5: residual add + RMSNorm as two kernels (5 trips to HBM) and fused (4); each arrow is one read or
    one write of rows x cols elements."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    for ax, title in zip(axes, ("unfused: two kernels, 5 trips", "fused: one kernel, 4 trips")):
        ax.set_axis_off()
        ax.set_xlim(0, 50)
        ax.set_ylim(0, 30)
        ax.set_title(title, fontsize=9)
        _box(ax, 1, 20, 48, 9, "", fc="#f2f2f2", ec="#888888")
        ax.text(2, 28.3, "HBM", fontsize=8, weight="bold", va="top")
        _box(ax, 1, 1, 48, 9, "", fc="#fff7e6", ec="#888888")
        ax.text(2, 2.0, "on chip (registers)", fontsize=7, weight="bold")

    def tensor(ax, x, name, fc="white"):
        _box(ax, x, 21.5, 6, 4, name, fc=fc, fs=8)

    def trip(ax, x0, x1, read, n):
        y0, y1 = (21.4, 8.6) if read else (8.6, 21.4)
        _arrow(ax, (x0, y0), (x1, y1), color=C[0] if read else C[3], lw=1.3)
        ax.text((x0 + x1) / 2 + 0.6, 15, str(n), fontsize=7, color=C[0] if read else C[3])

    a = axes[0]
    for x, nm in ((2, "x"), (9, "r"), (20, "h"), (38, "y")):
        tensor(a, x, nm, fc="#dce6f2" if nm in "xr" else "#e5f5e0")
    _box(a, 4, 3.5, 16, 5, "kernel 1: h = x + r", fc="white", fs=7)
    _box(a, 27, 3.5, 18, 5, "kernel 2: y = RMSNorm(h) γ", fc="white", fs=7)
    trip(a, 5, 8, True, 1)
    trip(a, 12, 12, True, 2)
    trip(a, 17, 22, False, 3)
    trip(a, 24, 31, True, 4)
    trip(a, 40, 41, False, 5)
    a.text(34, 15, "h goes out\nand comes back", fontsize=6.5, ha="center", va="center", style="italic")
    b = axes[1]
    for x, nm in ((4, "x"), (13, "r"), (29, "h"), (39, "y")):
        tensor(b, x, nm, fc="#dce6f2" if nm in "xr" else "#e5f5e0")
    _box(b, 6, 3.5, 38, 5, "one kernel: h = x + r, then y = RMSNorm(h) γ from registers", fc="white", fs=7)
    trip(b, 7, 12, True, 1)
    trip(b, 16, 18, True, 2)
    trip(b, 28, 32, False, 3)
    trip(b, 38, 42, False, 4)
    fig.text(0.5, 0.01, "blue: a read, red: a write, each of rows x cols elements; the bandwidth test counts 4",
             ha="center", fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def norm_placement():
    """Chapter 5: where the norm sits in a transformer sub-layer. Post-norm normalises the sum (the residual stream
    itself passes through every norm); pre-norm normalises a copy on the way into the sub-layer (the stream is a
    plain sum from the embedding to the last layer)."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.0))
    for ax in axes:
        ax.set_axis_off()
        ax.set_xlim(0, 40)
        ax.set_ylim(0, 40)

    def plus(ax, x, y):
        ax.add_patch(plt.Circle((x, y), 1.4, facecolor="white", edgecolor="black", lw=1.0))
        ax.text(x, y, "+", ha="center", va="center", fontsize=10)

    a = axes[0]
    a.set_title("post-norm (original Transformer):  r ← Norm(r + F(r))", fontsize=8.5)
    a.text(12, 1.5, "r in", ha="center", fontsize=8)
    _arrow(a, (12, 3), (12, 17.6), lw=1.6)
    _arrow(a, (12, 6), (27, 6), color=C[7], style="-")
    _arrow(a, (27, 6), (27, 9.5), color=C[7])
    _box(a, 22, 9.5, 10, 5, "F (attention\nor MLP)", fc="#dce6f2", fs=7)
    _arrow(a, (27, 14.5), (13.4, 19), color=C[7])
    plus(a, 12, 19)
    _arrow(a, (12, 20.4), (12, 25))
    _box(a, 7, 25, 10, 4, "Norm", fc="#e5f5e0", fs=8)
    _arrow(a, (12, 29), (12, 36), lw=1.6)
    a.text(12, 37.2, "r out = the normalised sum", ha="center", fontsize=7.5)
    a.text(26, 27, "every path from the output\nback to r crosses a Norm,\nonce per sub-layer",
           fontsize=7, ha="center", style="italic")
    b = axes[1]
    b.set_title("pre-norm (GPT-2, Llama):  r ← r + F(Norm(r))", fontsize=8.5)
    b.text(12, 1.5, "r in", ha="center", fontsize=8)
    _arrow(b, (12, 3), (12, 24.6), lw=1.6)
    _arrow(b, (12, 4.5), (27, 4.5), color=C[7], style="-")
    _arrow(b, (27, 4.5), (27, 7.5), color=C[7])
    _box(b, 22, 7.5, 10, 4, "Norm", fc="#e5f5e0", fs=8)
    _arrow(b, (27, 11.5), (27, 14))
    _box(b, 22, 14, 10, 5, "F (attention\nor MLP)", fc="#dce6f2", fs=7)
    _arrow(b, (27, 19), (13.4, 26), color=C[7])
    plus(b, 12, 26)
    _arrow(b, (12, 27.4), (12, 36), lw=1.6)
    b.text(12, 37.2, "r out = r + F(...): a plain sum", ha="center", fontsize=7.5)
    b.text(30, 30, "the stream itself is never\nnormalised: one final Norm\nafter the last layer",
           fontsize=7, ha="center", style="italic")
    fig.tight_layout()
    return fig


def double_rounding():
    """Chapter 5: rounding x̂ to bfloat16 before multiplying by γ, against rounding γ x̂ once. Example values:
    x̂ = 1 + 0.49 ulp (bfloat16's ulp between 1 and 2 is 2^-7), γ = 1.5 (exact in bfloat16)."""
    ulp = 2.0 ** -7
    xhat, gamma = 1 + 0.49 * ulp, 1.5
    exact = gamma * xhat
    once = round(exact / ulp) * ulp  # nearest bfloat16 between 1 and 2 (spacing 2^-7)
    twice = round(gamma * (round(xhat / ulp) * ulp) / ulp) * ulp
    fig, axes = plt.subplots(2, 1, figsize=(8.5, 3.0))
    for ax, base, title in ((axes[0], 1.0, "x̂ = x ρ in float32, then rounded to bfloat16 (the first rounding)"),
                            (axes[1], 1.5, "γ x̂, rounded to bfloat16 for the output")):
        ax.set_xlim(-0.3, 2.3)
        ax.set_ylim(-1.3, 1.3)
        ax.set_axis_off()
        ax.axhline(0, color="black", lw=0.8)
        for k, label in enumerate((f"{base:g}", f"{base:g} + 2⁻⁷", f"{base:g} + 2·2⁻⁷")):
            ax.plot([k], [0], "o", color="black", ms=5)
            ax.text(k, -1.2, label, ha="center", fontsize=7, color="#444444")
        ax.set_title(title, fontsize=8.5)
    a = axes[0]
    a.plot([(xhat - 1) / ulp], [0], "^", color=C[0], ms=8)
    a.text((xhat - 1) / ulp, 0.45, "x̂ = 1 + 0.49 ulp", ha="center", fontsize=7, color=C[0])
    _arrow(a, ((xhat - 1) / ulp, -0.25), (0.03, -0.25), color=C[3])
    a.text(0.25, -0.65, "rounds down to 1: off by 0.49 ulp", ha="left", fontsize=7, color=C[3])
    b = axes[1]
    pe, pt, po = ((v - 1.5) / ulp for v in (exact, twice, once))
    b.plot([pe], [0], "^", color=C[0], ms=8)
    b.text(pe, 0.45, f"exact γ x̂ = 1.5 + {pe:.3f} ulp (γ = 1.5)", ha="center", fontsize=7, color=C[0])
    b.plot([pt], [0], "s", color=C[3], ms=7)
    b.text(pt + 0.02, -0.65, f"twice: 1.5 × 1 = 1.5, off by {pe - pt:.3f} ulp", ha="left", fontsize=7, color=C[3])
    _arrow(b, (pe, -0.25), (po - 0.03, -0.25), color=C[2])
    b.text(po, -0.65, f"once: off by {po - pe:.3f} ulp", ha="center", fontsize=7, color=C[2])
    fig.tight_layout()
    return fig


def _ticket_lanes(b, pass1, merge, pass2, pass2_scale, legend):
    """The lower panel of split_rows and held_split: four programs of one row, each taking a ticket, reading its
    columns (pass1), storing its partial and raising the row's counter, waiting, merging (merge) and writing
    (pass2, pass2_scale times as long as pass 1)."""
    starts = [0.0, 2.0, 4.0, 7.0]  # programs start at slightly different times (ticket order)
    lengths = [40.0, 44.0, 37.0, 41.0]  # and their first passes take different times
    done = max(s0 + 2 + n + 3 for s0, n in zip(starts, lengths))  # the last partial stored
    for k, (s0, n) in enumerate(zip(starts, lengths)):
        y = 15 - 4.2 * k
        b.text(-2, y + 1.5, f"ticket {k}: columns\n[{k}C, {k + 1}C)", ha="right", va="center", fontsize=7)
        _box(b, s0, y, 2, 3, "", fc=C[7])
        _box(b, s0 + 2, y, n, 3, pass1, fc="#c6dbef", fs=7)
        end1 = s0 + 2 + n
        _box(b, end1, y, 3, 3, "", fc=C[1])
        if done - (end1 + 3) > 0.5:
            _box(b, end1 + 3, y, done - end1 - 3, 3, "wait" if done - end1 - 3 > 4 else "", fc="#f0f0f0", fs=7)
        _box(b, done, y, 5, 3, merge, fc="#fdd0a2", fs=7)
        _box(b, done + 5, y, n * pass2_scale, 3, pass2, fc="#c7e9c0", fs=7)
    b.plot([done, done], [2.2, 18.6], ls="--", color=C[1], lw=1)
    b.text(done + 1, 18.9, "counter = K: every partial stored", fontsize=7, color=C[1], va="bottom")
    b.text(-16, -0.2, legend, fontsize=7, va="bottom")


def _one_and_split(top_title, pass1, middle, pass2, bottom_title):
    """The layout of split_rows and held_split: above, one program per row (pass 1, a middle box, pass 2); below,
    the axes for _ticket_lanes. Returns (fig, upper axes, lower axes)."""
    fig, axes = plt.subplots(2, 1, figsize=(9, 4.4), gridspec_kw={"height_ratios": [1, 2.2]})
    for ax in axes:
        ax.set_axis_off()
        ax.set_xlim(-16, 100)
    a, b = axes
    a.set_ylim(0, 10)
    a.text(-16, 9.3, top_title, fontsize=9, fontweight="bold", va="top")
    _box(a, 0, 2.5, 44, 4, pass1, fc="#c6dbef")
    _box(a, 44, 2.5, 4, 4, middle, fc="#fdd0a2", fs=7)
    _box(a, 48, 2.5, 44, 4, pass2, fc="#c7e9c0")
    a.text(-2, 4.5, "program", ha="right", va="center", fontsize=8)
    b.set_ylim(0, 22)
    b.text(-16, 21.5, bottom_title, fontsize=9, fontweight="bold", va="top")
    return fig, a, b


def split_rows():
    """Chapter 6: one program per row against K programs per row (a ticket, pass 1, partial and counter, wait,
    merge, pass 2); what each program holds between its two reads of a column."""
    fig, a, b = _one_and_split("one program per row: V columns between the two reads of a column",
                               "pass 1: read all V columns (HBM)", "lse", "pass 2: read them again, write the gradient",
                               "K programs per row (here K = 4): C = V/K columns between the two reads")
    _arrow(a, (2, 1.5), (50, 1.5), color=C[3], style="<->")
    a.text(26, 0.2, "a whole row waits in L2 for its second read", ha="center", fontsize=8, color=C[3])
    _ticket_lanes(b, "pass 1 (HBM)", "lse", "pass 2 (L2) + gradient", 0.8,
                  "grey: take a ticket (atomic add); orange: store the partial (m, d, sum x), then raise the "
                  "row's counter (release); lse: read the K partials (acquire) and merge them")
    fig.tight_layout()
    return fig


def held_split():
    """Chapter 3: the online kernel reads a long row twice; K programs per row that keep their chunk in registers
    through the wait read it once (load, partial (m, d), counter, wait, merge, write y from registers)."""
    fig, a, b = _one_and_split("one program per row (the online kernel): x read twice, y written once",
                               "pass 1: read x, update (m, d)", "M, D", "pass 2: read x again, write y",
                               "K programs per row (4 drawn): each loads its C = N/K columns once and keeps them in "
                               "registers")
    a.text(46, 0.6, "3 transfers per element where copy needs 2: at most 2/3 of copy", ha="center", fontsize=8,
           color=C[3])
    _ticket_lanes(b, "load x once (HBM) into registers: chunk's (m, d)", "M, D", "write y", 0.5,
                  "grey: take a ticket (atomic add); orange: store the chunk's (m, d), then raise the row's counter "
                  "(release)\nM, D: read the K partials (acquire) and merge them (Section 3); then y = e^(x - M) / D "
                  "from the registers: x is not read again")
    fig.tight_layout()
    return fig


def cluster_exchange():
    """Chapter 3: a row over the 8 blocks of one thread-block cluster. Above, where things live: each block's part of
    the row in its registers, its pair (m_r, d_r), and an array of 8 pairs in its shared memory, into whose slot r
    block r writes (drawn for block 2; every block does the same). Below, when: the early arrive, the load, the pair,
    the writes, the cluster barrier (release, acquire), the merge and the write of y."""
    fig, axes = plt.subplots(2, 1, figsize=(9, 5.0), gridspec_kw={"height_ratios": [1.5, 1]})
    for ax in axes:
        ax.set_axis_off()
    a, b = axes
    a.set_xlim(0, 100)
    a.set_ylim(-1.5, 31)
    a.text(0.5, 30.6, "one cluster: 8 blocks at once on SMs of one GPC; part r of the row in block r's registers",
           fontsize=9, fontweight="bold", va="top")
    w, gap, n = 11.3, 1.0, 8
    sw = (w - 1) / n  # one slot of the shared-memory array
    x0 = [0.6 + r * (w + gap) for r in range(n)]
    for r in range(n):
        _box(a, x0[r], 2.2, w, 24.3, "", fc="#f7f7f7", ec="#888888")
        a.text(x0[r] + w / 2, 25.6, f"block {r}", ha="center", va="top", fontsize=7.5)
        _box(a, x0[r] + 0.5, 18.2, w - 1, 4.6, f"part {r}", fc="#c6dbef", fs=7)
        _box(a, x0[r] + 2.2, 13.0, w - 4.4, 3.2, f"$(m_{r}, d_{r})$", fc=C[r], fs=7.5, color="white")
        for k in range(n):
            _box(a, x0[r] + 0.5 + k * sw, 3.0, sw, 3.0, "", fc=C[k], ec="white", lw=0.5)
    src = 2  # the block whose writes are drawn
    for k in range(n):
        _arrow(a, (x0[src] + w / 2, 13.0), (x0[k] + 0.5 + (src + 0.5) * sw, 5.9), color=C[src], lw=0.9)
    a.text(50, -0.2, "block 2 writes its pair into slot 2 of every block (arrows); every block r does the same into "
           "slot r of the 8 arrays of slots in shared memory", ha="center", fontsize=7.5, va="bottom")
    b.set_xlim(-14, 100)
    b.set_ylim(-5.5, 16)
    b.text(-14, 15.8, "in time: 4 of the cluster's 8 blocks", fontsize=9, fontweight="bold", va="top")
    starts = [0.0, 1.0, 0.5, 3.0]  # the blocks of a cluster start nearly together
    lengths = [40.0, 43.0, 38.0, 41.0]
    red, put, merge = 4.0, 3.0, 4.0
    sync = max(s0 + 1 + ln + red + put for s0, ln in zip(starts, lengths))  # the last block arrives
    for r, (s0, ln) in enumerate(zip(starts, lengths)):
        y = 11.0 - 3.0 * r
        b.text(-1, y + 1, f"block {r}", ha="right", va="center", fontsize=7)
        _box(b, s0, y, 1, 2, "", fc=C[7])
        _box(b, s0 + 1, y, ln, 2, "load part r once (HBM) into registers" if r == 0 else "", fc="#c6dbef", fs=6.5)
        t = s0 + 1 + ln
        _box(b, t, y, red, 2, "m, d" if r == 0 else "", fc="#fdd0a2", fs=6)
        _box(b, t + red, y, put, 2, "", fc=C[r])
        t += red + put
        if sync - t > 0.5:
            _box(b, t, y, sync - t, 2, "", fc="#f0f0f0")
        _box(b, sync, y, merge, 2, "M, D" if r == 0 else "", fc="#fdd0a2", fs=6)
        _box(b, sync + merge, y, 0.45 * ln, 2, "write y" if r == 0 else "", fc="#c7e9c0", fs=6.5)
    b.plot([max(starts) + 1, max(starts) + 1], [1.5, 13.4], ls=":", color=C[7], lw=1)
    b.text(max(starts) + 1.5, 1.3, "all 8 have started (the early arrive)", fontsize=6.5, color="#555555",
           va="top", ha="left")
    b.plot([sync, sync], [1.5, 13.6], ls="--", color=C[3], lw=1)
    b.text(sync + 0.8, 13.4, "cluster barrier: every pair written", fontsize=7, color=C[3], va="bottom")
    b.text(-14, -5.4, "dark grey: arrive (relaxed); block colour: write the pair into 8 slots, arrive (release); "
           "light grey: wait (acquire); M, D: merge the 8 pairs", fontsize=7, va="bottom")
    fig.tight_layout()
    return fig


def q526_split():
    """Chapter 6: z in Q5.26 split into r (its low 24 bits) and R = r - z (bits 24-30 pick table constants)."""
    z_real = -5.3  # an example; everything below is computed from it
    z = round(z_real * 2**26)
    low = z % (1 << 24)  # the low 24 bits of z (two's complement): z mod 1/4
    r = low - (1 << 24)
    big_r = r - z  # a multiple of 1/4 (2^24) below 32
    zbits = z & 0xFFFFFFFF
    fig, ax = _blank((10, 3.3))
    ax.set_xlim(-7, 33)
    ax.set_ylim(-1.8, 8.3)
    w = 1.0

    def word(y, bits, label, colour_of):
        ax.text(-0.5, y + 0.5, label, ha="right", va="center", fontsize=8)
        for b in range(32):
            x = 31 - b  # bit 31 on the left
            _box(ax, x, y, w, 1, str((bits >> b) & 1), fc=colour_of(b), fs=6)

    word(6, zbits, f"z = {z_real} in Q5.26", lambda b: "#c6dbef" if b < 24 else "#f0f0f0")
    ax.text(31 - 11.5, 7.35, f"low 24 bits: z mod 1/4 = r + 1/4, so r = {r / 2**26:.4f}", ha="center", fontsize=8,
            color=C[0])
    word(3, big_r, f"R = r - z = {big_r / 2**26:g}", lambda b: (C[1] if (big_r >> b) & 1 else "#fdd0a2")
         if 24 <= b <= 30 else "#f0f0f0")
    consts = ["1/4", "1/2", "1", "2", "4", "8", "16"]
    for j in range(7):
        x = 31 - (24 + j) + 0.5
        on = (big_r >> (24 + j)) & 1
        ax.text(x, 4.15 + 0.55 * (j % 2), consts[j], ha="center", va="bottom", fontsize=7)
        ax.text(x, 2.75 - 0.75 * (j % 2), f"$e^{{-{consts[j]}}}$", ha="center", va="top", fontsize=8 if on else 6,
                color="black" if on else C[7])
    used = [consts[j] for j in range(7) if (big_r >> (24 + j)) & 1]
    ax.text(15.5, -1.0, "$e^{z} = e^{r}$ (polynomial, $r \\in [-1/4, 0)$) $\\times$ "
            + " $\\times$ ".join(f"$e^{{-{c}}}$" for c in used) + "  (table constants, one multiply each)",
            ha="center", fontsize=9)
    ax.text(-0.5, 2.0, "bits 24-30 of R\npick constants", ha="right", va="center", fontsize=7)
    for b, t in ((31, "31"), (24, "24"), (0, "0")):
        ax.text(31 - b + 0.5, 8.0, t, ha="center", fontsize=7, color=C[7])
    return fig


# ---- Chapter 6, Part 1: the integer softmax, computed here with Python integers (no floating point in the path)

def _rshift_round(v: int, n: int) -> int:
    return (v + (1 << (n - 1))) >> n


def _mul_q31(a: int, b: int) -> int:
    return _rshift_round(a * b, 31)


_EXP_NEG_QUARTERS = [round(math.exp(-2**j / 4) * 2**31) for j in range(7)]  # e^(-2^j/4) in Q0.31
_TAYLOR_Q31 = [round(2**31 / math.factorial(p)) for p in range(5)]            # 1/0! .. 1/4! in Q0.31
_NEWTON_A, _NEWTON_B = round(48 / 17 * 2**29), round(32 / 17 * 2**29)          # 48/17, 32/17 in Q2.29


def _exp_neg_q31(z: int) -> tuple[int, int, int]:
    """(e, r, R) for z <= 0 in Q5.26: e = e^z in Q0.31, z = r - R with r in [-1/4, 0) (Q5.26)."""
    if z == 0:
        return (1 << 31) - 1, 0, 0
    if z < -(1 << 31):
        return 0, 0, 0
    r = (z & ((1 << 24) - 1)) - (1 << 24)
    big_r = r - z
    h = _TAYLOR_Q31[4]
    for c in _TAYLOR_Q31[3::-1]:
        h = c + _mul_q31(r * 32, h)
    for j, c in enumerate(_EXP_NEG_QUARTERS):
        if (big_r >> (24 + j)) & 1:
            h = _mul_q31(h, c)
    return h, r, big_r


def _int8_example() -> dict:
    """The chapter's try-it row (Exercise 1) through steps 1-5, all in integers; one element followed."""
    row, multiplier, shift, pick = [127, 120, 100, 0, -128], 1 << 30, 25, 1  # s = 2^30 * 2^(25-57) = 1/4
    m = max(row)
    diff = [v - m for v in row]
    z = [_rshift_round(dv * multiplier, 31 - shift) for dv in diff]
    exps = [_exp_neg_q31(zv) for zv in z]
    e = [ev for ev, _, _ in exps]
    s_sum = sum(_rshift_round(ev, 12) for ev in e)
    k = s_sum.bit_length()
    u = (s_sum << 31) >> k
    ys = [_NEWTON_A - _mul_q31(u, _NEWTON_B)]
    for _ in range(3):
        ys.append(_rshift_round(ys[-1] * ((2 << 29) - _mul_q31(u, ys[-1])), 29))
    p_q229 = _mul_q31(e[pick], ys[-1])
    q = max(-128, min(127, _rshift_round(p_q229, 2 + k) - 128))
    return dict(row=row, m=m, x=row[pick], diff=diff[pick], z=z[pick], e=e[pick], r=exps[pick][1],
                big_r=exps[pick][2], S=s_sum, k=k, u=u, ys=ys, P=p_q229, q=q, scale=multiplier * 2.0 ** (shift - 57))


def q_pipeline():
    """Chapter 6, Part 1: the integer path of one element, int8 in, int8 out, with each stage's format."""
    ex = _int8_example()
    names = ["1/4", "1/2", "1", "2", "4", "8", "16"]
    used = [names[j] for j in range(7) if (ex["big_r"] >> (24 + j)) & 1][::-1]  # the table constants applied
    # (step, what is computed, format, (sign, integer, fraction) bits or None, the example's value)
    stages = [
        ("1", "input $x_i$", "int8", (1, 7, 0), f"x = {ex['x']}\n(max m = {ex['m']})"),
        ("1", "diff = x - m", "integer, [-255, 0]", (1, 8, 0), f"diff = {ex['diff']}"),
        ("1", "z = rshift_round(diff\n· multiplier, 31 - shift)", "Q5.26", (1, 5, 26),
         f"z = {ex['z'] / 2**26:g}\n(s = {ex['scale']:g})"),
        ("2", "split z = r - R", "r to Q0.31 (times 32)\nR in bits 24-30", None,
         f"r = {ex['r'] / 2**26:g}\nR = {ex['big_r'] / 2**26:g} = " + " + ".join(used)),
        ("2", "$e^r$ (Horner) times\ntable constants", "Q0.31", (1, 0, 31),
         f"e = {ex['e'] / 2**31:.5f}\n(" + ", ".join(f"$e^{{-{c}}}$" for c in used) + " applied)"),
        ("3", "S = sum of\nrshift_round($e_i$, 12)", "Q12.19, in 64 bits", (1, 12, 19),
         f"S = {ex['S'] / 2**19:.5f}\n(over {len(ex['row'])} elements)"),
        ("4", "L = bit length of S\nu = (S << 31) >> L", "u in Q0.31, [1/2, 1)", (1, 0, 31),
         f"L = {ex['k']}\nu = {ex['u'] / 2**31:.5f}"),
        ("4", "$y_0$ = 48/17 - 32/17 u,\n3 times y <- y (2 - u y)", "y in Q2.29, (1, 2]", (1, 2, 29),
         f"y = {ex['ys'][-1] / 2**29:.5f} ≈ 1/u"),
        ("5", "P = mul_q31(e, y)", "Q2.29", (1, 2, 29), f"P = e y = {ex['P'] / 2**29:.5f}"),
        ("5", "q = rshift_round(P,\n2 + L) - 128, clamp", "int8", (1, 7, 0),
         f"q = {ex['q']}\n(p = {ex['q'] + 128}/256)"),
    ]
    fig, ax = _blank((9, 4.3))
    fig.subplots_adjust(left=0.005, right=0.995, bottom=0.005, top=0.995)
    ax.set_xlim(0, 100)
    ax.set_ylim(1.5, 56)
    colours = ["#d62728", "#1f77b4", "#aec7e8"]  # sign, integer, fraction: as in the chapter's format chart
    w, h, gap = 18.4, 19.0, 1.6
    step_fc = {"1": "#f2f2f2", "2": "#fff7e6", "3": "#e5f5e0", "4": "#efedf5", "5": "#fde0dd"}
    step_name = {"1": "max and scale", "2": "exponential", "3": "sum", "4": "reciprocal", "5": "output"}
    for i, (step, title, fmt, bits, value) in enumerate(stages):
        row, col = divmod(i, 5)
        x = 0.8 + col * (w + gap)
        y = 32.5 - row * 28.5
        _box(ax, x, y, w, h, "", fc=step_fc[step], ec="#555555")
        ax.text(x + w / 2, y + h - 0.7, title, ha="center", va="top", fontsize=7)
        ax.text(x + w / 2, y + 11.4, fmt, ha="center", va="center", fontsize=7.5, weight="bold", color="#08306b")
        ax.text(x + w / 2, y + 3.9, value, ha="center", va="center", fontsize=7, color="#7f2704")
        if bits is not None:  # the word: sign, integer bits, fraction bits, most significant on the left
            n = sum(bits)
            cw = w / 32
            x0 = x + (w - n * cw) / 2
            for b in range(n):
                kind = 0 if b == 0 else (1 if b <= bits[1] else 2)
                ax.add_patch(Rectangle((x0 + b * cw, y - 1.7), cw * 0.85, 1.3, facecolor=colours[kind], lw=0))
            ax.text(x + w / 2, y + 8.4, f"{bits[0]} + {bits[1]} + {bits[2]} = {n} bits", ha="center",
                    va="center", fontsize=6.5, color="#08306b")
        if col < 4:
            _arrow(ax, (x + w, y + h / 2), (x + w + gap, y + h / 2), lw=1.2)
    # row 1 -> row 2: down from the exponential, back to the left, into the sum
    x_end, x_start, y_mid = 0.8 + 4 * (w + gap) + w + 0.4, 2.6, 28.3
    ax.plot([x_end, 99.6, 99.6, x_start], [32.5 + h / 2, 32.5 + h / 2, y_mid, y_mid], color="black", lw=1.2)
    _arrow(ax, (x_start, y_mid), (x_start, 4 + h + 1.9), lw=1.2)
    ax.text(60, y_mid + 0.4, "every $e_i$ of the row", ha="center", va="bottom", fontsize=7, color="#555555")
    for step, c0, c1, y in (("1", 0, 2, 52.6), ("2", 3, 4, 52.6), ("3", 0, 0, 24.1), ("4", 1, 2, 24.1),
                            ("5", 3, 4, 24.1)):
        xa, xb = 0.8 + c0 * (w + gap), 0.8 + c1 * (w + gap) + w
        ax.plot([xa, xa, xb, xb], [y - 0.6, y, y, y - 0.6], color="#555555", lw=0.8)
        ax.text((xa + xb) / 2, y + 0.3, f"step {step}: {step_name[step]}", ha="center", va="bottom", fontsize=8,
                weight="bold")
    return fig


def newton_reciprocal():
    """Chapter 6, Part 1: delta_(t+1) = delta_t^2 for delta_t = 1 - u y_t, with the example's u, from two starts."""
    from fractions import Fraction
    ex = _int8_example()
    u = Fraction(ex["u"], 2**31)  # exactly the example's Q0.31 value; the iterations below are exact

    def errors(y0, steps):
        out, y = [], y0
        for _ in range(steps + 1):
            out.append(1 - u * y)
            y = y * (2 - u * y)
        return out

    crude = errors(Fraction(1), 3)                                    # y_0 = 1: delta_0 = 1 - u
    line = errors(Fraction(48, 17) - Fraction(32, 17) * u, 3)         # the chapter's start
    fixed = [1 - u * Fraction(y, 2**29) for y in ex["ys"]]            # the Q2.29 integers of the kernel
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), gridspec_kw={"width_ratios": [1, 1.1]})
    ax = axes[0]
    e = [i / 100 for i in range(-110, 111)]
    ax.plot(e, [v * v for v in e], color=C[0], lw=1.1, label="$\\delta_{t+1} = \\delta_t^2$")
    ax.plot([-0.05, 0.6], [-0.05, 0.6], color=C[7], lw=0.8, ls="--", label="$\\delta_{t+1} = \\delta_t$")
    ax.axvspan(-1 / 17, 1 / 17, color=C[2], alpha=0.3, lw=0, label="$|\\delta_0| \\leq 1/17$: the line start")
    ax.axvspan(-1.1, -1, color=C[3], alpha=0.15, lw=0)
    ax.axvspan(1, 1.1, color=C[3], alpha=0.15, lw=0, label="$|\\delta_0| \\geq 1$: no convergence")
    pts = [float(v) for v in crude]
    for a, b in zip(pts, pts[1:]):  # the cobweb: up to the parabola, across to the diagonal
        ax.plot([a, a, b], [0 if a == pts[0] else a, b, b], color=C[1], lw=1)
    for t, (a, b) in enumerate(zip(pts, pts[1:])):
        ax.plot([a], [b], "o", color=C[1], ms=4)
        if t < 2:
            ax.text(a + 0.02, b + 0.03, f"$\\delta_{t}$", fontsize=8, color=C[1])
    ax.text(1.05, 0.36, "start $y_0 = 1$:\n" + "\n".join(f"$\\delta_{t}$ = {v:.4f}" for t, v in enumerate(pts)),
            fontsize=7, color=C[1], ha="right", va="bottom")
    lv = float(line[0])
    ax.plot([lv], [lv * lv], "s", color="#2d6a3e", ms=4)
    ax.annotate(f"line start: $\\delta_0$ = {lv:.4f},\n$\\delta_1$ = {float(line[1]):.1e}",
                (lv, lv * lv), (-0.62, 0.47), fontsize=7, color="#2d6a3e",
                arrowprops=dict(arrowstyle="-", lw=0.5, color="#2d6a3e", relpos=(1, 0)))
    ax.set_xlim(-1.1, 1.1)
    ax.set_ylim(-0.03, 1.15)
    ax.set_xlabel("$\\delta_t = 1 - u\\,y_t$")
    ax.set_ylabel("$\\delta_{t+1}$")
    ax.set_title(f"one step squares the error (u = {float(u):.5f})", fontsize=9)
    ax.legend(fontsize=6.5, loc="upper center", frameon=False)
    ax = axes[1]

    def bits(v):
        return -math.log2(abs(float(v)))

    ts = list(range(4))
    b_line, b_crude, b_fixed = ([bits(v) for v in vs] for vs in (line, crude, fixed))
    ax.plot(ts, b_line, "o-", color=C[2], lw=1.1, label="line start, exact arithmetic")
    ax.plot(ts, b_fixed, "s", mfc="none", color="black", ms=8, label="line start, Q2.29 integers (the kernel's)")
    ax.plot(ts, b_crude, "o-", color=C[1], lw=1.1, label="start $y_0 = 1$, exact arithmetic")
    ax.axhline(29, color=C[7], ls=":", lw=1)
    ax.text(0.05, 29.8, "Q2.29 keeps y to $2^{-29}$: about 29 bits", fontsize=7, color="#555555")
    for t in ts:
        ax.text(t + 0.1, b_line[t] + (1.0 if t < 3 else -1.0), f"{b_line[t]:.1f}", fontsize=7, color="#2d6a3e",
                va="bottom" if t < 3 else "top")
        ax.text(t - 0.08, b_crude[t] + 1.2, f"{b_crude[t]:.1f}", fontsize=7, color=C[1], va="bottom", ha="right")
    ax.text(3.12, b_fixed[3] + 1.2, f"{b_fixed[3]:.1f}", fontsize=7, va="bottom")
    ax.set_xticks(ts)
    ax.set_xlim(-0.4, 3.5)
    ax.set_ylim(0, 60)
    ax.set_xlabel("Newton iterations t")
    ax.set_ylabel("correct bits $-\\log_2 |\\delta_t|$")
    ax.set_title("bits double: $-\\log_2 \\delta_{t+1} = 2\\,(-\\log_2 |\\delta_t|)$", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, 0.93), frameon=False)
    fig.tight_layout()
    return fig


def fa3_pipeline():
    """Chapter 4: a key-tile loop done one step after the other (the teaching kernel: the tensor cores idle during
    the softmax) against FlashAttention-3's schedule as the chapter describes it (the fast reference: step j issues
    S_j and P_{j-1} V_{j-1}, waits for S_j, computes softmax j while the tensor cores do P_{j-1} V_{j-1}, then
    waits for that product and rescales O; a producer warp refills a stage of a 3-stage ring once the P V that read
    it is done). Box lengths from the chapter's count at D = 128: each matrix product of a tile takes as long as its
    exponentials (0.0625 SM clocks per score each); the wait-and-rescale box is drawn short, not measured."""
    fig, axes = plt.subplots(2, 1, figsize=(9, 4.8), gridspec_kw={"height_ratios": [1, 1.6]})
    for ax in axes:
        ax.set_axis_off()
        ax.set_xlim(-14, 100)
    u = 10.0  # one product (or one tile's exponentials)
    r = 0.4 * u  # waiting for P V, rescaling O, issuing the next step (drawn short)
    gemm, soft, load = "#c6dbef", "#fdd0a2", "#e0e0e0"
    a, b = axes
    a.set_ylim(0, 10)
    a.text(-14, 9.6, "one program, one step after the other (a Triton program)", fontsize=9, fontweight="bold",
           va="top")
    a.text(-1, 5.5, "warps", ha="right", va="center", fontsize=8)
    a.text(-1, 1.5, "tensor cores", ha="right", va="center", fontsize=8)
    x = 0.0
    for j in range(3):
        for label, fc, tc in ((f"S{j} = Q K{j}ᵀ", gemm, True), (f"softmax {j}", soft, False),
                              (f"O += P{j} V{j}", gemm, True)):
            _box(a, x, 4, u, 3, label, fc=fc, fs=7)
            _box(a, x, 0.5, u, 2, "busy" if tc else "idle", fc=gemm if tc else "white", fs=7,
                 color="black" if tc else C[3])
            x += u
    a.text(x + 1, 1.5, "idle 1/3", fontsize=8, color=C[3], va="center")
    b.set_ylim(-4.5, 17)
    b.text(-14, 16.6, "FlashAttention-3's schedule, one consumer warpgroup", fontsize=9,
           fontweight="bold", va="top")
    rows = {"producer warp": 12.0, "consumer group": 7.5, "tensor cores": 1.0}
    for name, y in rows.items():
        b.text(-1, y + 1.5, name, ha="right", va="center", fontsize=8)
    lw = 0.5 * u - 0.4
    x0 = lw + 0.4  # the consumers start once K0 has landed
    starts = [x0, x0 + 2 * u]  # step 0: S0, then softmax 0; step j >= 1: S_j, then softmax j under P_{j-1} V_{j-1}
    for j in range(2, 5):
        starts.append(starts[-1] + 2 * u + r)
    for j in range(3):  # the ring's three stages, filled first
        _box(b, (lw + 0.4) * j, rows["producer warp"], lw, 3, f"K{j} V{j}", fc=load, fs=6)
    for j in range(1, 4):  # stage of tile j-1 refilled with tile j+2 once P_{j-1} V_{j-1} is done
        _box(b, starts[j] + 2 * u, rows["producer warp"], lw, 3, f"K{j + 2} V{j + 2}", fc=load, fs=6)
    _box(b, x0, rows["consumer group"], u, 3, "issue S0,\nwait", fc="white", fs=6)
    _box(b, x0, rows["tensor cores"], u, 3, "S0", fc=gemm, fs=7)
    _box(b, x0 + u, rows["consumer group"], u, 3, "softmax 0", fc=soft, fs=7)
    _box(b, x0 + u, rows["tensor cores"], u, 3, "gap", fc="white", fs=7, color=C[3])
    for j in range(1, 4):
        x = starts[j]
        _box(b, x, rows["consumer group"], u, 3, f"issue S{j}, P{j - 1}V{j - 1}\nwait S{j}", fc="white", fs=5)
        _box(b, x, rows["tensor cores"], u, 3, f"S{j}", fc=gemm, fs=7)
        _box(b, x + u, rows["consumer group"], u, 3, f"softmax {j}", fc=soft, fs=7)
        _box(b, x + u, rows["tensor cores"], u, 3, f"P{j - 1} V{j - 1}", fc=gemm, fs=7)
        _box(b, x + 2 * u, rows["consumer group"], r, 3, "wait,\nrescale", fc="white", fs=5)
        _box(b, x + 2 * u, rows["tensor cores"], r, 3, "gap", fc="white", fs=5, color=C[3])
    b.text(-14, -4.3, "step j: the tensor cores do S_j, then the previous tile's P V while the group computes "
           "softmax j (asynchronous wgmma); the gaps\nare filled by a second consumer group (not drawn); the producer "
           "refills a stage of the ring (3 here) once the P V that read it is done", fontsize=7, va="bottom")
    fig.tight_layout()
    return fig


def register_budget():
    """Chapter 4: the registers of one thread position (65 536 / 128 = 512 with one block on the SM) as the chapter
    counts them at D = 128: the producer's warpgroup 24, each consumer group 240 (two groups) or 160 (three), and in a
    consumer thread the scores (64), P (32) and the output accumulator (64); the rest for addresses and statistics."""
    fig, ax = plt.subplots(figsize=(9, 2.6))
    parts = {"S (scores)": 64, "P": 32, "O (accumulator)": 64}
    colors = {"producer": C[7], "S (scores)": C[0], "P": C[1], "O (accumulator)": C[2], "rest": "#f0f0f0"}
    bars = [("two groups, P in registers", 240, True), ("three groups, P in registers", 160, True),
            ("three groups, P in shared memory", 160, False)]
    for yi, (label, share, p_regs) in enumerate(bars):
        y = len(bars) - 1 - yi
        _box(ax, 0, y - 0.3, 24, 0.6, "24", fc=colors["producer"], fs=6)
        x = 24
        groups = (512 - 24) // share
        for g in range(groups):
            used = 0
            for name, n in parts.items():
                if name == "P" and not p_regs:
                    continue
                _box(ax, x + used, y - 0.3, n, 0.6, str(n), fc=colors[name], fs=6)
                used += n
            rest = share - used
            if rest > 0:
                _box(ax, x + used, y - 0.3, rest, 0.6, str(rest), fc=colors["rest"], fs=6)
            x += share
        ax.text(-6, y, label, ha="right", va="center", fontsize=8)
        if p_regs and share - sum(parts.values()) <= 0:
            ax.text(x + 16, y, "nothing left:\nspills", va="center", fontsize=7, color=C[3])
    ax.plot([512, 512], [-0.45, len(bars) - 0.55], color="black", lw=0.8)
    ax.text(516, -0.5, "512", ha="left", va="center", fontsize=7)
    handles = [Rectangle((0, 0), 1, 1, facecolor=colors[k], edgecolor="black", lw=0.5) for k in colors]
    ax.legend(handles, ["producer warpgroup", "scores S", "probabilities P", "accumulator O",
                        "addresses, row statistics"], fontsize=7, ncol=5, loc="upper center",
              bbox_to_anchor=(0.45, -0.12), frameon=False)
    ax.set_xlim(-200, 600)
    ax.set_ylim(-0.6, len(bars) - 0.3)
    ax.set_axis_off()
    ax.set_title("registers of one thread position (D = 128): the producer's warpgroup, then each consumer group",
                 fontsize=8)
    fig.tight_layout()
    return fig


def wait_placement():
    """Chapter 4: one consumer group's step over key tile j, and its own products on the tensor cores, at D = 64
    (a product as long as a tile's exponentials: the chapter's count). Top: the machine code as ptxas 12.8 placed
    it, the wait for P(j-1) V(j-1) moved up among the row maxima, so the exponentials start after that product.
    Bottom: the row sums passed through bar.warp.sync before the wait (Config.pin), so the exponentials run while
    it does. The softmax's work (maxima r, exponentials and sums u) is as long in both; lengths as in the other
    pipeline pictures, not measured; the other groups' products, which fill a group's gaps when they can, are not
    drawn."""
    fig, axes = plt.subplots(2, 1, figsize=(9, 3.9))
    u, r = 20.0, 9.0  # a product (or a tile's exponentials); the row maxima, the rescale
    gemm, soft = "#c6dbef", "#fdd0a2"
    panels = (("the machine code as ptxas placed it: the wait moved above the exponentials", False),
              ("the row sums through bar.warp.sync before the wait: the exponentials beside P V", True))
    for ax, (title, pinned) in zip(axes, panels):
        ax.set_axis_off()
        ax.set_xlim(-22, 3 * u + 3 * r + 14)
        ax.set_ylim(-0.5, 9.5)
        ax.text(-22, 9.3, title, fontsize=9, fontweight="bold", va="top")
        ax.text(-1, 5.25, "consumer group", ha="right", va="center", fontsize=8)
        ax.text(-1, 1.25, "its products\n(tensor cores)", ha="right", va="center", fontsize=8)
        tensor = [("S(j)", gemm, u), ("P(j-1) V(j-1)", gemm, u)]
        consumer = [("issue S(j), P V;\nwait for S(j)", "white", u)]
        if pinned:
            consumer += [("row maxima", soft, r), ("exponentials,\nrow sums", soft, u), ("warp\nsync", "white", r / 2)]
            tail = r + u + r / 2 - u
        else:
            consumer += [("maxima\n(part)", soft, r / 2), ("wait for P V", "white", u - r / 2),
                         ("rest of the maxima,\nexponentials, row sums", soft, u + r / 2)]
            tail = u + r / 2
        consumer += [("rescale\nO", "white", r)]
        tensor += [("none of its own", "white", tail + r)]
        for y, boxes in ((0.0, tensor), (4.0, consumer)):
            x = 0.0
            for label, fc, w in boxes:
                _box(ax, x, y, w, 2.5, label, fc=fc, fs=6 if w < u else 7,
                     color=C[3] if label == "none of its own" else "black")
                x += w
        ax.text(x + 2, 5.25, "next tile", fontsize=8, va="center")
    fig.tight_layout()
    return fig

def addressing_schemes():
    """Chapter 2: which lanes of warp 0 work at each level of a 256-thread tree, and the worst bank conflict of
    the level over all 8 warps (counted as the chapter's cell counts it), for the three ways to index."""
    n = 256

    def degree(words):
        banks = {}
        for w in words:
            banks.setdefault(w % 32, set()).add(w)
        return max((len(v) for v in banks.values()), default=0)

    schemes = [("interleaved: if (t % (2s) == 0) buf[t] += buf[t + s]", [1, 2, 4, 8, 16, 32, 64, 128],
                lambda t, s: t % (2 * s) == 0, lambda t, s: t),
               ("strided: i = 2st; if (i < n) buf[i] += buf[i + s]", [1, 2, 4, 8, 16, 32, 64, 128],
                lambda t, s: 2 * s * t < n, lambda t, s: 2 * s * t),
               ("sequential: if (t < s) buf[t] += buf[t + s]", [128, 64, 32, 16, 8, 4, 2, 1],
                lambda t, s: t < s, lambda t, s: t)]
    fig, axes = plt.subplots(1, 3, figsize=(11.5, 3.5))
    for ax, (title, levels, active, word) in zip(axes, schemes):
        ax.set_axis_off()
        ax.set_xlim(-5.5, 41)
        ax.set_ylim(-1.6, len(levels) + 1.2)
        for row, s in enumerate(levels):
            y = len(levels) - 1 - row
            k = 0
            for w0 in range(0, n, 32):
                lanes = [t for t in range(w0, w0 + 32) if active(t, s)]
                k = max(k, degree([word(t, s) for t in lanes]), degree([word(t, s) + s for t in lanes]))
            for lane in range(32):
                _box(ax, lane, y + 0.1, 1, 0.8, "", fc=C[0] if active(lane, s) else "#eeeeee",
                     ec="white", lw=0.4)
            ax.text(-0.5, y + 0.5, f"s = {s}", ha="right", va="center", fontsize=7)
            ax.text(32.6, y + 0.5, "none" if k <= 1 else f"{k}-way", ha="left", va="center", fontsize=7,
                    color=C[3] if k > 1 else "black")
        ax.text(16, len(levels) + 0.45, "lanes 0-31 of warp 0", ha="center", fontsize=7)
        ax.text(36.5, len(levels) + 0.45, "conflict", ha="center", fontsize=7)
        ax.set_title(title, fontsize=8)
    fig.text(0.5, 0.025, "blue: the lane works at that level (256 threads, 8 warps); right: the worst bank conflict "
             "of the level over all 8 warps\ninterleaved: divergence, no conflict;  strided: no divergence "
             "while a warp is full, conflicts;  sequential: neither (idle lanes only once fewer than 32 work)",
             ha="center", fontsize=7)
    fig.subplots_adjust(left=0.02, right=0.99, top=0.9, bottom=0.15, wspace=0.08)
    return fig


def two_level_reduction():
    """Chapter 2: the two-level block reduction for 256 threads (8 warps): shuffles inside each warp, lane 0 of
    warp w writes smem[w], a barrier, every warp reduces smem[lane] (identity 0 for lanes 8..31), a barrier."""
    warps = 8
    fig, ax = _blank((10, 4.6))
    ax.set_xlim(-7.5, 36)
    ax.set_ylim(-0.8, 11.2)
    # level 1: eight warps, each a row of 32 lanes reduced by the butterfly
    for w in range(warps):
        x0 = w * 4.2
        _box(ax, x0, 9.4, 3.8, 0.9, f"warp {w}", fc="#dce6f2", fs=7)
        ax.text(x0 + 1.9, 8.85, "32 values", ha="center", fontsize=6)
        _arrow(ax, (x0 + 1.9, 8.6), (x0 + 1.9, 7.9), color=C[0])
        _box(ax, x0, 7.0, 3.8, 0.9, f"sum of warp {w}", fc=C[2], fs=6, color="white")
        _arrow(ax, (x0 + 0.4, 7.0), (w * 1.0 + 0.5, 5.45), color=C[1], lw=0.8)
    ax.text(-0.5, 9.85, "level 1", ha="right", va="center", fontsize=9, weight="bold")
    ax.text(-0.5, 8.3, "shuffles\n(no memory)", ha="right", va="center", fontsize=7)
    ax.text(-0.5, 7.45, "in every lane", ha="right", va="center", fontsize=7)
    ax.text(-0.5, 6.2, "lane 0 writes\nsmem[warp]", ha="right", va="center", fontsize=7)
    # shared memory: 32 slots, 8 used
    for i in range(32):
        _box(ax, i, 4.5, 1, 0.9, "", fc=C[2] if i < warps else "white", ec="#888888", lw=0.4)
    ax.text(4, 4.95, "8 warp sums", ha="center", va="center", fontsize=6, color="white")
    ax.text(20, 4.95, "slots 8..31: not written (stale)", ha="center", va="center", fontsize=6, color="#666666")
    ax.text(-0.5, 4.95, "smem[32]", ha="right", va="center", fontsize=8)
    ax.plot([-7, 34], [3.95, 3.95], color=C[3], ls="--", lw=1)
    ax.text(33.8, 4.1, "__syncthreads()", ha="right", va="bottom", fontsize=7, color=C[3])
    # level 2: every warp reads smem[lane] or 0
    for i in range(32):
        _box(ax, i, 2.4, 1, 0.9, "" if i < warps else "0", fc=C[2] if i < warps else "#eeeeee",
             ec="#888888", lw=0.4, fs=6)
    ax.text(-0.5, 2.85, "level 2", ha="right", va="center", fontsize=9, weight="bold")
    ax.text(16, 3.55, "every warp: lane l reads smem[l] if l < 8, else the identity 0; then shuffles again",
            ha="center", fontsize=7)
    _arrow(ax, (16, 2.35), (16, 1.55), color=C[0])
    _box(ax, 4, 0.6, 24, 0.9, "the block's sum, in every lane of every warp", fc=C[4], fs=8, color="white")
    ax.plot([-7, 34], [0.25, 0.25], color=C[3], ls="--", lw=1)
    ax.text(33.8, -0.35, "__syncthreads() again before smem is reused", ha="right", va="bottom", fontsize=7,
            color=C[3])
    return fig


def littles_law():
    """Chapter 2: Little's law for memory: bytes in flight = bandwidth x latency (2980 GB/s, 1 us, 132 SMs)."""
    fig, ax = _blank((9, 2.6))
    ax.set_xlim(-1, 25)
    ax.set_ylim(-1.3, 4.2)
    _box(ax, 0, 1, 3, 1.6, "SM\nissues\nloads", fc="#dce6f2", fs=8)
    _box(ax, 20, 1, 3.5, 1.6, "HBM\nanswers each\none latency later", fc="#fde0c5", fs=7)
    ax.plot([3, 20], [2.35, 2.35], color="#888888", lw=0.8)
    ax.plot([3, 20], [1.25, 1.25], color="#888888", lw=0.8)
    for i in range(14):  # requests on their way: a steady stream
        _box(ax, 3.6 + i * 1.17, 1.5, 0.8, 0.6, "", fc=C[0], ec="white", lw=0.3)
    _arrow(ax, (4, 3.0), (19.5, 3.0), color=C[0])
    ax.text(11.6, 3.3, "latency: about 1 µs (several hundred ns, more when memory is busy)", ha="center",
            fontsize=7.5)
    ax.text(11.6, 0.65, "in flight at every moment: bandwidth x latency", ha="center", fontsize=8, weight="bold")
    ax.text(11.6, -0.15, "2980 GB/s x 1 µs = about 3 MB; / 132 SMs = about 23 KB per SM = about 1400 float4 "
            "loads per SM", ha="center", fontsize=7.5)
    ax.text(11.6, -0.85, "at 2048 resident threads per SM: under one float4 load in flight per thread",
            ha="center", fontsize=7.5)
    return fig


def warp_row_layout():
    """Chapter 3, section 5: one warp per row with the row in registers (the section's cell: VEC = 4 float4s per
    lane, rows of up to 512 columns). Float4 slot c holds columns 4c..4c+3; lane l holds slots l, l+32, l+64,
    l+96 in v[0..3]; slots past the row's end are -inf. Then the warp's 5 xor steps merge the 32 lanes' states.
    An example row of 488 columns; lane 5 followed."""
    vec, lanes, cols, lane0 = 4, 32, 488, 5
    n4 = cols // 4  # float4 slots inside the row
    fig, ax = _blank((9, 4.9))
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.99)
    ax.set_xlim(-10.5, 44.5)
    ax.set_ylim(-2.3, 17.6)
    ax.text(-10.5, 17.4, f"a row of cols = {cols} floats, seen as {n4} float4 slots: slot c holds columns 4c .. 4c+3",
            fontsize=9, weight="bold", va="top")
    for lane in (0, 8, 16, 24, 31):
        ax.text(lane + 0.5, 15.5, str(lane), ha="center", fontsize=6.5)
    ax.text(16, 16.1, "lane", ha="center", fontsize=7)
    for k in range(vec):
        y = 14.0 - 1.05 * k
        for lane in range(lanes):
            c = lane + lanes * k
            pad = c >= n4
            fc = "#eeeeee" if pad else (C[1] if lane == lane0 else "#dce6f2")
            _box(ax, lane, y, 1, 0.95, "-∞" if pad else "", fc=fc, ec="#888888", lw=0.4, fs=6, color=C[3])
        ax.text(-0.4, y + 0.47, f"v[{k}]: slots {lanes * k}..{lanes * k + lanes - 1}", ha="right", va="center",
                fontsize=7)
    lane_cols = [(4 * (lane0 + lanes * k), 4 * (lane0 + lanes * k) + 3) for k in range(vec)]
    ax.text(33, 13.0, f"lane {lane0} (orange) holds\n" + "\n".join(
        f"v[{k}] = x[{a}..{b}]" for k, (a, b) in enumerate(lane_cols)) + "\n16 registers", fontsize=7, va="center",
        color="black")
    ax.text(16, 9.35, f"slots {n4}..{lanes * vec - 1} lie past the row's end: make_float4(-∞, ...), which changes no "
            f"max; they are never stored", ha="center", fontsize=7, color=C[3])
    # the warp's merge: lane l combines its state with lane l xor o's, o = 16, 8, 4, 2, 1
    offsets = [16, 8, 4, 2, 1]
    held = [{lane} for lane in range(lanes)]
    for lvl in range(len(offsets) + 1):
        y = 7.2 - 1.55 * lvl
        for lane in range(lanes):
            fc = C[1] if lane0 in held[lane] and lvl else ("#dce6f2" if lane != lane0 else C[1])
            _box(ax, lane + 0.1, y, 0.8, 0.55, "", fc=fc, ec="#888888", lw=0.4)
        n_held = len(held[0])
        ax.text(-0.4, y + 0.27, "(m, d) per lane" if lvl == 0 else f"xor {offsets[lvl - 1]}", ha="right",
                va="center", fontsize=7)
        ax.text(32.6, y + 0.27, "each lane: its own state" if n_held == 1 else f"each lane: {n_held} lanes' states"
                if lvl < len(offsets) else f"every lane: all {n_held}: the row's (M, D)", va="center", fontsize=7)
        if lvl < len(offsets):
            o = offsets[lvl]
            for lane in range(lanes):  # the exchanges that carry lane0's state on; every pair exchanges alike
                if lane0 in held[lane]:
                    ax.plot([lane + 0.5, (lane ^ o) + 0.5], [y - 0.02, y - 0.98], color=C[1], lw=0.9)
                    ax.plot([lane + 0.5, lane + 0.5], [y - 0.02, y - 0.98], color=C[1], lw=0.9)
            held = [held[lane] | held[lane ^ o] for lane in range(lanes)]
    ax.text(16, -2.1, f"each step, every lane l merges its (m, d) with lane (l xor o)'s, fetched by __shfl_xor_sync: "
            f"registers only,\nno memory, no barrier. Orange: the lanes whose state already includes lane {lane0}'s "
            "(its lines drawn; every lane's spread alike)", ha="center", fontsize=7.5, va="bottom")
    return fig


def triton_tiles():
    """Chapter 3, section 7: one Triton program walks its row BLOCK columns at a time; lane k of the tile sees
    columns k, k + BLOCK, ...; the BLOCK-wide vectors m and d are updated element-wise after each tile and merged
    across lanes at the end. An example row of 20 values with BLOCK = 8 (three tiles, the last one half masked);
    every m and d drawn is computed here from it."""
    xs = [0.5, 2.1, -1.0, 0.3, 1.2, -0.4, 0.8, 1.9, 2.6, 0.0, 1.1, 3.0, -2.2, 0.7, 1.5, 0.4,
          1.0, 3.4, -0.6, 2.2]
    block = 8
    n = len(xs)
    tiles = math.ceil(n / block)
    inf = float("inf")
    gap = 1.6  # the space between the three vectors (a lane's box is 1 wide)
    fig, ax = _blank((9, 3.4))
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.99)
    ax.set_xlim(-4.6, 3 * block + 2 * gap + 2.6)
    ax.set_ylim(-0.5, 3.4 * tiles + 1.7)
    m, d = [-inf] * block, [0.0] * block
    top = 3.4 * tiles
    ax.text(-4.6, top + 1.6, f"one program, one row of {n} columns, BLOCK = {block}: lane k sees columns k, "
            f"k + {block}, k + {2 * block}", fontsize=9, weight="bold", va="top")
    for x0, title in ((0, "x tile (loaded; masked lanes: -∞)"), (block + gap, "m after the tile"),
                      (2 * block + 2 * gap, "d after the tile")):
        ax.text(x0 + block / 2, top + 0.45, title, ha="center", fontsize=8)
    for t in range(tiles):
        y = top - 3.4 * t - 0.9
        x = [xs[t * block + k] if t * block + k < n else -inf for k in range(block)]
        m_new = [max(a, b) for a, b in zip(m, x)]
        base = [0.0 if mn == -inf else mn for mn in m_new]
        d = [dv * math.exp(mo - bs) + math.exp(xv - bs) for dv, mo, xv, bs in zip(d, m, x, base)]
        moved = [t > 0 and mn > mo for mn, mo in zip(m_new, m)]
        m = m_new
        ax.text(-0.4, y + 0.45, f"tile {t}: columns\n{t * block}..{t * block + block - 1}", ha="right", va="center",
                fontsize=7)
        for k in range(block):
            live = x[k] != -inf
            _box(ax, k, y, 1, 0.9, f"{x[k]:g}" if live else "-∞", fc="#dce6f2" if live else "#eeeeee",
                 ec="#888888", lw=0.4, fs=7, color="black" if live else C[3])
            _box(ax, block + gap + k, y, 1, 0.9, f"{m[k]:g}", fc=C[1] if moved[k] else "#e5f5e0", ec="#888888",
                 lw=0.4, fs=7)
            _box(ax, 2 * block + 2 * gap + k, y, 1, 0.9, f"{d[k]:.2f}", fc=C[1] if moved[k] else "#e5f5e0",
                 ec="#888888", lw=0.4, fs=7)
        if t + 1 < tiles:
            for x0 in (block + gap, 2 * block + 2 * gap):
                _arrow(ax, (x0 + block / 2, y - 0.05), (x0 + block / 2, y - 2.45), color=C[7])
            ax.text(3 * block + 2 * gap + 0.2, y - 1.25, "carried\nto the\nnext tile", fontsize=7, va="center",
                    color="#555555")
    big_m = max(m)
    big_d = sum(dv * math.exp(mv - big_m) for mv, dv in zip(m, d))
    assert abs(big_d - sum(math.exp(v - big_m) for v in xs)) < 1e-12  # the lanes' merge is the row's (M, D)
    ax.text(-4.6, 1.25, f"after the last tile, merge the lanes: M = max(m) = {big_m:g},  D = Σ d e^(m - M) = "
            f"{big_d:.3f}, the whole row's;\nthen pass 2 re-reads each tile and writes e^(x - M) / D",
            fontsize=8, va="center")
    ax.text(-4.6, 0.1, "orange: the tile raised that lane's max, so its d was rescaled by e^(m_old - m_new) "
            "(d ← d e^(m - m_new) + e^(x - m_new), element-wise)", fontsize=7, va="center")
    return fig


def loop_order():
    """Chapter 4, section 4: the order in which FlashAttention-1 (outer loop over key/value tiles, inner over query
    tiles) and FlashAttention-2 (outer over query tiles, one program each, inner over key/value tiles) visit the
    tiles of S, drawn for 4 x 4 tiles; below each, the HBM reads and writes that order implies, counted for the
    section's example (T = 4096, tiles of 128 rows)."""
    n = 4  # tiles per side in the drawing
    tiles = math.ceil(4096 / 128)  # the section's example: T = 4096, B_r = B_c = 128
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    panels = (("FlashAttention-1: outer loop over K, V tiles j,\ninner loop over query tiles i", True),
              ("FlashAttention-2: outer loop over query tiles i (one program\neach, all at once), "
               "inner loop over K, V tiles j", False))
    for ax, (title, fa1) in zip(axes, panels):
        ax.set_axis_off()
        ax.set_xlim(-1.3, n + 2.9)
        ax.set_ylim(-2.2, n + 0.9)
        ax.set_title(title, fontsize=8.5)
        for j in range(n):
            on = fa1 and j == 1
            _box(ax, j + 0.05, n + 0.15, 0.9, 0.6, f"K{j}, V{j}", fc=C[2] if on else "#e5f5e0", fs=7,
                 color="white" if on else "black")
        for i in range(n):
            y = n - 1 - i
            on = not fa1 and i == 2
            _box(ax, -1.0, y + 0.05, 0.8, 0.9, f"Q{i}", fc=C[0] if on else "#dce6f2", fs=8,
                 color="white" if on else "black")
            _box(ax, n + 0.2, y + 0.05, 0.8, 0.9, f"O{i}", fc=C[1] if on else "#fdd0a2", fs=8,
                 color="white" if on else "black")
            for j in range(n):
                step = j * n + i + 1 if fa1 else j + 1
                fc = "#fde0dd" if (fa1 and j == 1) or on else "white"
                _box(ax, j + 0.05, y + 0.05, 0.9, 0.9, str(step), fc=fc, ec="#888888", lw=0.5, fs=9)
        if fa1:
            _arrow(ax, (1.5, n - 0.1), (1.5, 0.1), color=C[3], lw=1.2)
            ax.text(n + 1.15, n / 2, "at every step\n(i, j): read\n$Q_i, O_i, m_i, \\ell_i$\nfrom HBM;\nwrite "
                    "$O_i, m_i, \\ell_i$\nback", fontsize=7, va="center")
            where = f"j = 1 shown: K1, V1 stay on chip while i walks down; {n * n} steps, in order"
            counts = (f"per head, T = 4096, tiles of 128 ({tiles} per side): K, V read once;\nQ read {tiles} times, "
                      f"O read {tiles} times and written {tiles} times")
        else:
            _arrow(ax, (0.1, 1.5), (n - 0.1, 1.5), color=C[3], lw=1.2)
            ax.text(n + 1.15, 1.5, "$O_i$ written\nonce, after\nthe last\nK, V tile", fontsize=7, va="center")
            where = f"i = 2 shown: Q2 and its O2, m, $\\ell$ stay on chip while j walks right; {n} programs at once"
            counts = (f"per head, T = 4096, tiles of 128 ({tiles} per side): Q read once, O written once;\n"
                      f"K, V read {tiles} times (once per program, mostly from L2)")
        ax.text(n / 2 + 0.3, -0.2, "numbers: the order in which a loop visits the tiles of S\n" + where,
                ha="center", fontsize=6.8, va="top")
        ax.text(n / 2 + 0.3, -1.25, counts, ha="center", va="top", fontsize=7.5)
    fig.tight_layout()
    return fig


def key_ranges():
    """Chapter 4, Exercise 2: the key range each query tile walks, for the exercise's worked example T = 200,
    BLOCK_M = 128, BLOCK_N = 64, with and without the causal mask. lo and hi follow the exercise's rule; each
    query row and key column is drawn as one cell, and each cell is coloured by the loop that reaches it."""
    T, bm, bn = 200, 128, 64
    q_tiles = math.ceil(T / bm)
    rows, cols = q_tiles * bm, math.ceil(T / bn) * bn  # the rows the query tiles cover, the keys the tiles load

    def lo_hi(tile, causal):
        i0 = tile * bm
        return (i0, min(i0 + bm, T)) if causal else (T // bn * bn, T)

    names = ["unmasked loop [0, lo)", "masked loop [lo, hi): kept", "masked loop: set to -∞", "skipped (never loaded)"]
    cmap = ListedColormap(["#c6dbef", "#fdd0a2", "#e7969a", "#f7f7f7"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.4))
    for ax, causal in zip(axes, (True, False)):
        grid = [[3] * cols for _ in range(rows)]
        for i in range(rows):
            lo, hi = lo_hi(i // bm, causal)
            for j in range(cols):
                if j < lo:
                    grid[i][j] = 0
                elif j < math.ceil(hi / bn) * bn and hi > lo:  # the masked loop's tiles: start in range(lo, hi, bn)
                    grid[i][j] = 2 if j >= T or (causal and j > i) else 1
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=3.5, extent=(0, cols, rows, 0), interpolation="nearest")
        ax.add_patch(Rectangle((0, T), cols, rows - T, facecolor="none", edgecolor=C[7], hatch="///", lw=0))
        for j in range(0, cols + 1, bn):
            ax.plot([j, j], [0, rows], color="black", lw=0.6)
        for i in range(0, rows + 1, bm):
            ax.plot([0, cols], [i, i], color="black", lw=1.2)
        ax.plot([T, T], [0, rows], color=C[4], lw=1.2, ls="--")
        ax.plot([0, cols], [T, T], color=C[4], lw=1.2, ls="--")
        ax.set_xticks(range(0, cols + 1, bn))
        ax.set_yticks([0, bm, T, rows])
        ax.tick_params(labelsize=7)
        ax.set_xlabel("key position (tiles of BLOCK_N = 64); dashed: T = 200", fontsize=7.5)
        ax.set_ylabel("query position (tiles of BLOCK_M = 128)", fontsize=7.5)
        for tile in range(q_tiles):
            lo, hi = lo_hi(tile, causal)
            ax.text(cols + 4, tile * bm + bm / 2, f"tile {tile}\nlo = {lo}\nhi = {hi}", fontsize=7, va="center")
        ax.set_title("causal" if causal else "no mask", fontsize=9)
        ax.set_xlim(0, cols + 46)
        ax.set_ylim(rows, 0)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    handles = [Rectangle((0, 0), 1, 1, facecolor=cmap(k), edgecolor="black", lw=0.5) for k in range(4)]
    handles.append(Rectangle((0, 0), 1, 1, facecolor="white", edgecolor=C[7], hatch="///", lw=0.5))
    fig.legend(handles, names + ["rows past T: computed, not stored"], fontsize=7, ncol=3, loc="lower center",
               frameon=False)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    return fig


def _minifloat(E: int, M: int, nan_top: bool) -> list[tuple[float, int]]:
    """The non-negative values of a format with E exponent and M fraction bits and no infinity, each with its
    fraction field: subnormals for exponent field 0, (1 + f / 2^M) 2^(e - b) above; with nan_top, the all-ones
    pattern is NaN (E4M3), otherwise every pattern is a number (E2M1)."""
    b = 2 ** (E - 1) - 1
    out = []
    for e in range(2 ** E):
        for f in range(2 ** M):
            if nan_top and e == 2 ** E - 1 and f == 2 ** M - 1:
                continue
            out.append(((f / 2 ** M) * 2.0 ** (1 - b) if e == 0 else (1 + f / 2 ** M) * 2.0 ** (e - b), f))
    return out


def _round_nearest_even(x: float, vals: list[tuple[float, int]]) -> float:
    """x (within the format's range) rounded to the nearest value, a tie to the one with an even fraction field."""
    return min(vals, key=lambda vf: (abs(vf[0] - x), vf[1] % 2))[0]


def fp_number_lines():
    """Chapter 6, section 12: the non-negative values of fp4 E2M1 and fp8 E4M3, enumerated from their bit fields;
    every value's rounding interval (bounded by the midpoints to its neighbours), the largest value, and what lies
    past it. Three lines: E2M1 whole, E4M3 whole, E4M3 near zero."""
    e2m1, e4m3 = _minifloat(2, 1, False), _minifloat(4, 3, True)
    assert len(e2m1) == 8 and len(e4m3) == 127
    fig, axes = plt.subplots(3, 1, figsize=(9, 4.8))
    # (axes, values, right end, title, example inputs to round, the first binade whose spacing is labelled)
    lines = ((axes[0], e2m1, 9.0, f"fp4 E2M1: all {len(e2m1)} non-negative values", [2.6, 5.0], 1),
             (axes[1], e4m3, 600.0, f"fp8 E4M3: all {len(e4m3)} non-negative values (the 128th pattern, "
              "all ones, is NaN)", [300.0], 128),
             (axes[2], e4m3, 4.3, "fp8 E4M3 near zero, [0, 4]: the same format, magnified", [1.3, 2.9], 1))
    for ax, vals, right, title, examples, first in lines:
        v = [val for val, _ in vals]
        top, top_f = vals[-1]
        shown = [x for x in v if x <= right]
        ax.set_xlim(-0.012 * right, right)
        ax.set_ylim(-1.25, 1.35)
        ax.set_yticks([])
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
        ax.tick_params(labelsize=7)
        ax.set_title(title, fontsize=8.5, loc="left")
        mids = [(a + b) / 2 for a, b in zip(v, v[1:])]
        over = top + (v[-1] - v[-2]) / 2  # halfway to the next value the format would have: where rounding stops
        edges = [0.0] + mids + [over]
        for k, x in enumerate(shown):
            ax.add_patch(Rectangle((edges[k], -0.35), edges[k + 1] - edges[k], 0.7,
                                   facecolor="#dce6f2" if k % 2 == 0 else "#c6dbef", lw=0))
        ax.plot(shown, [0] * len(shown), "|", color="black", ms=10, mew=1.0)
        if top <= right:
            ax.add_patch(Rectangle((over, -0.35), right - over, 0.7, facecolor="none", edgecolor=C[3], hatch="///",
                                   lw=0))
            ax.plot([top], [0], "o", color=C[3], ms=5)
            ax.text(top, -0.5, f"largest: {top:g}", ha="center", fontsize=7.5, color=C[3], va="top")
            tie_down = top_f % 2 == 0  # a tie at `over` goes to the even fraction: down to top if top's is even
            upto = f"({top:g}, {over:g}{']' if tie_down else ')'} rounds to {top:g}"
            past = f"{'past' if tie_down else 'from'} {over:g}: out of range,"
            what = ("saturate to 448\n(or NaN: converters differ)" if top == 448 else
                    f"no infinity or NaN\nto give; PTX's conversion saturates to {top:g}")
            ax.text(over + 0.01 * right, 0.42, f"{upto};\n{past} {what}", ha="left", va="bottom",
                    fontsize=6.5, color=C[3])
        for x in examples:
            r = _round_nearest_even(x, vals)
            ax.plot([x], [0.62], "v", color=C[0], ms=5)
            _arrow(ax, (x, 0.55), (r, 0.08), color=C[0], lw=0.9)
            tie = " (a tie: to the even fraction)" if abs(abs(x - r) - min(abs(x - w) for w in v if w != r)) < 1e-12 \
                else ""
            ax.text(x, 0.78, f"{x:g} → {r:g}{tie}", ha="center", fontsize=7, color=C[0], va="bottom")
        # the spacing in each binade [2^k, 2^(k+1)) wide enough to label (it doubles from one binade to the next)
        for k in sorted({math.floor(math.log2(x)) for x in shown if x > 0}):
            lo, hi = 2.0 ** k, min(2.0 ** (k + 1), top)
            inside = [x for x in v if lo <= x <= hi]
            if lo < first or (lo + hi) / 2 > right:
                continue
            span = f"[{lo:g}, {hi:g}]" if hi == top else f"[{lo:g}, {hi:g})"
            ax.text((lo + hi) / 2, -0.6, f"{span}: spacing {inside[1] - inside[0]:g}",
                    ha="center", va="top", fontsize=6.5, color="#555555")
    dense = [x for x, _ in e4m3 if x < 0.5]
    axes[2].text(0.25, 0.5, f"{len(dense)} values in [0, 0.5),\n7 of them subnormal", fontsize=6.5, ha="center",
                 va="bottom", color="#555555")
    fig.text(0.5, 0.005, "ticks: the representable values; each shaded band rounds to the value inside it "
             "(its edges are the midpoints to the neighbours); hatched: past the format's range", ha="center",
             fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def block_scales():
    """Chapter 6, section 14: block-scaled fp4. MXFP4 (OCP Microscaling v1.0): 32 E2M1 elements share one E8M0
    scale, a power of two 2^(field - 127), field = floor(log2 amax) - 2 + 127 (2: E2M1's largest exponent);
    NVFP4: 16 E2M1 elements share an E4M3 scale amax/6 (in units of a float32 per-tensor scale amax/(6 * 448)).
    The 32 example values are a fixed sequence; every element, scale and decoded value drawn is computed here."""
    e2m1, e4m3 = _minifloat(2, 1, False), _minifloat(4, 3, True)
    vals = [round(0.9 * math.sin(1.7 * k + 0.3) * math.exp(-((k - 20) / 9) ** 2), 3) for k in range(32)]

    def fp4(x):  # round to E2M1 (nearest, ties to even), saturating at 6
        return math.copysign(_round_nearest_even(min(abs(x), 6.0), e2m1), x)

    fig, ax = _blank((9, 4.6))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 52)
    w = 88 / 32
    # MXFP4: one block of 32, one E8M0 scale
    amax = max(abs(v) for v in vals)
    field = math.floor(math.log2(amax)) - 2 + 127
    scale = 2.0 ** (field - 127)
    mx = [fp4(v / scale) + 0.0 for v in vals]  # + 0.0: print -0 as 0
    ax.text(0, 51.5, "MXFP4: a block of 32 E2M1 elements (4 bits each) shares one E8M0 scale (8 bits): "
            "4 + 8/32 = 4.25 bits per element", fontsize=8.5, weight="bold", va="top")
    ax.text(0, 45.5, f"the 32 values\n(bars; largest\n|value| {amax:g})", fontsize=6.5, va="center",
            color="#555555")
    ax.plot([12, 100], [45.5, 45.5], color="#999999", lw=0.5)
    for k, v in enumerate(vals):
        ax.add_patch(Rectangle((12 + k * w + 0.2 * w, 45.5), 0.6 * w, 4.5 * v / amax, facecolor=C[7], lw=0))
    _box(ax, 0, 34, 11, 6, f"E8M0 scale\nfield {field}\n= 2^({field}-127)", fc="#f6d5bf", fs=6.5)
    for k, e in enumerate(mx):
        _box(ax, 12 + k * w, 35, w, 4, f"{e:g}", fc="#dce6f2" if e else "white", fs=6, lw=0.5)
    ax.text(12, 33.6, f"stored: E2M1 elements = values / {scale:g}, rounded (amax / {scale:g} lands in [4, 8); "
            "above 6 clamps to 6). Decoded value = element × 2^(field − 127)", fontsize=6.8, va="top")
    ax.text(12, 30.6, "E8M0: 8 exponent bits, bias 127, no sign, no mantissa: 2^-127 to 2^127; "
            "field 255 (0xFF) = NaN", fontsize=6.8, va="top", color="#555555")
    # NVFP4: two blocks of 16, E4M3 block scales, one float32 tensor scale
    t = amax / (6 * 448)  # the tensor is these 32 values: its amax is theirs
    ax.text(0, 25.5, "NVFP4: blocks of 16 E2M1 elements, each sharing one E4M3 scale (8 bits), "
            "and one float32 scale per tensor: 4 + 8/16 = 4.5 bits per element", fontsize=8.5, weight="bold",
            va="top")
    _box(ax, 0, 12, 11, 8, f"float32\ntensor scale\nt = amax/(6·448)\n= {t:.3g}", fc="#e5d8ef", fs=6)
    for blk in range(2):
        part = vals[16 * blk:16 * blk + 16]
        sb = _round_nearest_even(max(abs(v) for v in part) / 6 / t, e4m3)  # the E4M3 block scale
        x0 = 12 + blk * 44
        _box(ax, x0, 17.5, 43.5, 3, f"E4M3 block scale {sb:g} (× t = {sb * t:.3g})", fc="#f6d5bf", fs=6.5)
        for k, v in enumerate(part):
            e = fp4(v / (sb * t)) + 0.0
            _box(ax, x0 + k * 43.5 / 16, 12.5, 43.5 / 16, 4, f"{e:g}", fc="#dce6f2" if e else "white", fs=6,
                 lw=0.5)
    ax.text(12, 11, "each block's largest magnitude maps to 6 (to E4M3's precision); "
            "decoded value = element × block scale × tensor scale", fontsize=6.8, va="top")
    ax.text(12, 8, "t brings every block scale amax_block/(6t) into E4M3's range (at most 448)", fontsize=6.8,
            va="top", color="#555555")
    ax.text(0, 3.5, "white: elements that round to 0. E2M1 magnitudes: 0, 0.5, 1, 1.5, 2, 3, 4, 6. "
            "Each block's scale follows its own largest value:\nthe NVFP4 block on the left, "
            "whose values are small, keeps more of them than the one MXFP4 scale does.",
            fontsize=6.8, va="top")
    fig.subplots_adjust(0.01, 0.01, 0.99, 0.99)
    return fig


def fa2_backward_tiles():
    """Chapter 8, section 5: which program owns what in the attention backward, on the T x T score tiles under a
    causal mask (6 x 6 tiles drawn). Pass 2: the program of key block j walks the query blocks from the diagonal
    down, keeping K_j, V_j and the float32 dK_j, dV_j on chip. Pass 3: the program of query block i walks the key
    blocks from the left up to the diagonal, keeping Q_i, dO_i, L_i, Delta_i and the float32 dQ_i on chip. Tiles
    above the diagonal are skipped; the diagonal tiles need the mask."""
    n, own = 6, 2
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.3))
    panels = (("pass 2: one program per key block j\n(here j = 2): dKj, dVj written once", True),
              ("pass 3: one program per query block i\n(here i = 3): dQi written once", False))
    for ax, (title, keys) in zip(axes, panels):
        ax.set_axis_off()
        ax.set_xlim(-1.6, n + 0.3)
        ax.set_ylim(-2.3, n + 1.2)
        ax.set_title(title, fontsize=8.5)
        mine = own if keys else own + 1
        for j in range(n):
            on = keys and j == mine
            _box(ax, j + 0.05, n + 0.15, 0.9, 0.6, f"K{j},V{j}", fc=C[2] if on else "#e5f5e0", fs=6.5,
                 color="white" if on else "black")
        for i in range(n):
            y = n - 1 - i
            on = not keys and i == mine
            _box(ax, -1.5, y + 0.05, 1.3, 0.9, f"Q{i}, dO{i}", fc=C[0] if on else "#dce6f2", fs=6.5,
                 color="white" if on else "black")
            for j in range(n):
                if j > i:
                    fc, text = "#eeeeee", ""
                elif (keys and j == mine) or (not keys and i == mine):
                    fc, text = "#fde0dd", "mask" if i == j else ""
                else:
                    fc, text = "white", "mask" if i == j else ""
                ax.add_patch(Rectangle((j + 0.05, y + 0.05), 0.9, 0.9, facecolor=fc, edgecolor="#888888", lw=0.5,
                                       hatch="////" if i == j else None))
                if text:
                    ax.text(j + 0.5, y + 0.5, text, ha="center", va="center", fontsize=6,
                            bbox=dict(facecolor="white", edgecolor="none", pad=0.5))
        if keys:
            _arrow(ax, (mine + 0.5, n - 1 - mine + 0.7), (mine + 0.5, 0.15), color=C[3], lw=1.4)
            what = ("per query tile i ≥ j: load Qi, dOi, Li, Δi; recompute Pᵀ;\n"
                    "dVj += Pᵀ dOi,  dKj += τ dSᵀ Qi  (four products)")
        else:
            _arrow(ax, (0.15, n - 1 - mine + 0.5), (mine + 0.85, n - 1 - mine + 0.5), color=C[3], lw=1.4)
            what = ("per key tile j ≤ i: load Kj, Vj; recompute P, dP;\n"
                    "dQi += τ dS Kj  (three products)")
        ax.text(n / 2 - 0.6, -0.25, what, ha="center", va="top", fontsize=7)
        ax.text(n / 2 - 0.6, -1.35, "grey: above the diagonal, skipped (no query sees a later key);\n"
                "hatched: the diagonal tiles, the only ones that need the causal mask", ha="center", va="top",
                fontsize=6.5, color="#555555")
    fig.tight_layout()
    return fig


def two_stage_dgamma():
    """Chapter 8, section 4: dgamma summed across rows. Above, design 2: every program adds its float32 share into
    the same d outputs with atomics, in whatever order the programs arrive. Below, design 3: P programs take rows
    p, p + P, p + 2P, ... (P = 4 and 12 rows drawn), each stores its share in row p of a float32 (P, d) buffer;
    a second kernel, one program per block of columns, adds the P rows in a fixed order and rounds once."""
    P, rows = 4, 12
    fig, ax = _blank((9.5, 4.6))
    ax.set_xlim(-0.5, 30)
    ax.set_ylim(-1.2, 15.5)
    fig.subplots_adjust(0.01, 0.01, 0.99, 0.99)
    colors = [C[0], C[1], C[2], C[4]]

    def row_strip(y0):
        for r in range(rows):
            _box(ax, 0, y0 + (rows - 1 - r) * 0.5, 6, 0.45, f"row {r}: x, dy", fc=colors[r % P], fs=5.5,
                 color="white", lw=0.3)
        ax.text(3, y0 + rows * 0.5 + 0.1, f"{rows} rows, dealt to P = {P} programs:\nrow r to program r mod P",
                ha="center", va="bottom", fontsize=6.5)

    # design 2 (top): atomics into one d-vector
    ax.text(0, 15.3, "design 2: per-program shares, then atomics (fast, order-dependent)", fontsize=8.5,
            weight="bold", va="top")
    for p in range(P):
        _box(ax, 9, 13.4 - p * 0.9, 5, 0.7, f"program {p}: share", fc=colors[p], fs=6.5, color="white")
        _arrow(ax, (14.1, 13.75 - p * 0.9), (19.9, 12.1), color=colors[p], lw=0.9)
    _box(ax, 20, 11.6, 8, 1, "dgamma (float32), d outputs", fc="#f6d5bf", fs=7)
    ax.text(24, 11.1, "tl.atomic_add: the P shares arrive in any order,\nso dgamma's last bits change from run to run",
            ha="center", va="top", fontsize=6.5)
    ax.plot([-0.5, 30], [9.6, 9.6], color="#bbbbbb", lw=0.6)
    # design 3 (bottom): stage 1 stores to partial, stage 2 sums in a fixed order
    ax.text(0, 8.9, "design 3: two stages (deterministic)", fontsize=8.5, weight="bold", va="top")
    row_strip(0.2)
    for p in range(P):
        y = 6.3 - p * 1.25
        _arrow(ax, (6.2, 0.2 + (rows - 1 - p) * 0.5 + 0.22), (9.4, y + 0.45), color=colors[p], lw=0.7)
        _box(ax, 9.5, y, 5, 0.9, f"program {p}\nrows {p}, {p + P}, {p + 2 * P}", fc=colors[p], fs=6, color="white")
        _arrow(ax, (14.6, y + 0.45), (16.4, y + 0.45), color=colors[p], lw=0.9)
        _box(ax, 16.5, y, 5.5, 0.9, f"partial[{p}, :]", fc="white", ec=colors[p], fs=6.5, lw=1.2)
    ax.text(19.25, 7.45, "stage 1 stores: partial, (P, d) float32", ha="center", fontsize=6.5)
    _arrow(ax, (22.2, 3.5), (23.9, 3.5), color=C[3], lw=1.2)
    _box(ax, 24, 2.5, 5.5, 2, "stage 2: per column\nblock, add rows\n0, 1, ..., P-1 in order;\nround once",
         fc="#f6d5bf", fs=6.2)
    ax.text(26.75, 1.9, "dgamma: the same bits\non every run", ha="center", va="top", fontsize=6.5)
    ax.text(15, -0.9, "extra traffic: P × d × 4 bytes written by stage 1 and read by stage 2 (section 4 counts it)",
            ha="center", fontsize=6.5, color="#555555")
    return fig


DIAGRAMS = {f.__name__: f for f in (thread_grid, memory_hierarchy, reduction_tree, masked_lanes, smem_banks, butterfly,
                                     addressing_schemes, two_level_reduction, littles_law,
                                     online_softmax, merge_states, held_split, cluster_exchange, flash_tiles,
                                     welford_chan,
                                     fusion_trips, norm_placement, double_rounding,
                                     split_rows, q526_split, q_pipeline, newton_reciprocal, fa3_pipeline,
                                     register_budget, wait_placement,
                                     warp_row_layout, triton_tiles, loop_order, key_ranges, fp_number_lines,
                                     block_scales, two_stage_dgamma, fa2_backward_tiles)}


def script_hash() -> str:
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def draw(out: str) -> list[str]:
    os.makedirs(out, exist_ok=True)
    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "flashcourse"})
    paths = []
    for name, make in DIAGRAMS.items():
        fig = make()
        path = os.path.join(out, name + ".png")
        fig.savefig(path, dpi=DPI, metadata={"Software": None})
        plt.close(fig)
        paths.append(path)
    with open(os.path.join(out, "STAMP"), "w") as f:
        f.write(f"sha256 of make_diagrams.py: {script_hash()}\n")
        f.write("".join(f"{os.path.basename(p)}\n" for p in paths))
    return paths


if __name__ == "__main__":
    for p in draw(sys.argv[1] if len(sys.argv) > 1 else HERE):
        print(p, os.path.getsize(p), "bytes")
