//go:build !race

package clustertest

const raceBuild = false
