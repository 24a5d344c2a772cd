package main

import "syscall"

// childAttr makes a child die with this process, whatever kills it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
