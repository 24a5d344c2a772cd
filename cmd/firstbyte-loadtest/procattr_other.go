//go:build !linux

package main

import "syscall"

// childAttr: no parent-death signal outside Linux. The load test refuses
// to run there anyway (it reads /proc); this keeps the package building.
func childAttr() *syscall.SysProcAttr { return nil }

// openFilesLimit: unknown outside Linux.
func openFilesLimit() (uint64, bool) { return 0, false }
