"""One launch of the cluster softmax (and a device-to-device copy of as many bytes), for Nsight Compute:

    ncu --clock-control none --kernel-name regex:'softmax_cluster|copy' --launch-skip 3 --launch-count 2 \\
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \\
        python benchmarks/ncu_softmax_cluster.py ROWS COLS DTYPE CLUSTER THREADS VEC [one_exp]

Each is launched 4 times (3 warm-up launches, then the profiled one). --clock-control none: ncu otherwise locks the
SM clock to base, which changes the balance between the SMs and the memory that this is meant to look at."""
import sys

import torch

from kernels_ref.ch03_online_softmax import softmax_cluster as sc


def main(argv):
    rows, cols, dtype, cluster, threads, vec = argv[1:7]
    cfg = {"cluster": int(cluster), "threads": int(threads), "vec": int(vec), "one_exp": "one_exp" in argv[7:]}
    x = torch.randn(int(rows), int(cols), device="cuda", dtype=getattr(torch, dtype))
    y = torch.empty_like(x)
    for _ in range(4):
        sc.softmax_cluster(x, y, cfg)
    for _ in range(4):
        y.copy_(x)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
