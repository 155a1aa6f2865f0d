// etcd for the local cluster (dev/cluster/build): the published server module's own entry point, nothing
// added. Debian's etcd-server (3.4) is too old for kube-apiserver 1.37's watch progress requests.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
