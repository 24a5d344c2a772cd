package main

import "syscall"

// childAttr makes a child die with this process, whatever kills it (a
// panic in a worker goroutine, a SIGKILL), before any deferred cleanup can
// run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
