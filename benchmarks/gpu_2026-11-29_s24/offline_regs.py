"""Registers per thread of Chapter 5's RMSNorm kernel and of Liger-Kernel 0.8.5's, compiled offline for sm_90 on the
CPU machine (no GPU; Triton's own ptxas, cuobjdump --dump-resource-usage on the cubin), with and without a register
cap. Twenty-fourth session, before run d; output in offline_regs.txt. The GPU machine's Triton (3.6) compiled the
same kernel to 38 registers with or without the cap (regs_probe.py, e/e0.json; f/f1.json: identical SASS).
Usage: TRITON_INTERPRET=0 python benchmarks/gpu_2026-11-29_s24/offline_regs.py LIGER_DIR (Liger-Kernel's wheel
unzipped there)"""
import importlib.util
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

triton.knobs.runtime.interpret = False
spec = importlib.util.spec_from_file_location("rms", "kernels_ref/ch05_fused_norms/rmsnorm_triton.py")
rms = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rms)
from liger_kernel.ops import rms_norm as lr  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
BIN = os.path.dirname(triton.__file__) + "/backends/nvidia/bin/"


def regs(name, kernel, sig, consts, **options):
    c = triton.compile(ASTSource(kernel, sig, consts), target=TARGET, options=options)
    path = tempfile.mktemp(suffix=".cubin")
    with open(path, "wb") as f:
        f.write(c.asm["cubin"])
    out = subprocess.run([BIN + "cuobjdump", "--dump-resource-usage", path], capture_output=True, text=True).stdout
    print(name, options, [ln.strip()[:32] for ln in out.splitlines() if "REG" in ln], flush=True)


print("triton", triton.__version__)
ours = {"x_ptr": "*bf16", "g_ptr": "*bf16", "y_ptr": "*bf16", "cols": "i32", "x_stride": "i32", "y_stride": "i32",
        "eps": "fp32", "BLOCK": "constexpr"}
for cap in (None, 48, 40, 32):
    regs("ours 4096", rms.rmsnorm_kernel, ours, {"BLOCK": 4096}, num_warps=8, **({"maxnreg": cap} if cap else {}))
liger = {"Y_ptr": "*bf16", "Y_row_stride": "i32", "X_ptr": "*bf16", "X_row_stride": "i32", "W_ptr": "*bf16",
         "W_row_stride": "i32", "RSTD_ptr": "*fp32", "RSTD_row_stride": "i32", "n_cols": "i32", "eps": "fp32",
         "offset": "fp32", "casting_mode": "constexpr", "elementwise_affine": "constexpr", "BLOCK_SIZE": "constexpr"}
regs("liger 4096", lr._rms_norm_forward_kernel, liger, {"casting_mode": 0, "elementwise_affine": True,
                                                         "BLOCK_SIZE": 4096}, num_warps=8)
for cap in (None, 64, 80):
    regs("ours 16384", rms.rmsnorm_kernel, ours, {"BLOCK": 16384}, num_warps=16, **({"maxnreg": cap} if cap else {}))
