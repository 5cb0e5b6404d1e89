#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Submits tools/slurm/vkcu-batch.sbatch as an array of N shards, at most CAP
# running at once; prints the job id.
#
#   tools/slurm/submit.sh [-n TASKS] [-c CAP] [-w] IN_DIR OUT_DIR REPORT_DIR [vkcu batch options]
#
#   -n TASKS   shards (array tasks), default 4
#   -c CAP     tasks running at once (the %CAP of --array), default 4
#   -w         wait until every task has ended (sbatch --wait)
#
# Environment: VKCU_SLURM_GRES (default gpu:1) is the GPU request of each
# task; set it empty or to "none" on clusters without GPUs (the CPU backend,
# or the tests). VKCU_SLURM_CPUS overrides the script's --cpus-per-task
# (keep it >= VKCU_JOBS). SBATCH_* variables and $VKCU are passed on as usual.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tasks=4 cap=4 wait=""
while getopts "n:c:wh" o; do
  case $o in
    n) tasks=$OPTARG ;;
    c) cap=$OPTARG ;;
    w) wait=--wait ;;
    *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; [ "$o" = h ] && exit 0; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 3 ]; then
  echo "usage: submit.sh [-n TASKS] [-c CAP] [-w] IN_DIR OUT_DIR REPORT_DIR [vkcu batch options]" >&2
  exit 2
fi
case $tasks$cap in *[!0-9]*) echo "submit.sh: -n and -c take positive integers" >&2; exit 2 ;; esac
[ "$tasks" -ge 1 ] && [ "$cap" -ge 1 ] || { echo "submit.sh: -n and -c take positive integers" >&2; exit 2; }
mkdir -p "$3"
script=$here/vkcu-batch.sbatch
gres=${VKCU_SLURM_GRES-gpu:1}
if [ -z "$gres" ] || [ "$gres" = none ]; then
  # #SBATCH lines cannot be unset from the command line: submit a copy without the GPU request.
  copy=$3/.vkcu-batch-nogres.sbatch
  sed '/^#SBATCH --gres/d' "$script" > "$copy"
  script=$copy
  gres_opt=()
else
  gres_opt=(--gres="$gres")
fi
cpus_opt=()
[ -n "${VKCU_SLURM_CPUS:-}" ] && cpus_opt=(--cpus-per-task="$VKCU_SLURM_CPUS")
exec sbatch --parsable $wait --array="0-$((tasks - 1))%$cap" "${gres_opt[@]}" "${cpus_opt[@]}" "$script" "$@"
