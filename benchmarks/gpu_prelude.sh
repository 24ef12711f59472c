# Sourced by the dated run scripts (benchmarks/gpu_*/run_X.sh) on a lent GPU machine, before their own commands:
# writes the GPU's name and the commit passed as HEAD to $OUT/info.txt, stops (exit 3) unless the name contains
# ${WANT:-H200} (the numbers of a run are filed under the GPU they name), and sets the environment the course's
# tools expect there (Liger-Kernel from .whl/ in /tmp/liger, for the report's peers).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head ${HEAD:-unknown}"; } > "$O/info.txt"; cat "$O/info.txt"
grep -q "${WANT:-H200}" "$O/info.txt" || { echo "not an ${WANT:-H200}"; exit 3; }
[ -d /tmp/liger ] || pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
