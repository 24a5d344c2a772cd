package router

// Hedging (strategy.hedge): a late attempt gets a hedge beside it and the
// first valid first byte serves (race.go is the race, race_gateway.go
// runs it with real attempts); mode.Hedging is the policy: how late is
// late, and whether the budget allows one more.

// Hedge results (the request span's firstbyte.hedge, X-Firstbyte-Hedged,
// firstbyte_hedges_total{result}).
const (
	HedgeWon    = "won"    // a hedge served the request
	HedgeLost   = "lost"   // the first attempt served it (a race that served nothing is neither)
	HedgeDenied = "denied" // one was due, and the budget refused it
)

// HeaderHedged says, on a request that had a hedge, whether it served.
const HeaderHedged = "X-Firstbyte-Hedged"
