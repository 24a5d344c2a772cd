//go:build !unix

package clients

import "os/exec"

// ownProcessGroup is a no-op where process groups are not available: the
// command itself is killed on cancellation, its children may outlive it.
func ownProcessGroup(*exec.Cmd) {}
