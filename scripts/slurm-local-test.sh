#!/usr/bin/env bash
# A single-node Slurm on this machine (slurmctld and slurmd on localhost,
# Debian's slurm-wlm, no munge: auth/none), started here and stopped on exit:
# a 4-task job array of short CPU campaigns, `gfsl fuzz --shard auto`, then
# `gfsl fuzz merge` over the four shard folders (docs/SCALE.md).
#
#   scripts/slurm-local-test.sh GFSL_BINARY WORK_DIR
#
# Exit 0: the array ran and the merge holds the four shards; 1: it did not;
# 77: the daemons cannot run here (one line on stderr says why; ctest counts
# the test as skipped).
set -uo pipefail
gfsl=${1:?usage: slurm-local-test.sh GFSL_BINARY WORK_DIR}
work=${2:?usage: slurm-local-test.sh GFSL_BINARY WORK_DIR}
gfsl=$(readlink -f "$gfsl")

skip() { echo "slurm-local-test: skipped: $*" >&2; exit 77; }
fail() { echo "slurm-local-test: FAILED: $*" >&2; exit 1; }

for d in slurmctld slurmd; do
  command -v "$d" >/dev/null 2>&1 || [[ -x /usr/sbin/$d ]] || skip "$d is not installed (Debian package slurm-wlm)"
done
for c in sbatch sinfo scontrol; do command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (Debian package slurm-client)"; done
PATH=$PATH:/usr/sbin
[[ $(id -u) -eq 0 ]] || skip "slurmd must run as root to start jobs as their user (this runs as $(id -un))"

rm -rf "$work"
mkdir -p "$work"/{state,spool,log,run,fz} || fail "cannot create $work"
# Ports of our own, so that concurrent runs and a system Slurm do not meet.
port=$((20000 + (RANDOM % 20000)))
cpus=$(nproc)
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=gfsltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF

ctld_pid= slurmd_pid=
cleanup() {
  scontrol shutdown >/dev/null 2>&1
  for p in $slurmd_pid $ctld_pid; do
    [[ -n $p ]] && kill "$p" 2>/dev/null
  done
  sleep 1
  for p in $slurmd_pid $ctld_pid; do
    [[ -n $p ]] && kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
}
trap cleanup EXIT

slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -N localhost -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
slurmd_pid=$!

ready=0
for _ in $(seq 1 60); do
  kill -0 "$ctld_pid" 2>/dev/null || skip "slurmctld exited at start: $(tail -n 1 "$work/log/slurmctld.out" "$work/log/slurmctld.log" 2>/dev/null | grep -v '^==' | grep . | tail -n 1)"
  kill -0 "$slurmd_pid" 2>/dev/null || skip "slurmd exited at start: $(tail -n 1 "$work/log/slurmd.out" "$work/log/slurmd.log" 2>/dev/null | grep -v '^==' | grep . | tail -n 1)"
  state=$(sinfo -h -N -o '%t' 2>/dev/null | head -n 1)
  if [[ $state == idle* || $state == mix* ]]; then ready=1; break; fi
  sleep 0.5
done
((ready)) || skip "the node did not come up within 30 s (state '${state:-none}'): $(grep -h -i error "$work"/log/*.log 2>/dev/null | tail -n 1)"

# The batch script of docs/SCALE.md, at CI size: 4 shards of 60 runs each.
cat >"$work/fuzz-array.sh" <<JOB
#!/bin/bash
#SBATCH --job-name=gfsl-fuzz
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$work/fz/slurm-%A_%a.out
exec "$gfsl" fuzz --backend host --shard auto --seconds 60 --max-runs 60 --max-ops 120 --progress off --out "$work/fz/shard-\$SLURM_ARRAY_TASK_ID"
JOB
timeout 180 sbatch --wait "$work/fuzz-array.sh" >"$work/sbatch.out" 2>&1 || fail "sbatch --wait: $(tail -n 1 "$work/sbatch.out")"

shards=("$work"/fz/shard-*)
((${#shards[@]} == 4)) || fail "expected 4 shard folders, found ${#shards[@]}: $(cat "$work"/fz/slurm-*.out 2>/dev/null | tail -n 3)"
"$gfsl" fuzz merge "${shards[@]}" --json "$work/merged.json" --junit "$work/merged.xml" >"$work/merge.out" 2>&1
rc=$?
((rc == 0)) || fail "gfsl fuzz merge exited $rc: $(tail -n 2 "$work/merge.out")"
grep -q '"campaigns":4,' "$work/merged.json" || fail "the merge does not hold 4 campaigns: $(head -c 300 "$work/merged.json")"
for i in 0 1 2 3; do
  grep -q "\"shard\":$i,\"shards\":4,\"seed\":1,\"source\":\"slurm " "$work/merged.json" || fail "shard $i/4 (source slurm) is missing from the merge"
done
runs=$(grep -o '"runs":[0-9]*' "$work/merged.json" | head -n 1 | cut -d: -f2)
((runs >= 4 * 60)) || fail "the merge counts $runs runs, expected at least 240"
grep -q '<testsuites name="gfsl-fuzz" tests="4" failures="0"' "$work/merged.xml" || fail "JUnit XML: $(head -n 2 "$work/merged.xml" | tail -n 1)"
echo "slurm-local-test: a 4-task array ran on a single-node Slurm ($(sinfo -V)); merged: $runs runs, 4 shards"
