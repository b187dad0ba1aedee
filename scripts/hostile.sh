#!/usr/bin/env bash
# The hostile-input loop (docs/RELIABILITY.md): the host tools built with
# AddressSanitizer and UndefinedBehaviorSanitizer into ./build-asan; then the
# audits' reproductions, each a fixed input with the answer it must get; then
# damaged copies of valid inputs fed to every reader: binary traces and JSON
# lines (as files and on standard input), replay lines, stress replay lines,
# and campaign journals (gfsl fuzz merge). Any sanitizer report, any crash or
# exit code outside 0 to 3, or any refusal of more than one line fails the
# loop, keeping the input that did it under build-asan/hostile/.
#
#   scripts/hostile.sh [SECONDS]              the nightly form (default 600 s)
#   scripts/hostile.sh --rounds N [--seed S]  a budget in rounds, the damage
#                                             drawn from seed S (CI: the same
#                                             inputs on any machine)
#
# Exit codes: 0 clean; 1 a finding (printed, input kept); 2 the build failed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600 rounds_budget=0
case "${1:-}" in
  --rounds)
    rounds_budget=${2:?--rounds needs a count}
    [ "${3:-}" = --seed ] && RANDOM=${4:?--seed needs a number}
    ;;
  "") ;;
  *) seconds=$1 ;;
esac
build=build-asan
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# -O1 -g1: the sanitizers' reports with line tables, and less to compile than
# -O2 -g (the CI lane builds it on two cores).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=None -DGFSL_CUDA=OFF "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="$san -O1 -g1" -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null ||
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
started=$SECONDS
printable_args() { sed 's/\x1b/\\x1b/g' <<<"$1"; }
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

# The audits' reproductions: fixed inputs, each with the exit code it must
# get (a sanitizer report is 66, never expected).
expect() {
  local name=$1 want=$2 input=$3 rc=$4 out=$5
  judge "$name" "$input" "$rc" "$out"
  if [ "$rc" != "$want" ]; then
    findings=$((findings + 1))
    cp "$input" "$keep/$name-$findings" 2>/dev/null || true
    echo "hostile: $name: exit $rc, expected $want" >&2
    head -5 <<<"$out" >&2
  fi
}
# A version 3 trace with one section's length field set to 0 (the header,
# the final snapshot, the events): refused in one line, no sanitizer report.
for type in 1 3 5; do
  python3 - "$work/seed.trace" "$work/zero-$type.trace" "$type" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read()); want = int(sys.argv[3]); at = 16
while at + 16 <= len(b):
    t, n = struct.unpack_from('<I', b, at)[0], struct.unpack_from('<Q', b, at + 8)[0]
    if t == want:
        struct.pack_into('<Q', b, at + 8, 0)
        break
    at += 16 + n + 8
else:
    sys.exit('no section of type %d' % want)
open(sys.argv[2], 'wb').write(bytes(b))
PY
  out=$("$gfsl" check "$work/zero-$type.trace" 2>&1 >/dev/null) && rc=0 || rc=$?
  expect "zero-length-section-$type" 2 "$work/zero-$type.trace" "$rc" "$out"
done
# A control character given on the command line is printed escaped.
for args in "run --teams $(printf '\033')[2J" "check $work/seed.trace --model $(printf '\033')[2J" \
  "fuzz --shard 1/$(printf '\033')[2J --max-runs 1" "run --mix $(printf '\033')[2J"; do
  # shellcheck disable=SC2086
  out=$("$gfsl" $args 2>&1 >/dev/null) && rc=0 || rc=$?
  printf '%s' "$args" >"$work/args.txt"
  expect "escape-$(cut -d' ' -f1 <<<"$args")" 2 "$work/args.txt" "$rc" "$out"
  if [[ "$out" == *$'\033'* ]]; then
    findings=$((findings + 1))
    echo "hostile: gfsl $(printable_args "$args"): a raw ESC reached standard error" >&2
  fi
done

end=$((SECONDS + seconds))
rounds=0
while if [ "$rounds_budget" -gt 0 ]; then [ "$rounds" -lt "$rounds_budget" ]; else [ $SECONDS -lt $end ]; fi; do
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
echo "hostile: $rounds rounds in $((SECONDS - started)) s (7 readers each), $findings findings"
[ "$findings" = 0 ]
