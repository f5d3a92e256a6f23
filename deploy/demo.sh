#!/usr/bin/env bash
# The demo until kinformerd exists: the embedded API-server simulator with realistic pods and
# churn, and kinformer-watch running one informer against it over real HTTP, printing every delta.
# Ctrl-C stops both.
set -euo pipefail
build=${BUILD_DIR:-build}
pods=${PODS:-200}
churn=${CHURN:-20}

coproc SIM { exec "$build/app/kubesim" --listen 127.0.0.1:0 --pods "$pods" --namespaces 4 --churn "$churn"; }
sim_pid=$SIM_PID
trap 'kill "$sim_pid" 2>/dev/null || true' EXIT INT TERM
read -r first_line <&"${SIM[0]}"
url=${first_line#listening on }
echo "kubesim: $first_line ($pods pods, $churn changes/s); watching pods with kinformer-watch" >&2
"$build/app/kinformer-watch" --server "$url" --all-namespaces pods
