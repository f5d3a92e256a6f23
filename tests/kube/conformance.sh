#!/usr/bin/env bash
# kinformer-watch against the real control plane (tests/kube/controlplane.sh): it must end at the
# server's truth, pod for pod and resourceVersion for resourceVersion, after each of
#   1. the initial sync of KUBE_PODS realistic pods (a plain list, and a streaming list);
#   2. churn with kube-apiserver killed (kill -9) and started again in the middle of it;
#   3. a client stalled (SIGSTOP) through churn, an etcd compaction and an API server restart,
#      so that its resourceVersion is gone (410) and it must relist;
# and stop within 10 s of SIGTERM with exit code 0.
#
#   tests/kube/conformance.sh [BUILD_DIR]     (default: build; KUBE_PODS, default 2000)
#
# Go builds the servers and kube-load once (minutes on a fresh machine, then cached).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
pods=${KUBE_PODS:-2000}
watch_bin=$build/app/kinformer-watch
[ -x "$watch_bin" ] || { echo "conformance.sh: no $watch_bin: build the tree first" >&2; exit 1; }
dir=$(mktemp -d /tmp/kinformer-conformance.XXXXXX)
variants=(list streaming)
declare -A watchers

passed=false
cleanup() {
  for v in "${!watchers[@]}"; do kill -KILL "${watchers[$v]}" 2>/dev/null || true; done
  bash "$here/controlplane.sh" stop "$dir" || true
  if $passed; then rm -rf "$dir"; else echo "conformance.sh: logs and outputs kept in $dir" >&2; fi
}
trap cleanup EXIT
say() { echo "conformance.sh: $* (at ${SECONDS}s)" >&2; }

bash "$here/controlplane.sh" start "$dir"
load() { "$tools/kube-load" "$@" --kubeconfig "$dir/admin.kubeconfig"; }
tools=$(bash "$here/build.sh" kube-load)
load pods --count "$pods"

start_watchers() {
  for v in "${variants[@]}"; do
    local extra=()
    [ "$v" = streaming ] && extra=(--streaming-list)
    "$watch_bin" --kubeconfig "$dir/admin.kubeconfig" -A "${extra[@]}" pods \
      >"$dir/watch-$v.out" 2>"$dir/watch-$v.err" &
    watchers[$v]=$!
  done
}

# Waits until every watcher's printed state equals the server's (bounded by its relist backoff,
# at most 60 s, and the time the server takes to answer).
require_converged() {
  local phase=$1 start=$SECONDS
  for v in "${variants[@]}"; do
    until load compare --deltas "$dir/watch-$v.out" >"$dir/compare-$v.txt" 2>&1; do
      if [ $((SECONDS - start)) -ge 120 ]; then
        say "FAILED after $phase: kinformer-watch ($v) did not reach the server's truth"
        cat "$dir/compare-$v.txt" >&2
        tail -5 "$dir/watch-$v.err" >&2
        exit 1
      fi
      sleep 1
    done
    say "$phase: kinformer-watch ($v) at the server's truth: $(tail -1 "$dir/compare-$v.txt")"
  done
}

start_watchers
require_converged "initial sync"

# 2: the API server dies (kill -9) in the middle of churn and comes back.
load churn --rate 50 --duration 20s &
churner=$!
sleep 6
bash "$here/controlplane.sh" kill-apiserver "$dir"
say "kube-apiserver killed"
sleep 3
bash "$here/controlplane.sh" start-apiserver "$dir"
wait "$churner"
require_converged "churn through an API server restart"

# 3: the clients stall (SIGSTOP) while the API server restarts, churn goes on, etcd compacts and
# the server restarts again: the resourceVersion each holds is older than anything the new
# server's watch cache has (410), so each must relist, and the deletes it missed come back as
# deletes of unknown final state. (The first restart cuts their connections before the churn, so
# no event of it waits in their sockets.)
unknown_deletes() { grep -c '"finalStateUnknown":true' "$dir/watch-$1.out" || true; }
declare -A unknown_before
for v in "${variants[@]}"; do
  kill -STOP "${watchers[$v]}"
  unknown_before[$v]=$(unknown_deletes "$v")
done
bash "$here/controlplane.sh" kill-apiserver "$dir"
bash "$here/controlplane.sh" start-apiserver "$dir"
load churn --rate 50 --duration 5s
bash "$here/controlplane.sh" compact "$dir"
bash "$here/controlplane.sh" kill-apiserver "$dir"
bash "$here/controlplane.sh" start-apiserver "$dir"
for v in "${variants[@]}"; do kill -CONT "${watchers[$v]}"; done
say "clients resumed after a restart, churn, compaction and another restart"
require_converged "a stall past compaction"
for v in "${variants[@]}"; do
  if [ "$(unknown_deletes "$v")" -le "${unknown_before[$v]}" ]; then
    say "FAILED: kinformer-watch ($v) reached the truth without relisting (no delete of unknown final state)"
    exit 1
  fi
done

for v in "${variants[@]}"; do
  pid=${watchers[$v]}
  kill -TERM "$pid"
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "FAILED: kinformer-watch ($v) still running 10 s after SIGTERM"
    exit 1
  fi
  code=0
  wait "$pid" || code=$?
  unset "watchers[$v]"
  [ "$code" -eq 0 ] || { say "FAILED: kinformer-watch ($v) exited with $code on SIGTERM"; exit 1; }
done
passed=true
say "passed: $pods pods, every phase at the server's truth, both stopped cleanly on SIGTERM"
