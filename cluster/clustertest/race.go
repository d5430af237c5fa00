//go:build race

package clustertest

// raceBuild is set when this package is built with -race: the gateway
// binary the harness builds is then race-built too.
const raceBuild = true
