# Sourced by a GPU run script (run as `bash run.sh` on a GPU machine, with OUT set;
# not for an interactive shell: it exits), before their own commands. It writes the GPU's name and the commit passed
# as HEAD to $OUT/info.txt, stops (exit 3) unless the name contains ${WANT:-H200} (a run's numbers are filed under
# the GPU they name), installs Liger-Kernel from .whl/ into /tmp/liger (the scripts that time the report's peers
# put it on PYTHONPATH), and sets PYTHONPATH to the checkout.
O=${OUT:?OUT must name the folder whose files come back}
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head ${HEAD:-unknown}"; } > "$O/info.txt"; cat "$O/info.txt"
grep -q "${WANT:-H200}" "$O/info.txt" || { echo "not an ${WANT:-H200}"; exit 3; }
python3 -c "import sys; sys.path.insert(0, '/tmp/liger'); import liger_kernel" 2>/dev/null \
  || pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl \
  || echo "Liger-Kernel not installed (no .whl/liger_kernel-*.whl?): the report's liger rows will say so"
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
