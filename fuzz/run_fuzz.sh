#!/usr/bin/env bash
# make fuzz's driver: runs every harness for SECONDS over its corpus and writes
# per harness the runs, executions per second and coverage to FINDINGS/summary.md.
#   fuzz/run_fuzz.sh HARNESS_DIR SECONDS FINDINGS [target...]
# For each target: FINDINGS/<target>/corpus holds the inputs the run added (the
# seed corpus fuzz/corpus/<target> is read, never written), FINDINGS/<target>/
# crash-*, timeout-*, oom-*, leak-* the inputs that broke it, log.txt libFuzzer's
# output. Fork mode with -ignore_*: one known crasher does not end the run, every
# distinct failure of the session is kept. FUZZ_FORK=0 in the environment runs
# libFuzzer's plain mode instead (stops at the first failure; the log then ends
# with -print_final_stats' stat:: block).
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 HARNESS_DIR SECONDS FINDINGS [target...]" >&2
  exit 2
fi
harness_dir=$1; seconds=$2; findings=$3; shift 3
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(schedule arch binary asm tensor)
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$findings"
summary=$findings/summary.md
{
  echo "# tessel fuzz: ${seconds} s per harness, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$src" rev-parse --short HEAD 2>/dev/null)"
  echo
  echo "| harness | runs | exec/s | cov | ft | corpus | crash | timeout | oom | new failure files |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} > "$summary"
status=0
for t in "${targets[@]}"; do
  bin=$harness_dir/fuzz_$t
  out=$findings/$t
  mkdir -p "$out/corpus"
  before=$(ls "$out" | grep -cE '^(crash|timeout|oom|leak)-')
  echo "fuzz_$t: ${seconds} s over fuzz/corpus/$t (log: $out/log.txt)"
  # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: over 2 GB is
  # a finding; -max_len: mutate inputs up to 16 KiB (the 160 KB nesting cases
  # are replayed whole by ctest -L fuzz).
  mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  [ "${FUZZ_FORK:-1}" = 0 ] && mode=()
  "$bin" "${mode[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$out/" \
    "$out/corpus" "$src/corpus/$t" > "$out/log.txt" 2>&1
  rc=$?
  # The last status line: fork mode "#RUNS: cov: C ft: F corp: N exec/s E
  # oom/timeout/crash: O/T/X time: Ss ...", plain mode "#RUNS<tab>DONE cov: C ft: F
  # corp: N/SIZE ... exec/s: E ..." (fork mode prints no stat:: block).
  last=$(grep -E '^#[0-9]+(:|\s).*cov:' "$out/log.txt" | tail -1)
  runs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<< "$last")
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<< "$last")
  eps=$(sed -nE 's/.* exec\/s:? ([0-9]+).*/\1/p' <<< "$last")
  otc=$(sed -nE 's/.* oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/p' <<< "$last")
  after=$(ls "$out" | grep -cE '^(crash|timeout|oom|leak)-')
  if [ -z "$otc" ]; then # plain mode: count what it wrote
    otc="$(ls "$out" | grep -c '^oom-')/$(ls "$out" | grep -c '^timeout-')/$(ls "$out" | grep -cE '^(crash|leak)-')"
  fi
  IFS=/ read -r ooms timeouts crashes <<< "$otc"
  echo "| fuzz_$t | ${runs:-?} | ${eps:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $crashes | $timeouts | $ooms | $((after - before)) |" >> "$summary"
  echo "  $last"
  if [ -z "$last" ] || [ "$rc" -ne 0 ] || [ "$after" -ne "$before" ]; then
    status=1
  fi
done
echo
cat "$summary"
[ $status -eq 0 ] || echo "fuzz: failures (or no stats) above; inputs in $findings/<target>/, see fuzz/README.md" >&2
exit $status
