//go:build race

package router_test

// raceDetector: this test binary runs under the race detector, about 3x
// slower a sequence; the property test then runs fewer sequences by
// default and `make test-unit` runs its 10,000 without it.
const raceDetector = true
