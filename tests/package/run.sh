#!/usr/bin/env bash
# The library as a user gets it: installs kinformer's build into a throwaway prefix, builds the
# examples out of tree against it twice (find_package(kinformer) and pkg-config), then runs the
# example controller from the installed package against the installed kubesim, driven by
# kubectl: a ConfigMap appears for a new Deployment, follows its changes, and an Event records
# each change; SIGTERM stops the controller cleanly.
#
#   tests/package/run.sh [BUILD_DIR]     (BUILD_DIR: a built kinformer tree, default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
die() { echo "package test: $*" >&2; exit 1; }
step() { echo "+ $*"; "$@"; }

prefix=$work/prefix
step cmake --install "$build" --prefix "$prefix" >/dev/null
[ -f "$prefix/include/kinformer/actors/controller/controller.hpp" ] || die "headers not installed"
[ -n "$(find "$prefix" -name kinformerConfig.cmake)" ] || die "no package config installed"

# 1. find_package(kinformer), as the examples' CMakeLists does out of tree. A configure that
#    warns is a failure: the package must find its dependencies quietly.
step cmake -S examples -B "$work/examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; die "configure failed"; }
if grep -q "CMake Warning" "$work/configure.log"; then
  cat "$work/configure.log"
  die "configuring the examples against the package warns"
fi
step cmake --build "$work/examples"
example=$work/examples/config-map-per-deployment/config-map-per-deployment

# 2. pkg-config: the same example compiled and linked from kinformer.pc alone.
pc_dir=$(dirname "$(find "$prefix" -name kinformer.pc)")
flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs kinformer)
step g++ -o "$work/config-map-per-deployment-pc" examples/config-map-per-deployment/*.cpp \
  -Iexamples/config-map-per-deployment $flags
"$work/config-map-per-deployment-pc" --help >/dev/null || die "the pkg-config build does not run"

# 3. The installed example against the installed simulator, through kubectl.
"$prefix/bin/kubesim" --listen 127.0.0.1:0 >"$work/kubesim.out" 2>"$work/kubesim.err" &
pids+=($!)
for _ in $(seq 100); do
  grep -q "listening on" "$work/kubesim.out" && break
  sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$work/kubesim.out")
[ -n "$url" ] || { cat "$work/kubesim.err"; die "kubesim did not start"; }
k() { kubectl --server="$url" "$@"; }

"$example" --server "$url" --workers 2 >"$work/example.out" 2>"$work/example.err" &
example_pid=$!
pids+=("$example_pid")

deployment() { # name replicas image
  cat <<EOF
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"$1","namespace":"default"},
 "spec":{"replicas":$2,"selector":{"matchLabels":{"app":"$1"}},
  "template":{"metadata":{"labels":{"app":"$1"}},
   "spec":{"containers":[{"name":"app","image":"$3"}]}}}}
EOF
}
# Waits (up to 30 s) until `kubectl get ARGS` prints WANT.
wait_for() {
  local want=$1
  shift
  local got=""
  for _ in $(seq 300); do
    got=$(k get "$@" 2>/dev/null || true)
    [ "$got" = "$want" ] && return 0
    sleep 0.1
  done
  echo "--- example stderr:" >&2
  cat "$work/example.err" >&2
  die "kubectl get $* printed '$got', not '$want'"
}

deployment web 3 nginx:1 | step k create --validate=false -f - >/dev/null
wait_for "3 nginx:1" configmap web-info -o 'jsonpath={.data.replicas} {.data.image}'
wait_for "Deployment web true" configmap web-info \
  -o 'jsonpath={.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}'
deployment web 5 nginx:2 | step k replace --validate=false -f - >/dev/null
wait_for "5 nginx:2" configmap web-info -o 'jsonpath={.data.replicas} {.data.image}'
wait_for "ConfigMapCreated ConfigMapUpdated" events.v1.events.k8s.io \
  --sort-by=.eventTime -o 'jsonpath={.items[*].reason}'
step k delete deployment web >/dev/null
wait_for "" configmaps -o 'jsonpath={.items[*].metadata.name}'

kill -TERM "$example_pid"
wait "$example_pid" || die "the example exited with $? on SIGTERM"
grep -q "reconciles succeeded" "$work/example.err" || { cat "$work/example.err"; die "no summary"; }
echo "package test: passed"
