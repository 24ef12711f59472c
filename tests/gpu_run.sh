#!/usr/bin/env bash
# The GPU validation on a lent GPU machine (see docs/testing.md), in steps:
#   bash tests/gpu_run.sh [STEP ...]   STEP: bench | attacks | engine[:CH,CH] | validate[:CH,CH] | grading[:CH,CH]
#                                      | class[:CH] (a synthetic class of ${STUDENTS:-200} mixed notebooks, ${JOBS:-4}
#                                        workers, kept in ${KEEP} and resumed there when set; nvidia-smi sampled)
#                                      | mutgpu:CH,CH (mutate --gpu-recheck) | lowp | ce | report (bench --report)
#                                      | sweeps (the fast references' config sweeps) | readthrough
#                                      | attention (the fast attention reference's GPU tests: choose()'s configs,
#                                        the seams, the softmax variants; ATTN_K overrides the -k selection) | all
# Writes logs and JSON under ${OUT:-gpu-out}. Needs torch, triton, cupy and pytest there; `validate` also
# nbgrader, installed from the wheels of `flashcourse wheelhouse .whl --bench` if .whl/ is there (--bench: with
# Liger-Kernel's, for the report step).
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 FLASHCOURSE_MODE=gpu
if [ -d .whl ] && ! python3 -c "import nbgrader" 2>/dev/null; then
  pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
  export PYTHONPATH=$PYTHONPATH:/tmp/site PATH=/tmp/site/bin:$PATH
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/gpu.txt"
python3 -c "import torch, triton, cupy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__)" | tee -a "$OUT/gpu.txt"
[ $# -eq 0 ] && set -- all
for step in "$@"; do
  name=${step%%:*}; chs=""; [ "$name" != "$step" ] && chs=${step#*:}; chs=${chs//,/ }
  t0=$(date +%s)
  case $name in
    bench|all) python3 -m kernels_ref.bench --sweep --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log" ;;&
    attacks|all) python3 -m pytest -q -ra -p no:cacheprovider tests/test_attacks.py tests/test_zygote.py 2>&1 \
                   | tee "$OUT/attacks.log" | tail -25 ;;&
    # quiet checks 6 submissions at a time, timed checks one at a time on a quiet GPU
    engine|all) python3 tests/test_gpu_engine.py $chs 2>&1 | tee -a "$OUT/engine.log" \
                  | grep -E "^BAD|bandwidth|throughput|as expected" ;;&
    validate|all) PATH=$PATH python3 -m autograder.instructor.cli validate $chs --json "$OUT/validate_${chs// /_}.json" 2>&1 | tee -a "$OUT/validate.log" | tail -40 ;;&
    grading|all) python3 -m autograder.instructor.bench_grading $chs --repeat 3 --json "$OUT/grading_${chs// /_}.json" 2>&1 \
                   | tee -a "$OUT/grading.log" | tail -20 ;;&
    lowp|all) python3 -m benchmarks ch06_lowp_bench "$OUT/ch06_lowp.json" 2>&1 | tee -a "$OUT/lowp.log" ;;&
    ce|all) python3 -m benchmarks ch06_ce_bench "$OUT/ch06_ce.json" 2>&1 | tee -a "$OUT/ce.log"
            python3 -m benchmarks ch06_ce_l2split "$OUT/ch06_ce_l2split.json" 2>&1 | tee -a "$OUT/ce_l2split.log" ;;&
    report|all) python3 -c "import liger_kernel" 2>/dev/null || [ -d /tmp/liger ] \
                  || pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl  # the bench extra
                PYTHONPATH=$PYTHONPATH:/tmp/liger python3 -m kernels_ref.report 2>&1 | tee "$OUT/report.log"
                mkdir -p "$OUT/results" && cp benchmarks/results/* "$OUT/results/" ;;&
    # the GPU sweeps that decide the candidates (each one process, JSON per sweep; about 450 s together)
    sweeps) for sw in softmax_long_rows_sweep attention_hopper_sweep; do  # the two not yet run on a GPU
              timeout 280 python3 -m benchmarks $sw "$OUT/$sw.json" > "$OUT/$sw.log" 2>&1; echo "$sw rc=$?"
              tail -8 "$OUT/$sw.log"
            done ;;
    attention) timeout ${ATTN_TIMEOUT:-400} python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py \
                 -k "${ATTN_K:-on_hopper or fp16 or falls_back or seam or three_consumers or softmax_variants}" 2>&1 \
                 | tee "$OUT/attention.log" | tail -6 ;;
    readthrough) python3 -m benchmarks readthrough_measure "$OUT/readthrough.json" 2>&1 | tee "$OUT/readthrough.log" | tail -5 ;;
    mutgpu) python3 -m autograder.instructor.cli mutate $chs --gpu-recheck --jobs ${JOBS:-4} 2>&1 | tee -a "$OUT/mutgpu.log" \
              | grep -v "^killed" | tail -40
            mkdir -p "$OUT/mutation" && cp benchmarks/mutation/gpu/*.json "$OUT/mutation/" ;;
    class|all) ( while sleep 5; do echo "--- $(date +%T)"; nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory \
                   --format=csv,noheader; done ) > "$OUT/class_apps.txt" 2>&1 & smi=$!
               python3 -m benchmarks grade_class ${chs:-ch01} --students ${STUDENTS:-200} --mix all --jobs ${JOBS:-4} \
                 ${KEEP:+--keep "$KEEP"} --json "$OUT/class_${chs:-ch01}.json" 2>&1 | tee -a "$OUT/class.log" | tail -60
               kill $smi
               nvidia-smi --query-gpu=index,uuid --format=csv,noheader > "$OUT/gpu_uuids.txt" ;;
  esac
  echo "== step $step: $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
done
