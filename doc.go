// Package gateway is the module root of the ACP chat gateway. It holds no
// code; it exists for repository-wide tests (package comments). See
// README.md and cmd/gateway.
package gateway
