#!/usr/bin/env bash
# Real clients through kinformerd's read API (real_clients.mjs says what runs and what is checked).
#
#   tests/service/real_clients/run.sh BUILD_DIR
#
# Installs @kubernetes/client-node 1.4.0 from the npm registry into BUILD_DIR/real-clients-npm
# (once; kept for later runs), then runs the scenario with the build's kubesim, kinformerd and
# kinformer-watch, and the client-go and controller-runtime peers of tests/kube (built there by
# deploy/install-deps.sh; tests/kube/build.sh prints their folder). Needs node, npm and Go
# (deploy/install-deps.sh installs them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
npm_dir=$build/real-clients-npm
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "real_clients: $tool is not on PATH" >&2; exit 1; }
done
if [[ ! -d $npm_dir/node_modules/@kubernetes/client-node ]]; then
  mkdir -p "$npm_dir"
  cp "$here/package.json" "$npm_dir/"
  npm install --no-audit --no-fund --prefix "$npm_dir" >"$npm_dir/npm.log" 2>&1 ||
    { echo "real_clients: npm install failed:" >&2; tail -n 20 "$npm_dir/npm.log" >&2; exit 1; }
fi
kube_bin=$(bash "$here/../../kube/build.sh" kube-informer cr-cache) ||
  { echo "real_clients: the Go peers (tests/kube) could not be built" >&2; exit 1; }
# ES modules resolve packages from the importing file's folder: run the script from there.
cp "$here/real_clients.mjs" "$npm_dir/"
exec node "$npm_dir/real_clients.mjs" --bin "$build/app" --kube-bin "$kube_bin" "${@:2}"
