#!/usr/bin/env bash
# Submit the grading of a chapter to Slurm: an array of SHARDS tasks (grade.sbatch), then `collect` once
# every task has succeeded (--dependency=afterok). Prints the two job ids.
#
#   COURSE_DIR=/shared/course SHARDS=8 autograder/instructor/slurm/submit.sh ch01_softmax [more sbatch options...]
#
# Environment: COURSE_DIR (default: here), SHARDS (array tasks, default 4), GPUS_PER_TASK (default 1;
# 0: no --gres, CPU mode), CPUS_PER_TASK (default 4), RESULTS, FLASHCOURSE_VENV (default: this
# repository's .venv), LOG_DIR (default: COURSE_DIR/slurm-logs); grade.sbatch reads JOBS, AUTOGRADE_ARGS,
# FLASHCOURSE_MODE. More sbatch options (--partition, --account, --time, ...) apply to both jobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CHAPTER=${1:?usage: submit.sh CHAPTER [sbatch options...]}
shift
export COURSE_DIR; COURSE_DIR=$(realpath "${COURSE_DIR:-$PWD}")
export RESULTS=${RESULTS:-$COURSE_DIR/results/$CHAPTER}
export FLASHCOURSE_VENV=${FLASHCOURSE_VENV:-$(realpath "$here/../../.venv")}
SHARDS=${SHARDS:-4} GPUS=${GPUS_PER_TASK:-1} LOG_DIR=${LOG_DIR:-$COURSE_DIR/slurm-logs}
gres=()
if [ "$GPUS" -gt 0 ]; then gres=(--gres="gpu:$GPUS"); fi
mkdir -p "$LOG_DIR" "$RESULTS"

array=$(sbatch --parsable --export=ALL --array="0-$((SHARDS - 1))" --cpus-per-task="${CPUS_PER_TASK:-4}" \
        "${gres[@]}" --output="$LOG_DIR/%x-%A_%a.out" "$@" "$here/grade.sbatch")
array=${array%%;*}  # "id;cluster" on a multi-cluster site
collect=$(sbatch --parsable --export=ALL --dependency="afterok:$array" --kill-on-invalid-dep=yes \
          --job-name=flashcourse-collect --cpus-per-task=1 --output="$LOG_DIR/%x-%j.out" "$@" \
          "$here/grade.sbatch" collect)
collect=${collect%%;*}
echo "array job $array ($SHARDS tasks), collect job $collect; logs in $LOG_DIR"
echo "array=$array collect=$collect"
