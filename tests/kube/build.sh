#!/usr/bin/env bash
# Builds the Go programs of tests/kube into a cache folder outside the tree, once: the clients of
# this module (cmd/: kubectl, from the pinned k8s.io/kubectl release; the client-go and
# controller-runtime peers kube-informer and cr-cache) and the real control plane's
# servers of its controlplane/ module (etcd and kube-apiserver, from their pinned releases). Each
# module's folder is named by a hash of its go.mod, go.sum and sources, so a new pin or a changed
# program builds again and anything else reuses what is there. Prints the folder holding them.
#
#   tests/kube/build.sh [PROGRAM ...]   (default: every client under cmd/; the programs of one
#                                        call come from one module)
#   KINFORMER_CACHE   the cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kinformer)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
export PATH=$PATH:/usr/local/go/bin # where the Go toolchain's own tarball puts it
command -v go >/dev/null || {
  echo "tests/kube/build.sh: Go is missing (Go 1.26 builds kubectl and the real control plane)" >&2
  exit 1
}
cache=${KINFORMER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kinformer}
programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  for dir in cmd/*/; do programs+=("$(basename "$dir")"); done
fi
module=.
[ -d "cmd/${programs[0]}" ] || module=controlplane
for program in "${programs[@]}"; do
  [ -d "$module/cmd/$program" ] || {
    echo "tests/kube/build.sh: no program $program in $module/cmd/ (one module a call)" >&2
    exit 1
  }
done
cd "$module"
sources=(cmd)
[ -d internal ] && sources+=(internal)
key=$( (cat go.mod go.sum; find "${sources[@]}" -type f -name '*.go' | sort | xargs cat) | sha256sum | cut -c1-16)
bin=$cache/kube-$key

# The release the programs report: k8s.io/component-base's v0.Y.Z as v1.Y.Z (the servers' module
# replaces it with the same release the clients' requires).
release=$(go list -m -f '{{.Version}}' k8s.io/component-base)
release=v1.${release#v0.}
minor=${release#v1.}
minor=${minor%%.*}
stamp="-X k8s.io/component-base/version.gitVersion=$release -X k8s.io/component-base/version.gitMajor=1"
stamp+=" -X k8s.io/component-base/version.gitMinor=$minor"
stamp+=" -X k8s.io/client-go/pkg/version.gitVersion=$release -X k8s.io/client-go/pkg/version.gitMajor=1"
stamp+=" -X k8s.io/client-go/pkg/version.gitMinor=$minor"

mkdir -p "$bin"
for program in "${programs[@]}"; do
  [ -x "$bin/$program" ] && continue
  echo "tests/kube/build.sh: building $program into $bin (once)" >&2
  go build -trimpath -buildvcs=false -ldflags "-s -w $stamp" -o "$bin/$program.part" \
    "./cmd/$program"
  mv "$bin/$program.part" "$bin/$program"
done
echo "$bin"
