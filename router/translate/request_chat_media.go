package translate

import (
	"bytes"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Images and documents in an OpenAI request, as Anthropic blocks.

// stringContents returns what the string token v holds, decoded only when it
// has escapes (the common case copies nothing), and whether it had any.
func stringContents(v []byte) (s []byte, escaped bool) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, false
	}
	return jsonscan.AppendUnquoted(nil, v), true
}

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

// image writes an OpenAI image_url ({"url","detail"}, or the bare URL string
// older clients send) as an Anthropic image block; detail is dropped.
func (t *turns) image(iu, cache []byte, path string) error {
	url := iu
	if isObject(iu) {
		url, path = jsonscan.Field(iu, "url"), path+".url"
	}
	if !isString(url) {
		return refuse(path, "must be a string")
	}
	u, escaped := stringContents(url)
	if mt, data, ok := dataURL(u); ok {
		t.block()
		t.out = append(t.out, `{"type":"image","source":{"type":"base64","media_type":`...)
		t.out = appendContents(t.out, mt, escaped)
		t.out = append(t.out, `,"data":`...)
		t.out = appendContents(t.out, data, escaped)
		t.out = append(t.out, '}')
		t.out = appendCacheControl(t.out, cache)
		t.out = append(t.out, '}')
		return nil
	}
	if bytes.HasPrefix(u, []byte("https://")) || bytes.HasPrefix(u, []byte("http://")) {
		t.block()
		t.out = append(t.out, `{"type":"image","source":{"type":"url","url":`...)
		t.out = append(t.out, url...)
		t.out = append(t.out, '}')
		t.out = appendCacheControl(t.out, cache)
		t.out = append(t.out, '}')
		return nil
	}
	return refuse(path, "must be an http(s) URL or a data:MEDIA_TYPE;base64, URL")
}

// file writes an OpenAI file part holding a PDF as a data URL as an Anthropic
// document block; files by id live in OpenAI's storage and cannot cross over.
func (t *turns) file(f, cache []byte, path string) error {
	data := jsonscan.Field(f, "file_data")
	if !isString(data) {
		return refuse(path, "only a PDF given inline as file_data translates for an Anthropic upstream")
	}
	u, escaped := stringContents(data)
	mt, b64, ok := dataURL(u)
	if !ok || string(mt) != "application/pdf" {
		return refuse(path+".file_data", "must be a data:application/pdf;base64, URL")
	}
	t.block()
	t.out = append(t.out, `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":`...)
	t.out = appendContents(t.out, b64, escaped)
	t.out = append(t.out, '}')
	if name := jsonscan.Field(f, "filename"); isString(name) {
		t.out = append(t.out, `,"title":`...)
		t.out = append(t.out, name...)
	}
	t.out = appendCacheControl(t.out, cache)
	t.out = append(t.out, '}')
	return nil
}
