"""Softmax over long rows with x read once, on Hopper: softmax_cluster.cu (a row split over the thread blocks of one
cluster, each block's part of the row held in registers, the partial (max, sum) exchanged through distributed
shared memory). Compiled through course.cuda (NVRTC), as the course's CUDA cells are, with the configuration as
#defines.

Why. The Triton long-row kernels (softmax_long_rows.py, softmax_split_rows.py) either read x twice, hoping to find
it in L2 the second time, or hold a part of the row in registers while waiting, through global-memory counters, for
the row's other parts. On an H200 both stay near two reads' speed: 65.7% (bfloat16 2048 x 131072) and 69.9% (float32
1024 x 131072) of copy in the report of 2026-11-26, where two full reads and a write would give 2/3. A cluster's
blocks are scheduled together (the hardware guarantees it), so a block may wait for its siblings without a
co-residency argument, and the wait is a hardware barrier rather than a spin on global memory.

Config: {"cluster": blocks a row (8 portable, 16 on Hopper by request), "threads": a block, "vec": 16-byte vectors
a thread, optional "one_exp": float32 only, keep 2^(x - m_r) in place of x (one exponential an element); "ld", "st":
the cache hints, softmax_cluster.cu's SC_LD and SC_ST (LD and ST below by default: none); "probe": a timing probe that
computes a wrong y, SC_PROBE}; a block holds
threads x vec x EPV columns (EPV: 4 float32, 8 bfloat16 values a vector), so a row of up to cluster x that many
columns fits. CONFIGS (dtype -> ((widest row, config), ...)) is what `softmax_cluster` takes where `config` is not
given."""
import functools
import os

import torch

EPV = {torch.float32: 4, torch.bfloat16: 8}
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "softmax_cluster.cu")
# The widest row each config takes (cluster x threads x vec x EPV columns). H100 (benchmarks/softmax_cluster_sweep.py,
# archived run gpu_2026-11-27_s11/a and b): 128-thread blocks holding 32 (float32) or 16 (bfloat16) vectors a thread led
# at 131072 columns (96.6 and 92.4% of copy; 256- and 512-thread blocks 85.7-94.1); at bfloat16 262144, 512-thread
# blocks of 8 vectors (83.5-83.7%) beat 128 x 32 (76.9) and 256 x 16 (81.9). float32 past 131072 columns is not
# measured: no entry (the Triton path takes it). float32 keeps 2^(x - m_r) in place of x (one_exp: one exponential an
# element): 97.0 against 96.6% with the streaming hints, where clusters of 16 lost (80.2-92.2 float32, 74.5-89.6
# bfloat16; H100, gpu_2026-11-27_s11/f), and 99.7 / 99.8 without them (gpu_2026-11-27_s11/l).
# Archived run gpu_2026-11-27_s12/b on an H100, gpu_2026-11-27_s12/c on an H200 (two interleaved rounds each): "fast"
# (SC_FAST: ex2.approx.ftz, and for bfloat16 the exponent by one FMA, maxima on pairs, 1 / D in the exponent) took
# bfloat16 2048 x 131072 from 86.5 to 90.4-90.5% on the H200 and to 92.4-92.5 with 5 blocks an SM ("min_blocks": 96
# registers instead of 128), from 96.9-97.0 to 99.2 on the H100; 1024 x 262144 from 72.4-72.6 to 82.6-83.0 (H200) and
# from 88.7 to 94.1-94.5 (H100); float32 from 91.5-91.7 to 92.2-92.4 (H200), 99.7 to 100.0 (H100).
CONFIGS = {
    torch.float32: ((131072, {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True, "fast": True}),),
    torch.bfloat16: ((131072, {"cluster": 8, "threads": 128, "vec": 16, "fast": True, "min_blocks": 5}),
                     (262144, {"cluster": 8, "threads": 512, "vec": 8, "fast": True})),
}


# The loads' and stores' cache hints (softmax_cluster.cu's SC_LD, SC_ST): none. Streaming hints (.cs), the first
# choice since x is read once and y not read back, cost 2.8 (float32) and 4.5 (bfloat16) points on an H100 (archived
# run gpu_2026-11-27_s11/k: 97.0 against 99.7, 92.3 against 96.8 at 131072 columns, the same configs in the same
# process).
LD, ST = 2, 1


def columns(cfg: dict, dtype) -> int:
    """The widest row cfg holds."""
    return cfg["cluster"] * cfg["threads"] * cfg["vec"] * EPV[dtype]


def config_for(x) -> dict | None:
    """The CONFIGS entry for x's width and dtype (the narrowest that holds the row), with only as many blocks a
    cluster as the row fills (a 65536-column float32 row: 4 blocks of 16384 columns, not 8 with 4 idle; the widths
    between the measured ones are not timed); None if there is none."""
    cfg = next((c for widest, c in CONFIGS.get(x.dtype, ()) if x.shape[-1] <= widest), None)
    if cfg is None:
        return None
    part = cfg["threads"] * cfg["vec"] * EPV[x.dtype]
    return dict(cfg, cluster=max(1, min(cfg["cluster"], -(-x.shape[-1] // part))))


def applies(x, y, cfg: dict | None = None) -> str | None:
    """None where the kernel may run on (x, y) with cfg (CONFIGS' choice if None), else why not."""
    if not (x.is_cuda and y.is_cuda):
        return "not on a GPU"
    if torch.cuda.get_device_capability(x.device)[0] < 9:
        return "thread-block clusters need compute capability 9.0 (Hopper) or later"
    if x.dtype not in EPV or y.dtype != x.dtype:
        return f"dtype {x.dtype} -> {y.dtype}: float32 or bfloat16 in and out"
    if x.dim() != 2 or y.shape != x.shape or not (x.is_contiguous() and y.is_contiguous()):
        return "x and y: same shape, 2-D, contiguous"
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return "an empty tensor"
    cfg = config_for(x) if cfg is None else cfg
    if cfg is None or cols > columns(cfg, x.dtype):
        return f"no config holds {cols} columns"
    if cols % EPV[x.dtype] or x.data_ptr() % 16 or y.data_ptr() % 16:
        return "16-byte vectors: columns a multiple of 16 bytes and 16-byte aligned tensors"
    if rows * cfg["cluster"] >= 2**31:
        return "too many rows for one grid"
    return None


def source(bf16: bool, cluster: int, threads: int, vec: int, one_exp: bool = False, ld: int = LD, st: int = ST,
           probe: int = 0, fast: bool = False, min_blocks: int = 0) -> str:
    with open(SRC) as f:
        src = f.read()
    return (f"#define SC_BF16 {int(bf16)}\n#define CLUSTER {cluster}\n#define THREADS {threads}\n#define VEC {vec}\n"
            f"#define SC_ONE_EXP {int(one_exp)}\n#define SC_LD {ld}\n#define SC_ST {st}\n#define SC_PROBE {probe}\n"
            f"#define SC_FAST {int(fast)}\n" + (f"#define SC_MIN_BLOCKS {min_blocks}\n" if min_blocks else "")
            + src)


NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14  # CUfunction_attribute CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED


@functools.lru_cache(maxsize=None)
def kernel(bf16: bool, cluster: int, threads: int, vec: int, one_exp: bool = False, ld: int = LD, st: int = ST,
           probe: int = 0, fast: bool = False, min_blocks: int = 0):
    from course.cuda import compile_cuda
    k = compile_cuda(source(bf16, cluster, threads, vec, one_exp, ld, st, probe, fast, min_blocks)).softmax_cluster
    if cluster > 8:  # past the portable size: the driver must be told the kernel may take 16 blocks a cluster
        import cupy
        launcher = k.module._launcher
        fn = launcher._functions.setdefault(k.name, launcher._module.get_function(k.name))
        cupy.cuda.driver.funcSetAttribute(fn.ptr, NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
    return k


def softmax_cluster(x, y, config: dict | None = None):
    """softmax(x) along each row into y. Raises ValueError where `applies` says no."""
    cfg = config_for(x) if config is None else config
    why = applies(x, y, cfg)
    if why:
        raise ValueError(f"softmax_cluster on {tuple(x.shape)} {x.dtype}: {why}")
    rows, cols = x.shape
    k = kernel(x.dtype == torch.bfloat16, cfg["cluster"], cfg["threads"], cfg["vec"], cfg.get("one_exp", False),
               cfg.get("ld", LD), cfg.get("st", ST), cfg.get("probe", 0), cfg.get("fast", False),
               cfg.get("min_blocks", 0))
    k((rows * cfg["cluster"],), (cfg["threads"],), (x, y, rows, cols))
    return y
