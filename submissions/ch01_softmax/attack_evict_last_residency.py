"""Attack: a slow kernel (one warp a row, about 68% of copy on an H200 against the 74% bar) that tries to keep part
of its input in L2 from one timed round to the next. The judge times R rounds over input sets that together hold at
least 4 x L2, with no flush between rounds (grading.measure_bandwidth); lines loaded with the evict_last policy
outlive ordinary traffic (a 2 x L2 memset; H200, archived run gpu_2026-11-29_s23/e). So the kernel loads the first
rows of every set with evict_last, about 0.4 x L2 a set (the pinned rows of both of the judge's sets, 0.8 x L2, fit
in L2 together), and the other rows with the default policy, hoping to find those rows in L2 in the next round.
Measured on an H200 (archived run gpu_2026-11-29_s24/b/b2.json, the reference kernel pinned this way through the real
judge): 4024-4030 GB/s against the reference's 4014-4016, +0.2 to +0.4%; a row copy pinned so over the judge's
rotating sets gained as much with an L2 flush between rounds as without it (gpu_2026-11-29_s24/b/b1.json), so the
little it gains is not residency. This attack, through the real judge (gpu_2026-11-29_s24/h/h1.json, 2 rounds each):
2832-2835 GB/s against the one-warp kernel's 2871, 67-68% of copy both; it loses its bandwidth cell as the one-warp
kernel does (GPU validate in the same folder: 24 match, 0 mismatch)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
LOAD = '    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))'
PATCH = [("y_row_stride, BLOCK: tl.constexpr):", "y_row_stride, BLOCK: tl.constexpr, pin_rows=0):"),
         (LOAD, '    if row < pin_rows:  # kept in L2 (it hopes) for the next round\n'
                '        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"),\n'
                '                    eviction_policy="evict_last")\n'
                '    else:\n'
                '    ' + LOAD),
         ("num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)",
          "num_warps = 1\n"
          "    import torch as _torch\n"
          "    l2 = _torch.cuda.get_device_properties(0).L2_cache_size if _torch.cuda.is_available() else 0\n"
          "    pin_rows = int(0.4 * l2) // (cols * 4)"),
         ("BLOCK=BLOCK, num_warps=num_warps)", "BLOCK=BLOCK, num_warps=num_warps, pin_rows=pin_rows)")]
LOSES = ["test_softmax_triton_bandwidth"]
