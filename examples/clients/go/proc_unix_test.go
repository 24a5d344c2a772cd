//go:build unix

package clients

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd the leader of a new process group and has its
// cancellation kill the whole group (node --test runs each file in a child).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
