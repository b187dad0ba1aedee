#!/usr/bin/env bash
# A fresh machine's first run: installs what is missing, builds the host-only
# gfsl (no CUDA, no tests: a few minutes), then shows what the testbed is for,
# on the CPU:
#   1. the published algorithm (--variant thesis), its chunks read lane by
#      lane as a GPU may read them: a campaign finds its torn-read bug,
#      shrinks it to a handful of operations and explains it;
#   2. the failure's replay line fails again, bit for bit;
#   3. the default variant (robust) passes the same campaign;
#   4. a concurrent run of 8 teams, its history recorded and checked
#      linearizable by gfsl check.
# Everything it writes goes to demo/ (replaced on each run).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/install-deps.sh
[[ -x /usr/local/cuda/bin/nvcc && ":$PATH:" != *":/usr/local/cuda/bin:"* ]] && export PATH="/usr/local/cuda/bin:$PATH"
echo "== building the host-only gfsl into build/ (scripts/build.sh adds the CUDA backend and the tests)"
# Release at -O2: no debug information, less to compile (docs/BUILD.md).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DGFSL_CUDA=OFF -DGFSL_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target gfsl >/dev/null
echo "   built in $((SECONDS - start)) s"
gfsl=build/gfsl
rm -rf demo
mkdir -p demo
say() { printf '\n== %s\n$ %s\n' "$1" "${*:2}"; }

# One campaign, two variants: the same seed and the same 300 runs.
campaign=(fuzz --granularity lane --seed 1 --max-runs 300 --seconds 120 --shrink-seconds 20 --progress off)

say "1. the published algorithm, chunks read lane by lane (a bug is expected: exit 1)" \
  gfsl "${campaign[@]}" --variant thesis --out demo/thesis
rc=0
"$gfsl" "${campaign[@]}" --variant thesis --out demo/thesis || rc=$?
[[ $rc -eq 1 ]] || { echo "demo: the published algorithm was expected to fail (exit 1), got exit $rc" >&2; exit 1; }
failure=$(find demo/thesis -mindepth 1 -maxdepth 1 -type d -name 'failure-*' | head -n 1)
if [[ -f $failure/interleaving.txt ]]; then
  printf '\n-- why: the torn read, from %s/interleaving.txt\n' "$failure"
  # The read that gave the wrong answer is the last torn one: the writes
  # that landed between its lanes, then the read.
  last=$(grep -n "TORN" "$failure/interleaving.txt" | tail -n 1 | cut -d: -f1)
  if [[ -n $last ]]; then
    sed -n "$((last > 5 ? last - 5 : 1)),${last}p" "$failure/interleaving.txt"
  else
    tail -n 8 "$failure/interleaving.txt"
  fi
fi
echo "-- the whole counterexample, one page: $failure/counterexample.html"

replay=$(sed -n 's/^.*\(gfsl1:[^ ]*\).*$/\1/p' "$failure/replay.txt" | head -n 1)
say "2. its replay line fails again, bit for bit (exit 1)" gfsl replay "${replay:0:60}..."
rc=0
"$gfsl" replay "$replay" >demo/replay.txt 2>&1 || rc=$?
grep -m2 -E "linearizab|FAIL" demo/replay.txt || true
[[ $rc -eq 1 ]] || { echo "demo: the replay was expected to fail again (exit 1), got exit $rc" >&2; exit 1; }

say "3. the same campaign on the default variant, robust (must pass)" gfsl "${campaign[@]}" --out demo/robust
"$gfsl" "${campaign[@]}" --out demo/robust

say "4. a concurrent run of 8 teams, its history recorded" \
  gfsl run --ops 20000 --mix 20,20,60 --range 1000 --seed 1 --trace demo/run.gfsl
"$gfsl" run --ops 20000 --mix 20,20,60 --range 1000 --seed 1 --trace demo/run.gfsl
say "5. ... and judged" gfsl check demo/run.gfsl
"$gfsl" check demo/run.gfsl
printf '\ndemo: done in %d s; next: README.md ("A tour"), docs/CLI.md, scripts/test.sh\n' $((SECONDS - start))
