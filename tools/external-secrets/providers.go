// Package register, as the gateway's cluster suite builds the External Secrets Operator: with the test provider
// (`fake`) and the Kubernetes provider only, instead of every cloud's SDK. Replaces the module's
// pkg/provider/register/register.go at build time (tools/install-external-secrets).
package register

import (
	_ "github.com/external-secrets/external-secrets/pkg/provider/fake"
	_ "github.com/external-secrets/external-secrets/pkg/provider/kubernetes"
)
