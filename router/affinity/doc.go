// Package affinity is the prompt-cache affinity: a request's prompt
// prefix (Of), and a Table of which target served each prefix last, which
// says whether that target should lead a request's order again (Lead) and
// learns from every attempt served (Record). The router builds the table
// for the latency modes and asks it while building a route.
package affinity
