#!/usr/bin/env bash
# Installs every build and runtime dependency of kinformer from Debian bookworm packages.
# Idempotent: skips apt entirely when everything is already present.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi

packages=(
  build-essential g++ cmake ninja-build pkg-config git ca-certificates
  libcaf-dev
  libboost1.81-dev libboost-json1.81-dev
  prometheus-cpp-dev
  catch2
  libyaml-cpp-dev
  libsimdjson-dev
  libzstd-dev # objects kept compressed (protocol/text_dictionary.cpp)
  libcli11-dev
  libssl-dev openssl
  curl # the real control plane's readiness probes and etcd compaction (tests/kube/controlplane.sh)
  clang-format
  clang libclang-rt-14-dev # the sanitizer suite and the fuzz targets (tests/sanitize.sh)
  lld                      # the linker (CMakeLists.txt)
  gnuplot-nox              # the benchmarks' and the soak's plots (tests/bench)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Node.js and npm run the real-client tests (client-node from the npm registry) and the
# benchmarks' peer. A machine's own Node.js (often not Debian's) is kept when it has both.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# kubectl, which the tests, the demo and the read API's users run: Debian's kubernetes-client is
# 1.20, too old for what the tests ask of it, so it is built from the pinned k8s.io/kubectl release
# with the machine's Go (tests/kube), once into a cache folder outside the tree, and linked where
# it comes first on PATH. The client-go and controller-runtime peers the tests run beside it come
# from the same module and folder.
kubectl_dir=$(bash "$top/tests/kube/build.sh" kubectl kube-informer cr-cache)
if [ "$(readlink /usr/local/bin/kubectl 2>/dev/null)" != "$kubectl_dir/kubectl" ]; then
  $SUDO ln -sf "$kubectl_dir/kubectl" /usr/local/bin/kubectl
fi
