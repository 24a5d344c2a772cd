package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// writeRoutes adds check's lines for the routes and aliases: what serves
// which models, in the order they match.
func writeRoutes(w io.Writer, cfg *config.Config) {
	for i, r := range cfg.Routes {
		hedge := "off"
		if r.Hedge != nil && r.Hedge.Enabled {
			hedge = "after " + r.Hedge.After
		}
		targets := "every target serving them"
		if len(r.Targets) > 0 {
			targets = strings.Join(r.Targets, ", ")
		}
		fmt.Fprintf(w, "  routes[%d]  %s: mode %s, hedge %s, targets %s\n", i, strings.Join(r.Models, ", "), r.Mode, hedge, targets)
	}
	for _, a := range slices.Sorted(maps.Keys(cfg.Aliases)) {
		fmt.Fprintf(w, "  alias      %s -> %s\n", a, cfg.Aliases[a])
	}
}
