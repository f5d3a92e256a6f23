#!/usr/bin/env bash
# The test suite under the sanitizers, in a build folder of its own:
#   tests/sanitize.sh address   every test under ASan + UBSan (build-asan/)
# A sanitizer report fails the test that made it (halt_on_error), so ctest names it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: tests/sanitize.sh address}
jobs=$(nproc)

# -O1 -g1: quick to build, fast enough to run, and reports still name files and lines.
common=(-G Ninja -DKINFORMER_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1")
case "$mode" in
address)
  build=build-asan
  cmake -S . -B "$build" "${common[@]}" -DKINFORMER_SANITIZE=ON >/dev/null
  cmake --build "$build"
  # detect_leaks: CAF's and OpenSSL's process-lifetime singletons are not leaks worth failing on;
  # the tests' own objects are checked by ASan's use-after-free and overflow checks.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/ubsan.supp"
  ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 900
  ;;
*)
  echo "unknown mode $mode: address" >&2
  exit 2
  ;;
esac
