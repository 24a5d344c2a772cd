package stats

// Rate is what the spans have taught about one (target, upstream model)'s
// output rate as of an instant: output tokens per second after the first
// chunk (firstbyte.output_tokens_per_second), over the same live window as
// the latency samples. A unary answer gives no rate sample: its time to
// first byte is the whole answer.
//
// The percentiles follow one rule: of fewer than MinPercentileSamples
// samples a percentile is the largest sample; from there on it is element
// ⌊q·n⌋ of the samples sorted ascending.
type Rate struct {
	Samples            int
	P50, P75, P90, P99 float64 // tokens per second; 0 with no sample
}

// MinPercentileSamples is how many samples a percentile needs before it is
// read off its rank; below it, a percentile is the largest sample.
const MinPercentileSamples = 10

// OutputTokens is what the spans have taught about how long a client
// model's answers are: the median output length (gen_ai.usage.output_tokens)
// of its recent answers whose requested max_tokens fell in the request's
// power-of-two bucket, or of all its recent answers when that bucket holds
// fewer than MinPercentileSamples.
type OutputTokens struct {
	Median  float64 // tokens; 0 with no sample
	Samples int     // how many answers the median is over
	// Bucketed: the median is over the request's bucket alone.
	Bucketed bool
}
