#!/usr/bin/env bash
# kinformer against the real control plane (tests/kube/controlplane.sh). The clients:
#   - kinformer-watch straight at kube-apiserver, with a plain list, with a streaming list, and
#     metadata-only (PartialObjectMetadata);
#   - kinformerd in front of it, started while kube-apiserver is down (it must wait, say why on
#     /readyz, and come up by itself), its read API checking tokens with TokenReview and
#     SubjectAccessReview upstream; read through it, with the admin's token, by client-go's
#     informer (tests/kube/cmd/kube-informer: plain list and watch asking for protobuf, a streaming
#     list, and metadata-only) and controller-runtime's cache (tests/kube/cmd/cr-cache).
# Beside the pods, KUBE_CONFIGMAPS ConfigMaps (default 500), a kind nothing writes during the run,
# read by kinformer-watch straight and by client-go through kinformerd: a quiet kind must come
# through the restarts and the compaction as well.
# Each client's printed state must equal the server's truth, object for object and
# resourceVersion for resourceVersion, after each of
#   1. the initial sync of KUBE_PODS realistic pods;
#   2. churn with kube-apiserver killed (kill -9) and started again in the middle of it;
#   3. the clients stalled (SIGSTOP) through churn, an etcd compaction and an API server restart,
#      so that the resourceVersion each direct client holds is gone (410) and it must relist;
# and every process must stop within 10 s of SIGTERM with exit code 0 (kinformerd first, with its
# readers still connected).
#
#   tests/kube/conformance.sh [BUILD_DIR]     (default: build; KUBE_PODS, default 2000)
#
# Go builds the servers, kube-load and the peers once (minutes on a fresh machine, then cached).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
pods=${KUBE_PODS:-2000}
configmaps=${KUBE_CONFIGMAPS:-500}
for program in kinformer-watch kinformerd; do
  [ -x "$build/app/$program" ] || { echo "conformance.sh: no $build/app/$program: build the tree first" >&2; exit 1; }
done
dir=$(mktemp -d /tmp/kinformer-conformance.XXXXXX)
declare -A pids   # every client process by name, kinformerd among them
declare -A kinds  # what a reader reads, when not pods
readers=()        # the clients whose delta lines are compared with the truth
direct=()         # the readers that talk to kube-apiserver itself

passed=false
cleanup() {
  for name in "${!pids[@]}"; do kill -KILL "${pids[$name]}" 2>/dev/null || true; done
  bash "$here/controlplane.sh" stop "$dir" || true
  if $passed; then rm -rf "$dir"; else echo "conformance.sh: logs and outputs kept in $dir" >&2; fi
}
trap cleanup EXIT
say() { echo "conformance.sh: $* (at ${SECONDS}s)" >&2; }
fail() { say "FAILED: $*"; exit 1; }

bash "$here/controlplane.sh" start "$dir"
tools=$(bash "$here/build.sh" kube-load)
peers=$(bash "$here/build.sh" kube-informer cr-cache)
load() { "$tools/kube-load" "$@" --kubeconfig "$dir/admin.kubeconfig"; }
load pods --count "$pods"
load configmaps --count "$configmaps"
admin_token=$(head -1 "$dir/tokens.csv" | cut -d, -f1)

# start_reader NAME PROGRAM ARGS...: a client whose stdout is delta lines.
start_reader() {
  local name=$1
  shift
  "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  pids[$name]=$!
  readers+=("$name")
}

# 1b: kinformerd is started while kube-apiserver is down.
start_kinformerd() {
  cat >"$dir/kinformerd.yaml" <<EOF
cluster:
  kubeconfig: $dir/admin.kubeconfig
informers:
  - resource: pods
  - resource: configmaps
listen:
  api: 127.0.0.1:0
  metrics: 127.0.0.1:0
EOF
  bash "$here/controlplane.sh" kill-apiserver "$dir"
  "$build/app/kinformerd" --config "$dir/kinformerd.yaml" 2>"$dir/kinformerd.err" &
  pids[kinformerd]=$!
  local start=$SECONDS
  until grep -q 'event=api_server_unreachable.*attempt=2 ' "$dir/kinformerd.err"; do
    kill -0 "${pids[kinformerd]}" 2>/dev/null || fail "kinformerd exited while kube-apiserver was down"
    [ $((SECONDS - start)) -lt 30 ] || fail "kinformerd did not report kube-apiserver unreachable"
    sleep 0.2
  done
  local metrics
  metrics=$(grep -o 'event=metrics_listening address=[^ ]*' "$dir/kinformerd.err" | cut -d= -f3)
  curl -s "http://$metrics/readyz" | grep -q 'waiting for the API server' ||
    fail "kinformerd's /readyz does not say it waits for the API server"
  bash "$here/controlplane.sh" start-apiserver "$dir"
  start=$SECONDS
  until grep -q 'event=api_listening' "$dir/kinformerd.err"; do
    [ $((SECONDS - start)) -lt 60 ] || fail "kinformerd did not come up once kube-apiserver was back"
    sleep 0.2
  done
  api="http://$(grep -o 'event=api_listening address=[^ ]*' "$dir/kinformerd.err" | cut -d= -f3)"
  say "kinformerd waited for kube-apiserver and serves its read API at $api"
}

start_clients() {
  start_kinformerd
  # kinformer-watch, like kubectl get -w, exits when it cannot reach the server at start.
  local watch=("$build/app/kinformer-watch" --kubeconfig "$dir/admin.kubeconfig" -A)
  start_reader watch-list "${watch[@]}" pods
  start_reader watch-streaming "${watch[@]}" --streaming-list pods
  start_reader watch-metadata "${watch[@]}" --metadata-only pods
  start_reader watch-configmaps "${watch[@]}" configmaps
  kinds[watch-configmaps]=configmaps
  direct=(watch-list watch-streaming watch-metadata)
  local through=(-s "$api" --token "$admin_token")
  start_reader client-go-protobuf "$peers/kube-informer" "${through[@]}" --protobuf --watch-list=false pods
  start_reader client-go-watch-list "$peers/kube-informer" "${through[@]}" --watch-list=true pods
  start_reader client-go-metadata "$peers/kube-informer" "${through[@]}" --metadata-only pods
  start_reader controller-runtime "$peers/cr-cache" "${through[@]}" pods
  start_reader client-go-configmaps "$peers/kube-informer" "${through[@]}" configmaps
  kinds[client-go-configmaps]=configmaps
}

# Waits until every reader's printed state equals the server's (bounded by the relist backoff, at
# most 60 s, and the time the server takes to answer).
require_converged() {
  local phase=$1 start=$SECONDS
  for name in "${readers[@]}"; do
    until load compare --deltas "$dir/$name.out" --resource "${kinds[$name]:-pods}" \
      >"$dir/compare-$name.txt" 2>&1; do
      if [ $((SECONDS - start)) -ge 120 ]; then
        cat "$dir/compare-$name.txt" >&2
        tail -5 "$dir/$name.err" >&2
        fail "after $phase: $name did not reach the server's truth"
      fi
      sleep 1
    done
    say "$phase: $name at the server's truth: $(tail -1 "$dir/compare-$name.txt")"
  done
}

# Sends SIGTERM to NAME and requires exit code 0 within 10 s.
require_stops() {
  local name=$1 pid=${pids[$1]} code=0
  kill -TERM "$pid"
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && fail "$name still running 10 s after SIGTERM"
  wait "$pid" || code=$?
  unset "pids[$name]"
  [ "$code" -eq 0 ] || fail "$name exited with $code on SIGTERM"
}

start_clients
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
# the server restarts again: the resourceVersion each direct client holds is older than anything
# the new server's watch cache has (410), so each must relist, and the deletes it missed come
# back as deletes of unknown final state. (The first restart cuts their connections before the
# churn, so no event of it waits in their sockets.)
unknown_deletes() { grep -c '"finalStateUnknown":true' "$dir/$1.out" || true; }
declare -A unknown_before
for name in "${!pids[@]}"; do kill -STOP "${pids[$name]}"; done
for name in "${direct[@]}"; do unknown_before[$name]=$(unknown_deletes "$name"); done
bash "$here/controlplane.sh" kill-apiserver "$dir"
bash "$here/controlplane.sh" start-apiserver "$dir"
load churn --rate 50 --duration 5s
bash "$here/controlplane.sh" compact "$dir"
bash "$here/controlplane.sh" kill-apiserver "$dir"
bash "$here/controlplane.sh" start-apiserver "$dir"
for name in "${!pids[@]}"; do kill -CONT "${pids[$name]}"; done
say "clients resumed after a restart, churn, compaction and another restart"
require_converged "a stall past compaction"
for name in "${direct[@]}"; do
  [ "$(unknown_deletes "$name")" -gt "${unknown_before[$name]}" ] ||
    fail "$name reached the truth without relisting (no delete of unknown final state)"
done

# kinformerd first, with its readers connected (an authenticated reader once kept it from stopping).
require_stops kinformerd
for name in "${readers[@]}"; do require_stops "$name"; done
passed=true
say "passed: $pods pods and $configmaps configmaps, every client at the server's truth after every phase, all stopped cleanly on SIGTERM"
