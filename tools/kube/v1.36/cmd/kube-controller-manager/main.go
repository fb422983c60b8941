// The kube-controller-manager of the release this module pins. The differential tests run only
// its validatingadmissionpolicy-status-controller, which writes a policy's status.typeChecking.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
