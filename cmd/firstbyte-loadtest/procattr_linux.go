package main

import "syscall"

// childAttr makes a child die with this process, whatever kills it (a
// panic in a worker goroutine, a SIGKILL), before any deferred cleanup can
// run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// openFilesLimit is how many files this process may open (RLIMIT_NOFILE,
// soft; Go raises it to the hard limit at start).
func openFilesLimit() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return l.Cur, true
}
