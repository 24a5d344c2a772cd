//go:build !race

package router_test

// raceDetector: see race_on_test.go.
const raceDetector = false
