//go:build unix

package main

import "syscall"

// fdLimit is how many files the process may open (RLIMIT_NOFILE, soft).
func fdLimit() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return uint64(l.Cur), true
}
