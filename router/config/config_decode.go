package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// decoder fills a Config from a YAML syntax tree. Unlike a strict decode,
// which stops at the first unknown key or wrong type, it notes every such
// problem with its field path and position, leaves that field at its zero
// value and goes on, so Validate can report the YAML-level problems and
// the semantic ones of everything that did decode, all at once.
//
// It knows the Config's shape only through reflection over its yaml tags,
// so a field added to a config struct is decoded (and its typos caught)
// with no change here.
type decoder struct {
	anchors map[string]ast.Node
	errs    []FieldError
	// seen is the position of every key and list item the file wrote, by
	// field path, so errors about them can be sorted in file order.
	seen map[string]token.Position
	// undecoded are paths the file meant to set but that could not be
	// decoded: a wrong type, or a typo whose intended key is not also
	// present. Validate says nothing more about them (or their children):
	// "targets[0].virtual_key: required" after "virtual_keys: unknown key"
	// would be the same mistake reported twice.
	undecoded map[string]bool
	// mergeDepth and mergedEntries bound what merge keys can expand to: a
	// mapping that merges itself, or merges fanning out level after level,
	// would otherwise never end.
	mergeDepth, mergedEntries int
}

const (
	maxMergeDepth   = 16
	maxMergeEntries = 10000
)

func newDecoder() *decoder {
	return &decoder{anchors: map[string]ast.Node{}, seen: map[string]token.Position{}, undecoded: map[string]bool{}}
}

func (d *decoder) fail(path string, pos token.Position, format string, args ...any) {
	d.errs = append(d.errs, FieldError{Path: path, Msg: fmt.Sprintf(format, args...), Line: pos.Line, Column: pos.Column})
	d.undecoded[path] = true
}

// collectAnchors records every &anchor so *alias can be resolved.
func (d *decoder) collectAnchors(n ast.Node) {
	ast.Walk(anchorCollector(d.anchors), n)
}

type anchorCollector map[string]ast.Node

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		a[an.Name.GetToken().Value] = an.Value
	}
	return a
}

// resolve looks through tags, anchors and aliases to the node that holds
// the value. A nil result is an empty value.
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	for depth := 0; n != nil; depth++ {
		if depth > 64 {
			d.fail(path, posOf(n), "aliases nest too deeply")
			return nil
		}
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := v.Value.GetToken().Value
			target, ok := d.anchors[name]
			if !ok {
				d.fail(path, posOf(n), "alias *%s names no anchor", name)
				return nil
			}
			n = target
		default:
			return n
		}
	}
	return nil
}

// posOf is where a node starts in the file.
func posOf(n ast.Node) token.Position {
	switch v := n.(type) {
	case nil:
		return token.Position{}
	case *ast.MappingNode:
		if len(v.Values) > 0 {
			return posOf(v.Values[0])
		}
	case *ast.MappingValueNode:
		return posOf(v.Key)
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return *tk.Position
	}
	return token.Position{}
}

// describe names a value as an error message shows it: by its kind
// ("a list", "a mapping", "a string", "a number", "empty"), never by what
// it says (see redact.go).
func (d *decoder) describe(n ast.Node) string { return describe(n) }

func describe(n ast.Node) string {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return "empty"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		if v.Token != nil && (v.Token.Type == token.SingleQuoteType || v.Token.Type == token.DoubleQuoteType) {
			return "a quoted string"
		}
		return "a string"
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.IntegerNode:
		return "a number"
	case *ast.FloatNode:
		return "a decimal number"
	case *ast.InfinityNode:
		return "an infinity"
	case *ast.NanNode:
		return "NaN"
	case *ast.BoolNode:
		return "true or false"
	}
	return "a plain value"
}

func isCollection(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		return true
	}
	return false
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	byteSizeType = reflect.TypeFor[ByteSize]()
)

// fill decodes node into v, the value at path.
func (d *decoder) fill(node ast.Node, v reflect.Value, path string) {
	pos := posOf(node)
	node = d.resolve(node, path)
	if node == nil {
		return
	}
	if _, null := node.(*ast.NullNode); null {
		v.SetZero() // an empty value is the zero value: the default applies
		return
	}
	switch v.Type() {
	case durationType:
		d.fillDuration(node, v, path, pos)
		return
	case byteSizeType:
		d.fillByteSize(node, v, path, pos)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.fill(node, elem.Elem(), path)
		if !d.undecoded[path] { // a bad value leaves it nil: the default applies
			v.Set(elem)
		}
	case reflect.Struct:
		d.fillStruct(node, v, path, pos)
	case reflect.Map:
		d.fillMap(node, v, path, pos)
	case reflect.Slice:
		seq, ok := node.(*ast.SequenceNode)
		if !ok {
			if isCollection(node) {
				d.fail(path, pos, "must be a list, not %s", d.describe(node))
			} else {
				d.fail(path, pos, "must be a list, not %s: write [...] for a single item", d.describe(node))
			}
			return
		}
		s := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
		for i, item := range seq.Values {
			p := path + "[" + strconv.Itoa(i) + "]"
			d.seen[p] = posOf(item)
			d.fill(item, s.Index(i), p)
		}
		v.Set(s)
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		d.fillScalar(node, v, path, pos)
	default:
		// A config field of a kind this decoder does not know is a bug in
		// the config struct, not in the user's file.
		panic(fmt.Sprintf("config field %s has unsupported type %s", path, v.Type()))
	}
}

// entries are a mapping's key/value pairs, with merge keys (<<: *base)
// expanded in place so the keys they bring in are checked like any other.
// Keys written after a merge override what it brought, as YAML says.
type entry struct {
	key    string
	pos    token.Position
	value  ast.Node
	merged bool // came in through <<
}

// mappingEntries returns node's entries, or ok=false when it is not a
// mapping.
func (d *decoder) mappingEntries(node ast.Node, path string) (es []entry, ok bool) {
	var values []*ast.MappingValueNode
	switch n := node.(type) {
	case *ast.MappingNode:
		values = n.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{n}
	default:
		return nil, false
	}
	for _, mv := range values {
		if mv.Key.IsMergeKey() {
			if d.mergeDepth >= maxMergeDepth || d.mergedEntries >= maxMergeEntries {
				d.fail(path, posOf(mv), "<< merges nest too deeply (does a mapping merge itself?)")
				continue
			}
			d.mergeDepth++
			sources := d.mergeSources(mv.Value, path)
			for _, src := range sources {
				sub, ok := d.mappingEntries(src, path)
				d.mergedEntries += len(sub)
				if !ok {
					d.fail(path, posOf(mv), "<< must merge a mapping, not %s", d.describe(src))
					continue
				}
				for _, e := range sub {
					e.merged = true
					es = append(es, e)
				}
			}
			d.mergeDepth--
			continue
		}
		key := d.resolve(mv.Key, path)
		name := ""
		switch k := key.(type) {
		case *ast.StringNode:
			name = k.Value
		case ast.ScalarNode:
			name = k.GetToken().Value
		default:
			d.fail(path, posOf(mv), "key %s is not a name", d.describe(key))
			continue
		}
		es = append(es, entry{key: name, pos: posOf(mv.Key), value: mv.Value})
	}
	return es, true
}

// mergeSources is what a << key merges: one mapping or a list of them. A
// source that does not resolve (an alias naming no anchor) is left out:
// resolve said why, and "must merge a mapping, not empty" would say it
// again.
func (d *decoder) mergeSources(n ast.Node, path string) []ast.Node {
	reported := len(d.errs)
	n = d.resolve(n, path)
	if len(d.errs) > reported {
		return nil
	}
	if seq, ok := n.(*ast.SequenceNode); ok {
		out := make([]ast.Node, 0, len(seq.Values))
		for _, v := range seq.Values {
			reported := len(d.errs)
			if src := d.resolve(v, path); len(d.errs) == reported {
				out = append(out, src)
			}
		}
		return out
	}
	return []ast.Node{n}
}

// uniqueEntries drops, with an error, keys written twice in one mapping;
// a key written once explicitly overrides the same key merged in.
func (d *decoder) uniqueEntries(es []entry, path string) []entry {
	first := map[string]int{}
	out := es[:0:0]
	for _, e := range es {
		i, dup := first[e.key]
		switch {
		case !dup:
			first[e.key] = len(out)
			out = append(out, e)
		case out[i].merged && !e.merged:
			out[i] = e
		case e.merged:
			// An earlier key (merged or explicit) already set it.
		default:
			d.errs = append(d.errs, FieldError{
				Path: joinPath(path, e.key), Line: e.pos.Line, Column: e.pos.Column,
				Msg: writtenTwice(e.key, out[i].pos, e.pos),
			})
		}
	}
	return out
}

func writtenTwice(key string, first, again token.Position) string {
	if first.Line == again.Line {
		return fmt.Sprintf("key %q is written twice on line %d; keep one", key, again.Line)
	}
	return fmt.Sprintf("key %q is written twice (lines %d and %d); keep one", key, first.Line, again.Line)
}

func (d *decoder) fillStruct(node ast.Node, v reflect.Value, path string, pos token.Position) {
	fields := yamlFields(v.Type())
	es, ok := d.mappingEntries(node, path)
	if !ok {
		d.fail(path, pos, "must be a mapping with keys such as %s, not %s", strings.Join(fieldNames(fields), ", "), d.describe(node))
		return
	}
	d.fillEntries(es, v, path)
}

// fillEntries decodes a mapping's entries (from mappingEntries) into v, a
// struct, the value at path.
func (d *decoder) fillEntries(es []entry, v reflect.Value, path string) {
	fields := yamlFields(v.Type())
	es = d.uniqueEntries(es, path)
	present := map[string]bool{}
	for _, e := range es {
		present[e.key] = true
	}
	for _, e := range es {
		p := joinPath(path, e.key)
		idx, known := fields[e.key]
		if !known {
			want := suggest(e.key, fieldNames(fields))
			msg := "unknown key " + quoteName(e.key)
			if want != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", want)
				if !present[want] {
					d.undecoded[joinPath(path, want)] = true
				}
			} else {
				msg += " (valid here: " + strings.Join(fieldNames(fields), ", ") + ")"
			}
			if !looksLikeName(e.key) {
				p = path // the key is the part of the path not to repeat; the line says where
			}
			d.errs = append(d.errs, FieldError{Path: p, Msg: msg, Line: e.pos.Line, Column: e.pos.Column})
			if want != "" && looksLikeName(e.key) {
				d.checkAs(e, v.Field(fields[want]).Type(), p)
			}
			continue
		}
		d.seen[p] = e.pos
		d.fill(e.value, v.Field(idx), p) // no value is ever repeated in an error, a secret's included (redact.go)
	}
}

// checkAs decodes a mistyped key's value as the key it nearly is (typ is
// that field's type) into a value thrown away, so what is under the typo
// is still checked: "target:" for "targets:" must not hide a "modelmap:"
// typo beneath it. Its problems are reported under path, the key as the
// file writes it (target[0].modelmap), so the user finds them where they
// are. Only the YAML-level checks run there (keys, types); the semantic
// ones wait until the parent key is spelt right.
func (d *decoder) checkAs(e entry, typ reflect.Type, path string) {
	d.seen[path] = e.pos
	d.fill(e.value, reflect.New(typ).Elem(), path)
}

func (d *decoder) fillMap(node ast.Node, v reflect.Value, path string, pos token.Position) {
	es, ok := d.mappingEntries(node, path)
	if !ok {
		d.fail(path, pos, "must be a mapping of names to values, not %s", d.describe(node))
		return
	}
	es = d.uniqueEntries(es, path)
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(es)))
	}
	for _, e := range es {
		p := joinPath(path, e.key)
		d.seen[p] = e.pos
		elem := reflect.New(v.Type().Elem()).Elem()
		d.fill(e.value, elem, p)
		if d.undecoded[p] {
			continue // leave it out rather than half-filled
		}
		v.SetMapIndex(reflect.ValueOf(e.key).Convert(v.Type().Key()), elem)
	}
}

// yamlFields maps a struct's yaml keys to its field indexes.
func yamlFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = i
	}
	return out
}

// fieldNames are a struct's yaml keys in declaration order.
func fieldNames(fields map[string]int) []string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return fields[names[i]] < fields[names[j]] })
	return names
}
