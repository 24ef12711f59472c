#!/bin/bash
# Thirteenth session, run a: (1) which ptxas compiles the Triton kernels: Triton's own, or torch's (torch.compile's
# inductor sets TRITON_PTXAS_PATH to torch/bin/ptxas for the rest of the process, so in the report every Triton
# kernel compiled after the first torch.compile call, Liger-Kernel's included, uses another ptxas than ours);
# liger_gap_sweep.py (no torch.compile in it) with each ptxas from the start, fresh Triton caches;
# (2) the SC_FAST bfloat16 fallback (exact difference where |m| >= 2^14): GPU tests and the cluster sweep.
set -x
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
git rev-parse --short HEAD > $OUT/head.txt
[ -n "$NEED" ] && { grep -q "$NEED" $OUT/gpu.txt || exit 3; }
TP=$(python3 -c "import torch,os;print(os.path.join(os.path.dirname(torch.__file__),'bin','ptxas'))")
TB=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends','nvidia','bin','ptxas'))")
{ echo "torch: $TP"; $TP --version; echo "triton: $TB"; $TB --version; python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; } > $OUT/ptxas.txt 2>&1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
for round in 1 2; do
  TRITON_CACHE_DIR=/tmp/tcb$round python3 benchmarks/liger_gap_sweep.py $OUT/liger_tritonptxas_$round.json --only softmax > $OUT/liger_tritonptxas_$round.log 2>&1
  TRITON_CACHE_DIR=/tmp/tct$round TRITON_PTXAS_PATH=$TP python3 benchmarks/liger_gap_sweep.py $OUT/liger_torchptxas_$round.json --only softmax > $OUT/liger_torchptxas_$round.log 2>&1
done
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_softmax_cluster.py > $OUT/pytest.txt 2>&1
python3 benchmarks/softmax_cluster_sweep.py $OUT/cluster.json > $OUT/cluster.log 2>&1
tail -5 $OUT/*.log $OUT/pytest.txt; cat $OUT/ptxas.txt
