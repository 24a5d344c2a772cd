package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// The string contents and data: URLs that images and documents cross in.

// appendContents writes s as a JSON string; s is raw string contents when
// !escaped (copied as they are, even a megabyte of base64), else decoded text.
func appendContents(out, s []byte, escaped bool) []byte {
	if escaped {
		return jsonscan.AppendString(out, s)
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}

// dataURL splits data:MEDIA_TYPE[;params];base64,DATA.
func dataURL(u []byte) (mediaType, data []byte, ok bool) {
	if !bytes.HasPrefix(u, []byte("data:")) {
		return nil, nil, false
	}
	comma := bytes.IndexByte(u, ',')
	if comma < 0 {
		return nil, nil, false
	}
	meta := u[len("data:"):comma]
	if !bytes.HasSuffix(meta, []byte(";base64")) {
		return nil, nil, false
	}
	meta = meta[:len(meta)-len(";base64")]
	if semi := bytes.IndexByte(meta, ';'); semi >= 0 {
		meta = meta[:semi]
	}
	return meta, u[comma+1:], len(meta) > 0
}
