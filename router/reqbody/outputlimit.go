package reqbody

import "strconv"

// OutputLimit is the request's own limit on its answer's length: the
// smallest positive integer of max_tokens, max_completion_tokens and
// max_output_tokens as they stand in the body; 0 when it sets none. The
// least-completion mode caps the answer length it expects by it, and the
// attempt spans carry it (gen_ai.request.max_tokens) so the answer
// lengths it predicts from are grouped by it.
func OutputLimit(f *Fields) int {
	limit := 0
	for _, v := range f.tokenLimits {
		if len(v) == 0 || v[0] < '1' || v[0] > '9' {
			continue // absent, not a positive number: the input checks' to judge
		}
		n, err := strconv.ParseFloat(string(v), 64)
		if err != nil || n < 1 || n > 1<<31 {
			continue
		}
		if limit == 0 || int(n) < limit {
			limit = int(n)
		}
	}
	return limit
}
