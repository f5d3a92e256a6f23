// kubectl for the tests and the demo, built from the pinned k8s.io/kubectl release: Debian's
// kubernetes-client is 1.20, too old for server-side apply and the tables the read API serves.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
