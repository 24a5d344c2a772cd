package routinge2e

import (
	"cmp"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WriteCSV writes outs in the order they were sent, one request a line,
// for a closer look than the figures give: start and TTFB in milliseconds,
// status, the X-Firstbyte-* headers, the first pick, the upstream
// requests, and each of them as provider:status ("fast:401 mid:200").
func WriteCSV(w io.Writer, outs []Outcome) error {
	sorted := slices.SortedFunc(slices.Values(outs), func(a, b Outcome) int { return cmp.Compare(a.Start, b.Start) })
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"start_ms", "ttfb_ms", "status", "target", "selection", "attempts", "skipped", "first", "upstream", "hops"})
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	for _, o := range sorted {
		_ = cw.Write([]string{ms(o.Start), ms(o.TTFB), strconv.Itoa(o.Status), o.Target, o.Selection,
			strconv.Itoa(o.Attempts), strconv.Itoa(o.Skipped), o.First, strconv.Itoa(o.Upstream), hops(o.Hops)})
	}
	cw.Flush()
	return cw.Error()
}

// hops spells a request's upstream requests as provider:status, space-separated.
func hops(hs []Hop) string {
	var b strings.Builder
	for i, h := range hs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h.Target + ":" + strconv.Itoa(h.Status))
	}
	return b.String()
}
