// The kube-apiserver of the release this module pins, built from the published
// k8s.io/kubernetes module (no upstream source is kept in this repository).
// Only celgate's differential tests run it, on 127.0.0.1.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
