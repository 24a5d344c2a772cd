package translate

import "strconv"

// Pieces every request encoder and answer writer shares: a text block, a
// cache mark, a message's path.

// appendTextBlock writes {"type":"text","text":TEXT} (and its cache mark),
// the text part of Chat and the text block of Messages alike.
func appendTextBlock(out, text, cache []byte) []byte {
	out = append(out, `{"type":"text","text":`...)
	out = append(out, text...)
	out = appendCacheControl(out, cache)
	return append(out, '}')
}

// appendCacheControl writes a cache_control member when there is one.
func appendCacheControl(out, cache []byte) []byte {
	if !present(cache) {
		return out
	}
	out = append(out, `,"cache_control":`...)
	return append(out, cache...)
}

// msgPath is where message i of a request stands.
func msgPath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

// itemPath is where input item j of a Responses request stands.
func itemPath(j int) string { return "input[" + strconv.Itoa(j) + "]" }
