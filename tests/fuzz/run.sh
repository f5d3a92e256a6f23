#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time on a scratch copy of its seed corpus and
# regressions, so the repository is never written to; as many at once as there are cores. The
# targets are built in the ASan + UBSan tree (tests/sanitize.sh address-tree, clang), which the
# sanitizer suite shares. An input that crashes, hangs or breaks a property is saved under
# build-asan/artifacts/<target>/ and the run fails naming it: copy it into
# tests/fuzz/regressions/<target>/ with the fix.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET (60)] [TARGET ...]   (default: every target)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
build=build-asan

tests/sanitize.sh address-tree

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for dir in tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

# fuzz_one TARGET: one bounded run; its log in build-asan/artifacts/TARGET.log.
fuzz_one() {
  local target=$1 work
  work=$(mktemp -d)
  cp tests/fuzz/corpus/"$target"/* "$work"/
  if [ -d tests/fuzz/regressions/"$target" ]; then cp tests/fuzz/regressions/"$target"/* "$work"/; fi
  mkdir -p "$build/artifacts/$target"
  # -timeout: an input taking 10 s is a hang; -rss_limit_mb: growth past 2 GB is a failure.
  # -seed: the same mutations in every run (KINFORMER_FUZZ_SEED=0 picks a random one).
  local status=0
  "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
    -seed="${KINFORMER_FUZZ_SEED:-1}" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target/" \
    "$work" >"$build/artifacts/$target.log" 2>&1 || status=$?
  rm -rf "$work"
  return "$status"
}

jobs=$(nproc)
declare -A running=() # pid -> target
failed=()
# reap: waits for whichever running target ends first and reports it.
reap() {
  local pid status=0
  wait -n -p pid "${!running[@]}" || status=$?
  local target=${running[$pid]}
  unset "running[$pid]"
  if [ "$status" -eq 0 ]; then
    echo "== fuzz_$target for ${seconds}s: $(grep -E "stat::number_of_executed_units|stat::peak_rss_mb" \
      "$build/artifacts/$target.log" | tr '\n' ' ')"
  else
    failed+=("$target")
    echo "== fuzz_$target for ${seconds}s FAILED:"
    tail -n 60 "$build/artifacts/$target.log"
  fi
}
for target in "${targets[@]}"; do
  [ ${#running[@]} -lt "$jobs" ] || reap
  fuzz_one "$target" &
  running[$!]=$target
done
while [ ${#running[@]} -gt 0 ]; do reap; done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]} (inputs in $build/artifacts/)" >&2
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets, ${seconds}s each, ${jobs} at a time, nothing found"
