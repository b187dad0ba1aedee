#!/usr/bin/env bash
# The hostile-input loop (docs/RELIABILITY.md): the host tools built with
# AddressSanitizer and UndefinedBehaviorSanitizer into ./build-asan, then, for
# SECONDS (default 600), damaged copies of valid inputs fed to every reader:
# binary traces and JSON lines (as files and on standard input), replay
# lines, stress replay lines, and campaign journals (gfsl fuzz merge). Any sanitizer report, any
# crash or exit code outside 0 to 3, or any refusal of more than one line
# fails the loop, keeping the input that did it under build-asan/hostile/.
# Meant for a nightly job: it takes longer than scripts/test.sh's budget.
#
# Exit codes: 0 clean; 1 a finding (printed, input kept); 2 the build failed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
build=build-asan
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFSL_CUDA=OFF "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null ||
  { echo "hostile: cannot configure $build" >&2; exit 2; }
cmake --build "$build" -j"$(nproc)" --target gfsl >/dev/null || { echo "hostile: cannot build gfsl in $build" >&2; exit 2; }

# 66: a sanitizer report (distinct from every gfsl exit code).
export ASAN_OPTIONS="exitcode=66 detect_leaks=0 abort_on_error=0"
export UBSAN_OPTIONS="exitcode=66 halt_on_error=1 print_stacktrace=1"
gfsl="$PWD/$build/gfsl"
keep="$PWD/$build/hostile"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$keep"

# Seeds: a binary trace with snapshots and events, its JSON lines, a replay
# line, a stress replay line (stress prints one under each violation: a
# seeded bug makes some), and a campaign folder with its journal.
"$gfsl" run --backend host --teams 4 --ops 400 --range 40 --seed 5 --events on --trace "$work/seed.trace" >"$work/run.txt"
"$gfsl" convert "$work/seed.trace" "$work/seed.jsonl" >/dev/null
replay=$(grep -o 'gfsl1:[^ ]*' "$work/run.txt" | head -1)
"$gfsl" stress --backend host --variant thesis --granularity lane --range 36 --writers 1/4 --seconds 3600 --max-structures 2 \
  --mutant insert-without-duplicate-check --progress off >"$work/stress.txt" 2>&1 || true
stress_replay=$(grep -m 1 -o 'gfsl-stress1:[^ ]*' "$work/stress.txt" || true)
[ -n "$replay" ] && [ -n "$stress_replay" ] || { echo "hostile: no replay line to start from" >&2; exit 2; }
"$gfsl" fuzz --backend host --seconds 5 --max-runs 20 --seed 1 --progress off --out "$work/campaign" >/dev/null

# damage IN OUT: 1 to 8 random bytes changed, sometimes cut, sometimes a
# run of a byte repeated (a section or line duplicated in part).
damage() {
  python3 - "$1" "$2" "$RANDOM$RANDOM" <<'PY'
import random, sys
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = random.Random(seed)
b = bytearray(open(src, 'rb').read())
for _ in range(r.randint(1, 8)):
    if b: b[r.randrange(len(b))] = r.randrange(256)
if b and r.random() < 0.25: del b[r.randrange(len(b)):]
if b and r.random() < 0.2:
    i = r.randrange(len(b)); j = min(len(b), i + r.randint(1, 64)); b[j:j] = b[i:j]
if r.random() < 0.1: b += bytes([r.randrange(256)]) * r.randint(1, 64)
open(dst, 'wb').write(bytes(b))
PY
}

findings=0
# judge NAME INPUT RC OUTPUT: a finding unless 0..3 and at most one line on a refusal.
judge() {
  local name=$1 input=$2 rc=$3 out=$4
  local lines
  lines=$(grep -c '' <<<"$out" || true)
  if [ "$rc" -gt 3 ] || { [ "$rc" = 2 ] && [ "$lines" -gt 1 ]; }; then
    findings=$((findings + 1))
    local kept="$keep/$name-$findings"
    cp "$input" "$kept" 2>/dev/null || true
    echo "hostile: $name: exit $rc on $kept" >&2
    head -20 <<<"$out" >&2
  fi
}

end=$((SECONDS + seconds))
rounds=0
while [ $SECONDS -lt $end ]; do
  rounds=$((rounds + 1))
  damage "$work/seed.trace" "$work/t.trace"
  out=$("$gfsl" check "$work/t.trace" 2>&1 >/dev/null) && rc=0 || rc=$?; judge check-binary "$work/t.trace" $rc "$out"
  out=$("$gfsl" check - <"$work/t.trace" 2>&1 >/dev/null) && rc=0 || rc=$?; judge check-binary-stdin "$work/t.trace" $rc "$out"
  damage "$work/seed.jsonl" "$work/t.jsonl"
  out=$("$gfsl" check "$work/t.jsonl" 2>&1 >/dev/null) && rc=0 || rc=$?; judge check-json "$work/t.jsonl" $rc "$out"
  out=$("$gfsl" convert "$work/t.jsonl" "$work/o.trace" 2>&1 >/dev/null) && rc=0 || rc=$?; judge convert-json "$work/t.jsonl" $rc "$out"
  printf '%s' "$replay" >"$work/r.txt"
  damage "$work/r.txt" "$work/r2.txt"
  out=$(timeout 60 "$gfsl" replay "$(tr -d '\0\n' <"$work/r2.txt")" 2>&1 >/dev/null) && rc=0 || rc=$?; judge replay "$work/r2.txt" $rc "$out"
  printf '%s' "$stress_replay" >"$work/s.txt"
  damage "$work/s.txt" "$work/s2.txt"
  out=$(timeout 60 "$gfsl" stress --progress off --replay "$(tr -d '\0\n' <"$work/s2.txt")" 2>&1 >/dev/null) && rc=0 || rc=$?; judge stress-replay "$work/s2.txt" $rc "$out"
  rm -rf "$work/c2" && cp -r "$work/campaign" "$work/c2"
  damage "$work/campaign/journal.jsonl" "$work/c2/journal.jsonl"
  out=$(timeout 60 "$gfsl" fuzz merge "$work/c2" 2>&1 >/dev/null) && rc=0 || rc=$?; judge merge-journal "$work/c2/journal.jsonl" $rc "$out"
done
echo "hostile: $rounds rounds in ${seconds} s (7 readers each), $findings findings"
[ "$findings" = 0 ]
