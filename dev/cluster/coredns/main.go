// CoreDNS for the local cluster (dev/cluster/build) with only the plugins its Corefile uses, so the build
// stays small (the full plugin set pulls in every cloud provider's SDK).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	// The order a query passes the plugins, as in CoreDNS's own plugin.cfg, limited to the ones built in.
	dnsserver.Directives = []string{"ready", "health", "errors", "log", "cache", "kubernetes", "loop", "forward"}
	coremain.Run()
}
