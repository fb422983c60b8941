// kubectl, built from its published module at the version go.mod pins, for the tests that install
// deploy/ as docs/deploy.md says (`kubectl apply -k`) against the real API server: CI machines have
// Go but no kubectl. One kubectl serves both releases tested (kubectl supports a server one minor
// older than itself).
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		cmdutil.CheckErr(err)
	}
}
