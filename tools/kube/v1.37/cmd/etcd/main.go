// etcd at the version k8s.io/kubernetes of this release requires, as the
// storage of the test control plane.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
