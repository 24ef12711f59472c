"""Chapter 6, exercise 3 on a GPU: the reference kernel `softmax_lowp` (bf16 or fp8 E4M3 logits with a row
scale, float32 statistics, bf16 out) against the copy of as many bytes and against PyTorch doing the same
(widen, scale, softmax in float32, round to bf16), all timed in this process (CUDA events, L2 flushed).
The fractions of copy it prints are what the exercise's bandwidth threshold will be set from.

    python benchmarks/ch06_lowp_bench.py [OUT.json]
"""
from __future__ import annotations

import json
import sys

import torch

from course import timing
from kernels_ref.ch06_low_precision.softmax_lowp_triton import softmax_lowp

SHAPES = [(16384, 4096), (8192, 8192), (4096, 16384)]


def main(path: str | None) -> int:
    dtypes = [torch.bfloat16] + ([torch.float8_e4m3fn] if torch.cuda.get_device_capability() >= (8, 9) else [])
    rows_out = []
    for rows, cols in SHAPES:
        z = torch.randn(rows, cols, device="cuda") * 4
        for dt in dtypes:
            top = torch.finfo(dt).max
            s = (z.abs().amax(-1) / top).float()
            x = (z / s[:, None]).to(dt)
            y = torch.empty(rows, cols, dtype=torch.bfloat16, device="cuda")
            nbytes = x.numel() * x.element_size() + y.numel() * 2 + rows * 4  # read x and scale, write y
            ref = torch.softmax(x.double() * s.double()[:, None], -1)
            softmax_lowp(x, s, y)
            err = ((y.double() - ref).abs() / ref.clamp_min(2.0 ** -126)).max().item()
            ms = timing.bench(lambda: softmax_lowp(x, s, y))
            ms_torch = timing.bench(lambda: torch.softmax(x.float() * s[:, None], -1).to(torch.bfloat16))
            copy = timing.copy_gbps(nbytes)
            r = {"shape": [rows, cols], "dtype": str(dt).removeprefix("torch."), "bytes": nbytes,
                 "gbps": timing.gbps(nbytes, ms), "copy_gbps": copy, "torch_gbps": timing.gbps(nbytes, ms_torch),
                 "max_rel_error": err}
            r["fraction"], r["torch_fraction"] = r["gbps"] / copy, r["torch_gbps"] / copy
            rows_out.append(r)
            print(f"{rows}x{cols} {r['dtype']:14} softmax_lowp {r['gbps']:7.0f} GB/s = "
                  f"{100 * r['fraction']:5.1f}% of copy ({copy:.0f} GB/s); PyTorch {100 * r['torch_fraction']:5.1f}%; "
                  f"max rel error {err:.2e}", flush=True)
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows_out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
