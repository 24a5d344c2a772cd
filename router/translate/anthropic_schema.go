package translate

import (
	"bytes"
	"encoding/json"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// anthropicSchema is a client's JSON schema for structured output made
// acceptable to Anthropic, the way the official Anthropic SDKs make it
// before they send one (transformJSONSchema in @anthropic-ai/sdk's
// lib/transform-json-schema): Anthropic's structured outputs take a subset
// of JSON schema, and a schema written for OpenAI (with $schema, pattern,
// minLength, maximum, ...) is refused otherwise. At every level:
//
//   - kept: $defs (each transformed), $ref (alone: its siblings are
//     dropped), enum and const of plain values (the type then goes),
//     anyOf (oneOf becomes anyOf; with either, allOf is dropped), allOf,
//     type, description, title;
//   - objects: properties (each transformed; {} when absent), required,
//     and additionalProperties always false;
//   - strings: format when Anthropic supports it (date-time, time, date,
//     duration, email, hostname, uri, ipv4, ipv6, uuid);
//   - arrays: items (transformed), minItems of 0 or 1;
//   - $schema is dropped;
//   - every other keyword (pattern, minLength, maximum, an unsupported
//     format, a larger minItems, ...) is moved into the description, as
//     "{pattern: \"^a\", minimum: 1}" after the description's own text,
//     so the model still reads it though Anthropic does not enforce it.
//
// The SDK throws on a level with neither a type nor anyOf, oneOf, allOf,
// enum or const; such a level is sent without a type, for Anthropic to
// judge. A schema that is not a JSON object comes back as it is.
func anthropicSchema(schema []byte) []byte {
	if !isObject(schema) {
		return schema
	}
	return appendAnthropicSchema(make([]byte, 0, len(schema)+64), schema)
}

// schemaMember is one member of a JSON object, raw.
type schemaMember struct{ k, v []byte }

// anthropicFormats are the string formats Anthropic's structured outputs
// support.
var anthropicFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "uri": true, "ipv4": true, "ipv6": true, "uuid": true,
}

func appendAnthropicSchema(out, schema []byte) []byte {
	if !isObject(schema) { // true, false: a schema too, kept
		return append(out, schema...)
	}
	var rest []schemaMember // what no rule takes, in order
	var defs, ref, enum, cnst, typ, anyOf, oneOf, allOf, description, title []byte
	m := jsonscan.MembersOf(schema)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "$defs":
			defs = v
		case "$ref":
			ref = v
		case "type":
			typ = v
		case "anyOf":
			anyOf = v
		case "oneOf":
			oneOf = v
		case "allOf":
			allOf = v
		case "description":
			description = v
		case "title":
			title = v
		case "$schema":
		case "enum":
			if isArray(v) && firstElement(v) != nil && allElements(v, isPlain) {
				enum = v
				continue
			}
			rest = append(rest, schemaMember{k, v})
		case "const":
			if isPlain(v) {
				cnst = v
				continue
			}
			rest = append(rest, schemaMember{k, v})
		default:
			rest = append(rest, schemaMember{k, v})
		}
	}
	out = append(out, '{')
	if isObject(defs) {
		out = append(comma(out), `"$defs":{`...)
		d := jsonscan.MembersOf(defs)
		for k, v, ok := d.Next(); ok; k, v, ok = d.Next() {
			out = append(jsonscan.AppendString(comma(out), k), ':')
			out = appendAnthropicSchema(out, v)
		}
		out = append(out, '}')
	}
	if ref != nil {
		return append(appendRaw(out, "$ref", ref), '}')
	}
	literals := enum != nil || cnst != nil
	out = appendRaw(out, "enum", enum)
	if cnst != nil { // null too
		out = append(key(out, "const"), cnst...)
	}
	if literals {
		typ = nil
	}
	switch {
	case isArray(anyOf):
		out = appendAnthropicVariants(out, "anyOf", anyOf)
	case isArray(oneOf):
		out = appendAnthropicVariants(out, "anyOf", oneOf)
	case isArray(allOf):
		out = appendAnthropicVariants(out, "allOf", allOf)
	default:
		out = appendRaw(out, "type", typ)
	}
	// What the type keeps, written after the description and title.
	var tail []byte
	switch {
	case stringIs(typ, "object"):
		var properties, required []byte
		n := 0
		for _, mb := range rest {
			switch string(mb.k) {
			case "properties":
				properties = mb.v
			case "additionalProperties":
			case "required":
				required = mb.v
			default:
				rest[n] = mb
				n++
			}
		}
		rest = rest[:n]
		tail = append(tail, `,"properties":{`...)
		if isObject(properties) {
			p := jsonscan.MembersOf(properties)
			for k, v, ok := p.Next(); ok; k, v, ok = p.Next() {
				tail = append(jsonscan.AppendString(comma(tail), k), ':')
				tail = appendAnthropicSchema(tail, v)
			}
		}
		tail = append(tail, `},"additionalProperties":false`...)
		tail = appendRaw(tail, "required", required)
	case stringIs(typ, "string"):
		rest, tail = keepIf(rest, tail, "format", func(v []byte) bool { return isString(v) && anthropicFormats[string(stringToken(v))] })
	case stringIs(typ, "array"):
		n := 0
		for _, mb := range rest {
			if string(mb.k) == "items" {
				tail = appendAnthropicSchema(append(tail, `,"items":`...), mb.v)
				continue
			}
			rest[n] = mb
			n++
		}
		rest = rest[:n]
		rest, tail = keepIf(rest, tail, "minItems", func(v []byte) bool { return string(v) == "0" || string(v) == "1" })
	}
	// The description stays where it was (before the title); one made of
	// the other keywords alone comes last.
	if description != nil {
		if len(rest) > 0 {
			description = restDescription(description, rest)
		}
		out = appendRaw(out, "description", description)
	}
	out = appendRaw(out, "title", title)
	if len(tail) > 0 {
		if out[len(out)-1] == '{' {
			tail = tail[1:] // no member before it
		}
		out = append(out, tail...)
	}
	if description == nil && len(rest) > 0 {
		out = appendRaw(out, "description", restDescription(nil, rest))
	}
	return append(out, '}')
}

// appendAnthropicVariants writes name: the schemas of list, each
// transformed.
func appendAnthropicVariants(out []byte, name string, list []byte) []byte {
	out = append(append(append(comma(out), '"'), name...), `":[`...)
	for i, v := range jsonscan.Each(list) {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendAnthropicSchema(out, v)
	}
	return append(out, ']')
}

// keepIf takes member name out of rest: written to tail when ok says so,
// else moved to rest's end (the SDK pops it and puts it back).
func keepIf(rest []schemaMember, tail []byte, name string, ok func([]byte) bool) ([]schemaMember, []byte) {
	for i, mb := range rest {
		if string(mb.k) != name {
			continue
		}
		rest = append(rest[:i:i], rest[i+1:]...)
		if ok(mb.v) {
			return rest, append(append(append(append(tail, `,"`...), name...), `":`...), mb.v...)
		}
		return append(rest, mb), tail
	}
	return rest, tail
}

// restDescription is the description (a string token, nil: none) with the
// keywords Anthropic does not take after its text, as the SDK writes them:
// "TEXT\n\n{k: v, ...}", each v compact JSON.
func restDescription(description []byte, rest []schemaMember) []byte {
	var text string
	_ = json.Unmarshal(description, &text)
	var b bytes.Buffer
	if text != "" {
		b.WriteString(text)
		b.WriteString("\n\n")
	}
	b.WriteByte('{')
	for i, mb := range rest {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(mb.k)
		b.WriteString(": ")
		if json.Compact(&b, mb.v) != nil {
			b.Write(mb.v)
		}
	}
	b.WriteByte('}')
	return jsonscan.AppendString(nil, b.Bytes())
}

// firstElement is an array's first element (nil: none).
func firstElement(v []byte) []byte {
	for _, el := range jsonscan.Each(v) {
		return el
	}
	return nil
}

// isPlain reports whether v is a JSON value that is not an object or an
// array.
func isPlain(v []byte) bool { return len(v) > 0 && v[0] != '{' && v[0] != '[' }
