"""Tuning sweep for the Chapter 4 FlashAttention reference on a GPU (stdout, or JSON to the path given for the plot).

python benchmarks/gpu_tune_attention.py --sweep out.json: TFLOP/s against T for the plot.
python benchmarks/gpu_tune_attention.py [--quick]: tile configurations of the Triton kernel at
B=4, H=32, T=4096, bf16, D 64/128, causal and not, next to SDPA's flash and cuDNN backends,
all timed in this process with course.timing.bench (L2 flushed, median). TFLOP/s = 4·B·H·T²·D / t
(half of that when causal).
"""
import sys


import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from course import timing  # noqa: E402
from kernels_ref.ch04_flash_attention import flash_attention_triton as fa  # noqa: E402


def tflops(B, H, T, D, causal, ms):
    return 4 * B * H * T * T * D * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12


def sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def run_config(q, k, v, o, causal, bm, bn, warps, stages):
    B, H, T, D = q.shape
    grid = (triton.cdiv(T, bm), B * H)
    fa.flash_attention_kernel[grid](q, k, v, o, T, D ** -0.5 * 1.4426950408889634, D=D, BLOCK_M=bm,
                                    BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=stages)


def sweep(path):
    """TFLOP/s against T (1k-16k; B·T = 65536 tokens, H = 32), D 64/128, causal and not: the
    reference (its own tile choice), SDPA flash and cuDNN. JSON for plot_ch04.py (ch04_attention_sweep_*.json)."""
    import json
    dev = torch.cuda.get_device_name()
    rows = []
    for D in (64, 128):
        for causal in (False, True):
            for T in (1024, 2048, 4096, 8192, 16384):
                B, H = max(1, 65536 // T), 32
                q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
                o = torch.empty_like(q)
                calls = {"triton reference": lambda: fa.flash_attention(q, k, v, o, causal),
                         "sdpa flash": lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal),
                         "sdpa cudnn": lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)}
                for name, call in calls.items():
                    try:
                        t = tflops(B, H, T, D, causal, timing.bench(call))
                    except RuntimeError:
                        t = None
                    rows.append({"D": D, "causal": causal, "T": T, "B": B, "H": H, "variant": name, "tflops": t})
                    print(f"{dev} | sweep D={D} causal={causal} T={T} B={B} {name}: {t and round(t)} TFLOP/s",
                          flush=True)
    with open(path, "w") as f:
        json.dump({"device": dev, "dtype": "bfloat16", "rows": rows}, f, indent=1)


def main():
    dev = torch.cuda.get_device_name()
    if "--sweep" in sys.argv:
        return sweep(sys.argv[sys.argv.index("--sweep") + 1])
    quick = "--quick" in sys.argv
    B, H, T = 4, 32, 4096
    for D in (64, 128):
        g = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(3))
        o = torch.empty_like(q)
        for causal in (False, True):
            ref = sdpa(SDPBackend.MATH, q[:1, :2].float(), k[:1, :2].float(), v[:1, :2].float(), causal)
            for name, be in (("sdpa flash", SDPBackend.FLASH_ATTENTION), ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION)):
                try:
                    ms = timing.bench(lambda: sdpa(be, q, k, v, causal))
                    print(f"{dev} | D={D} causal={causal} {name}: {tflops(B, H, T, D, causal, ms):.0f} TFLOP/s",
                          flush=True)
                except RuntimeError as e:
                    print(f"{dev} | D={D} causal={causal} {name}: unavailable {str(e)[:80]}", flush=True)
            configs = [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 8, 4), (128, 128, 8, 2),
                       (64, 64, 4, 3), (128, 32, 4, 3), (256, 64, 8, 3), (128, 128, 4, 3)]
            if quick:
                configs = configs[:3]
            for bm, bn, warps, stages in configs:
                try:
                    run_config(q, k, v, o, causal, bm, bn, warps, stages)
                    err = (o[:1, :2].float() - ref).abs().max().item()
                    ms = timing.bench(lambda: run_config(q, k, v, o, causal, bm, bn, warps, stages))
                    print(f"{dev} | D={D} causal={causal} triton BM={bm} BN={bn} w={warps} s={stages}: "
                          f"{tflops(B, H, T, D, causal, ms):.0f} TFLOP/s (max err {err:.2g})", flush=True)
                except Exception as e:  # noqa: BLE001
                    print(f"{dev} | D={D} causal={causal} BM={bm} BN={bn} w={warps} s={stages}: failed "
                          f"{type(e).__name__} {str(e)[:100]}", flush=True)


if __name__ == "__main__":
    main()
