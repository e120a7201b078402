//go:build unix

package acp

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a new process group, so that killing the
// group also ends what the agent started.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// terminateProcessGroup sends SIGTERM to cmd's process group.
func terminateProcessGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

// killProcessGroup sends SIGKILL to cmd's process group.
func killProcessGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// mayEnter reports whether this process may enter the directory path
// (search permission: a working directory without it fails the start).
func mayEnter(path string) bool {
	const searchOK = 0x1 // X_OK
	return syscall.Access(path, searchOK) == nil
}
