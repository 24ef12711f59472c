#!/bin/bash
# Thirteenth session, run b: the report's cases under each ptxas (kernels_ref/report.py --ptxas: one ptxas pinned
# for every Triton kernel before anything compiles), softmax / RMSNorm / CUDA LayerNorm and attention, each in its
# own process with a fresh Triton cache; then the SC_FAST bfloat16 fallback's GPU tests and the cluster sweep.
# HEAD is passed in (the device's copy of .git may name another commit).
O=$OUT; L=$O/all.log
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD";
  for p in torch triton; do python3 -c "from kernels_ref.report import ptxas_paths as p, _ptxas_version as v; print('$p', v(p()['$p']))"; done; } > $O/info.txt 2>&1
cat $O/info.txt
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
for p in triton torch; do
  TRITON_CACHE_DIR=/tmp/tc_sn_$p python3 -m kernels_ref.report --no-render --ptxas $p --only softmax,rmsnorm,layernorm_cuda --json $O/rep_sn_$p.json >> $L 2>&1
done
for p in triton torch; do
  TRITON_CACHE_DIR=/tmp/tc_att_$p python3 -m kernels_ref.report --no-render --ptxas $p --only attention_fwd --json $O/rep_att_$p.json >> $L 2>&1
done
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_softmax_cluster.py > $O/pytest.txt 2>&1
python3 benchmarks/softmax_cluster_sweep.py $O/cluster.json >> $L 2>&1
tail -n 3 $O/pytest.txt; grep -v '^{' $L | tail -n 60
