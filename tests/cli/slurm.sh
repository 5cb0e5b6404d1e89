#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A real single-node Slurm on localhost (Debian's slurm-wlm and munge),
# configured in a private temporary folder, runs a CPU-backend `vkcu batch`
# as a 3-task array with tools/slurm/; the merged reports must cover every
# file exactly once. Daemons are started here and stopped by pid, also when
# the test fails. SKIP where the packages or the daemons are not available.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
name="slurm array batch"

need() { for c in slurmctld slurmd munged sbatch squeue sinfo scancel; do command -v "$c" > /dev/null || return 1; done; }
if ! need; then
  if [ "$(id -u)" != 0 ]; then skip "$name: slurm-wlm/munge not installed and not root to install them"; exit 0; fi
  if ! command -v apt-get > /dev/null; then skip "$name: slurm-wlm/munge not installed and no apt-get"; exit 0; fi
  echo "installing slurm-wlm munge" >&2
  if ! DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y --no-install-recommends slurm-wlm munge >&2; then
    skip "$name: apt-get install slurm-wlm munge failed (no network or package mirror?)"; exit 0
  fi
  need || { skip "$name: slurm-wlm/munge installed but their commands are missing"; exit 0; }
fi
if [ "$(id -u)" != 0 ]; then skip "$name: slurmd must run as root"; exit 0; fi

D=$(mktemp -d "$TMP/slurm.XXXXXX")
chmod 700 "$D"
pids=()
jobid=""
stop_all() {
  if [ -n "$jobid" ]; then scancel "$jobid" 2> /dev/null; fi
  # Reverse order: slurmd, slurmctld, munged.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2> /dev/null
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$p" 2> /dev/null
    wait "$p" 2> /dev/null
  done
  pids=()
  rm -rf "$TMP"
}
trap stop_all EXIT
trap 'exit 130' INT TERM
give_up() { # reason: SKIP when the daemons cannot start here
  skip "$name: $1"
  for f in "$D"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }; done
  exit 0
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ---- munge: private key and socket ----
mkdir -p "$D/munge"
chmod 700 "$D/munge"
head -c 1024 /dev/urandom > "$D/munge/munge.key"
chmod 400 "$D/munge/munge.key"
sock=$D/munge/munge.socket
munged --foreground --force --socket="$sock" --key-file="$D/munge/munge.key" --pid-file="$D/munge/munged.pid" \
  --log-file="$D/munged.log" --seed-file="$D/munge/munged.seed" 2>> "$D/munged.log" &
pids+=($!)
for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done # bounds, not timings: 60 s
[ -S "$sock" ] || give_up "munged did not start"
if command -v munge > /dev/null && ! munge -n -S "$sock" | unmunge -S "$sock" > /dev/null 2>&1; then
  give_up "munge credentials do not round-trip"
fi

# ---- slurm.conf from this machine's hardware ----
host=$(hostname -s)
node=$(slurmd -C 2> /dev/null | head -1)
cpus=$(echo "$node" | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p')
mem=$(echo "$node" | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
[ -n "$cpus" ] || cpus=$(nproc)
[ -n "$mem" ] || mem=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
mkdir -p "$D/state" "$D/spool"
cat > "$D/slurm.conf" << EOF
ClusterName=vkcutest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
MaxArraySize=1001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=vkcu Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$D/slurm.conf
# Inherited array variables would shard the tasks wrongly (a test run inside a Slurm job).
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_STEP SLURM_JOB_ID JOB_COMPLETION_INDEX
slurmctld -D -c -i -f "$D/slurm.conf" >> "$D/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$D/slurm.conf" -N "$host" >> "$D/slurmd.log" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 1200); do # 120 s: a loaded machine starts the daemons slowly
  state=$(sinfo -h -N -o %T 2> /dev/null | head -1)
  case $state in idle*|mixed*|alloc*) break ;; esac
  for p in "${pids[@]}"; do kill -0 "$p" 2> /dev/null || give_up "a Slurm daemon exited at start-up (see its log)"; done
  sleep 0.1
done
case $state in idle*|mixed*|alloc*) ;; *) give_up "the node did not come up (state '${state:-none}')" ;; esac

# ---- the batch: 7 good and 3 bad files, a 3-task array, 2 at a time ----
in=$TMP/in out=$TMP/out reports=$TMP/reports
mkdir -p "$in/sub"
for i in 1 2 3; do cp "$MEDIA/h264-aac.mp4" "$in/clip$i.mp4"; done
cp "$MEDIA/hevc10.mkv" "$MEDIA/vfr.mkv" "$in/"
cp "$MEDIA/av1.ivf" "$MEDIA/hdr10.mkv" "$in/sub/"
cp "$MEDIA/empty.mp4" "$MEDIA/not-video.mp4" "$MEDIA/truncated.mp4" "$in/"
"$VKCU" batch "$in" "$TMP/plan-out" -r --pipeline regression-hash --dry-run 2> /dev/null | awk '/^(process|fail)/ {print $2}' | sort > "$TMP/all"
[ "$(wc -l < "$TMP/all")" = 10 ] || { fail "$name: the dry run lists $(wc -l < "$TMP/all") files, expected 10"; exit 0; }

cd "$TMP"
jobid=$(VKCU=$VKCU VKCU_JOBS=1 VKCU_SLURM_CPUS=1 VKCU_SLURM_GRES=none bash "$root/tools/slurm/submit.sh" -n 3 -c 2 "$in" "$out" "$reports" \
  --backend cpu --pipeline regression-hash -r -q 2> "$TMP/sbatch.err")
if ! [[ "$jobid" =~ ^[0-9]+ ]]; then
  fail "$name: sbatch refused the array: $(tail -2 "$TMP/sbatch.err" | tr '\n' ' ')"
  exit 0
fi
jobid=${jobid%%;*}
left=1
for _ in $(seq 4500); do # at most 15 minutes (a loaded 2-core machine)
  squeue -h -j "$jobid" -o '%T %r' > "$TMP/queue" 2> /dev/null
  left=$(wc -l < "$TMP/queue")
  [ "$left" = 0 ] && break
  # Reasons that never clear: the request does not fit this node.
  if grep -qE "PartitionConfig|BadConstraints|ReqNodeNotAvail|PartitionNodeLimit|Resources.*Invalid" "$TMP/queue"; then
    fail "$name: the array job cannot run here: $(head -1 "$TMP/queue")"
    exit 0
  fi
  sleep 0.2
done
if [ "$left" != 0 ]; then
  fail "$name: the array job did not finish in 15 minutes ($(squeue -h -j "$jobid" -o '%i %T %r' | head -3 | tr '\n' ' '))"
  exit 0
fi
jobid=""
ntask=$(ls "$reports"/shard-*.jsonl 2> /dev/null | wc -l)
[ "$ntask" = 3 ] && pass "$name: 3 tasks ran, each with its own report" ||
  { fail "$name: $ntask shard reports ($(cat "$TMP"/vkcu-batch-*.out 2> /dev/null | tail -3 | tr '\n' ' '))"; exit 0; }

python3 "$root/tools/slurm/merge-reports.py" -o "$TMP/merged.jsonl" "$reports" 2> "$TMP/merge.err"
mrc=$?
python3 - "$TMP/merged.jsonl" "$TMP/all" "$reports" > "$TMP/check" 2>&1 << 'EOF'
import json, sys, glob
lines = [json.loads(l) for l in open(sys.argv[1])]
files, summary = lines[:-1], lines[-1]
expected = open(sys.argv[2]).read().split()
names = [f["file"] for f in files]
assert sorted(names) == sorted(expected), ("files", sorted(names), sorted(expected))
assert len(set(names)) == len(names), "a file was processed twice"
shards = {}
for p in glob.glob(sys.argv[3] + "/shard-*.jsonl"):
    for l in open(p):
        o = json.loads(l)
        if not o.get("summary"):
            shards.setdefault(o["shard"], []).append(o["file"])
assert sorted(shards) == ["0/3", "1/3", "2/3"], sorted(shards)
for i, s in enumerate(["0/3", "1/3", "2/3"]):
    assert sorted(shards[s]) == sorted(expected)[i::3], (s, shards[s])
bad = {"empty.mp4", "not-video.mp4", "truncated.mp4"}
for f in files:
    want = "failed" if f["file"] in bad else "done"
    assert f["status"] == want, (f["file"], f["status"], f["error"])
assert (summary["shards"], summary["files"], summary["done"], summary["failed"]) == (3, 10, 7, 3), summary
print("ok")
EOF
[ "$mrc" = 1 ] && [ "$(cat "$TMP/check")" = ok ] && grep -q "^merged 3 shards: 10 files, 7 done, 0 skipped, 3 failed" "$TMP/merge.err" &&
  pass "$name: merged report has every file exactly once (7 done, 3 bad files failed)" ||
  fail "$name: merge exit $mrc: $(tail -1 "$TMP/check") $(grep merged "$TMP/merge.err")"
# Hidden files: only each output's record of its settings (docs/batch.md, Resume).
[ "$(find "$out" -type f -name '*.framemd5' | wc -l)" = 7 ] && [ -z "$(find "$out" -name '.*' ! -name '.vkcu-*.settings')" ] &&
  pass "$name: 7 outputs, no partial files" || fail "$name: outputs: $(find "$out" -type f | tr '\n' ' ')"
