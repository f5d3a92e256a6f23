#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a bounded time on a
# scratch copy of its seed corpus and regressions, so the repository is never written to.
# An input that crashes, hangs or breaks a property is saved under BUILD/artifacts/<target>/ and
# the run fails naming it: copy it into tests/fuzz/regressions/<target>/ with the fix.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET (60)] [TARGET ...]   (default: every target)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
build=${KINFORMER_FUZZ_BUILD:-build-fuzz}

mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKINFORMER_FUZZ=ON \
  -DKINFORMER_BUILD_TESTS=OFF -DKINFORMER_BUILD_BENCH=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target fuzz_all

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for dir in tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

failed=()
for target in "${targets[@]}"; do
  work=$(mktemp -d)
  cp tests/fuzz/corpus/"$target"/* "$work"/
  if [ -d tests/fuzz/regressions/"$target" ]; then cp tests/fuzz/regressions/"$target"/* "$work"/; fi
  mkdir -p "$build/artifacts/$target"
  echo "== fuzz_$target for ${seconds}s"
  # -timeout: an input taking 10 s is a hang; -rss_limit_mb: growth past 2 GB is a failure.
  # -seed: the same mutations in every run (KINFORMER_FUZZ_SEED=0 picks a random one).
  if ! "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
    -seed="${KINFORMER_FUZZ_SEED:-1}" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target/" \
    "$work" >"$build/artifacts/$target.log" 2>&1; then
    failed+=("$target")
    tail -n 60 "$build/artifacts/$target.log"
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/artifacts/$target.log" |
      tr '\n' ' '
    echo
  fi
  rm -rf "$work"
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]} (inputs in $build/artifacts/)" >&2
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets, ${seconds}s each, nothing found"
