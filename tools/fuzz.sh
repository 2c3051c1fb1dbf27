#!/usr/bin/env bash
# A fuzz campaign: every libFuzzer target of the `fuzz` preset at once, each with J processes
# (libFuzzer's fork mode) for N seconds, on the corpus the preset's ctest runs share
# (build/fuzz/tests/fuzz/corpus/), seeded with the preset's seeds and the past findings under
# tests/fuzz/regressions/. At the end it prints executions, coverage and findings per target;
# a finding's input is saved under build/fuzz/tests/fuzz/findings/campaign-<time>/.
# Exit status: 0 if nothing was found, 1 if anything was (a crash, a sanitizer report, a
# timeout or an out-of-memory), 2 on a usage error.
#
#   tools/fuzz.sh [--seconds N] [--jobs J] [--targets a,b,...]
#
# Builds the preset first if needed (clang, ASan + UBSan; its seeds are compiled by Kiln's
# Python package, so the venv of tools/setup.sh is used, or KILN_PYTHON). CI runs each target
# for a minute through ctest; run this for minutes before changing a parser, the virtual NPU
# or a delegate. J processes per target: 5 targets x J should be about the machine's cores.
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$KILN_ROOT/build/fuzz"
FUZZ_DIR="$BUILD/tests/fuzz"
SECONDS_PER_TARGET=600
JOBS=1
# target -> corpus/seed folder name (as in tests/fuzz/CMakeLists.txt).
ALL_TARGETS=(program ethos_u_payload vnpu_command_stream npu_device_registers xnnpack_payload)
TARGETS=("${ALL_TARGETS[@]}")

usage() { echo "usage: tools/fuzz.sh [--seconds N] [--jobs J] [--targets a,b,...]  (targets: ${ALL_TARGETS[*]})" >&2; exit 2; }
log() { printf '\033[1m[kiln fuzz]\033[0m %s\n' "$*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_TARGET="${2:?--seconds needs a number}"; shift 2 ;;
    --jobs) JOBS="${2:?--jobs needs a number}"; shift 2 ;;
    --targets) IFS=, read -r -a TARGETS <<<"${2:?--targets needs a list}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "tools/fuzz.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$SECONDS_PER_TARGET" =~ ^[1-9][0-9]*$ ]] || { echo "tools/fuzz.sh: --seconds must be a positive number" >&2; exit 2; }
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "tools/fuzz.sh: --jobs must be a positive number" >&2; exit 2; }
for t in "${TARGETS[@]}"; do
  [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "tools/fuzz.sh: unknown target '$t' (targets: ${ALL_TARGETS[*]})" >&2; exit 2; }
done

# The Python that compiles the seeds: KILN_PYTHON, else the set-up venv (made if missing).
if [ -z "${KILN_PYTHON:-}" ]; then
  [ -x "$KILN_ROOT/.venv/bin/python" ] || bash "$KILN_ROOT/tools/setup.sh"
  KILN_PYTHON="$KILN_ROOT/.venv/bin/python"
fi
cd "$KILN_ROOT"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  log "configuring the fuzz preset"
  cmake --preset fuzz -DKILN_PYTHON="$KILN_PYTHON" >/dev/null
fi
log "building the fuzz preset"
cmake --build --preset fuzz
# Seeds: real programs compiled by Kiln (slow: once), the XNNPACK test payloads.
if [ -z "$(ls -A "$FUZZ_DIR/seeds/program" 2>/dev/null)" ] || [ -z "$(ls -A "$FUZZ_DIR/seeds/npu_device_registers" 2>/dev/null)" ] ||
   [ -z "$(ls -A "$FUZZ_DIR/seeds/xnnpack_payload" 2>/dev/null)" ]; then
  log "writing the seeds"
  ctest --test-dir "$BUILD" -R '^fuzz_(xnnpack_)?seeds$' --output-on-failure >/dev/null
fi

CAMPAIGN="$FUZZ_DIR/findings/campaign-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$CAMPAIGN"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$KILN_ROOT/tests/fuzz/known_findings.supp"
unset KILN_FUZZ_LOG  # the runtime's log would slow every target a hundredfold

pids=()
for t in "${TARGETS[@]}"; do
  binary="$FUZZ_DIR/fuzz_$t"
  if [ ! -x "$binary" ]; then
    log "fuzz_$t was not built (XNNPACK not found?): skipped"
    continue
  fi
  mkdir -p "$FUZZ_DIR/corpus/$t"
  dirs=("$FUZZ_DIR/corpus/$t" "$FUZZ_DIR/seeds/$t")
  [ -d "tests/fuzz/regressions/$t" ] && dirs+=("tests/fuzz/regressions/$t")
  # Fork mode: J child processes share the corpus and the coverage; a crash, timeout or
  # out-of-memory is saved and counted, and fuzzing goes on.
  "$binary" -fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$CAMPAIGN/fuzz_$t-" "${dirs[@]}" >"$CAMPAIGN/fuzz_$t.log" 2>&1 &
  pids+=($!)
done
log "${#pids[@]} targets x $JOBS processes for ${SECONDS_PER_TARGET} s; logs in $CAMPAIGN"
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done

# libFuzzer's fork mode prints "#EXECS: cov: C ft: F corp: N exec/s E oom/timeout/crash: O/T/C".
printf '\n%-28s %12s %8s %8s %8s  %s\n' target executions edges features corpus findings
found=0
for t in "${TARGETS[@]}"; do
  logfile="$CAMPAIGN/fuzz_$t.log"
  [ -f "$logfile" ] || continue
  last=$(awk '/^#[0-9]+: cov:/ { line = $0 } END { print line }' "$logfile")
  execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
  cov=$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$last")
  ft=$(sed -E 's/.* ft: ([0-9]+).*/\1/' <<<"$last")
  corp=$(sed -E 's/.* corp: ([0-9]+).*/\1/' <<<"$last")
  n=$(find "$CAMPAIGN" -maxdepth 1 -name "fuzz_$t-*" -type f | wc -l)
  found=$((found + n))
  printf '%-28s %12s %8s %8s %8s  %s\n' "fuzz_$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$n"
done
if [ "$found" -gt 0 ]; then
  log "$found finding(s): $(find "$CAMPAIGN" -maxdepth 1 -name 'fuzz_*-*' -type f | tr '\n' ' ')"
  log "reproduce one with: $FUZZ_DIR/fuzz_<target> <file> (KILN_FUZZ_LOG=1 prints the runtime's log)"
  exit 1
fi
[ "$status" -eq 0 ] || { log "a fuzz process failed: see the logs in $CAMPAIGN"; exit 1; }
log "nothing found"
