// Package register, as the gateway's cluster suite builds the External Secrets Operator: with the password
// generator only. Replaces the module's pkg/generator/register/register.go at build time
// (tools/install-external-secrets).
package register

import (
	_ "github.com/external-secrets/external-secrets/pkg/generator/password"
)
