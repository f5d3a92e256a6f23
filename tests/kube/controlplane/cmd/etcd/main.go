// etcd, built from the pinned go.etcd.io/etcd/server/v3 release (go.mod): the store behind the
// real kube-apiserver of tests/kube/controlplane.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
