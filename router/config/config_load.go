package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Load reads, decodes, expands and defaults a config file. It does
// not validate: call Validate, which reports every problem at once.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, os.LookupEnv)
}

// Parse decodes YAML, expands ${VAR} and ${VAR:-default} in every
// string with lookup, and applies defaults.
//
// Unknown keys, wrong types and keys written twice do not stop it: each is
// kept, with its path and position, for Validate to report together with
// the semantic problems of what did decode (so check lists them all). It
// fails only when there is nothing to decode: the text is not YAML, not a
// mapping, or a simulator config; that error is a FieldErrors too.
func Parse(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	var c Config
	file, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, FieldErrors{syntaxError(err)}
	}
	d := newDecoder()
	var body ast.Node
	for _, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		if body != nil {
			pos := posOf(doc.Body)
			if doc.Start != nil && doc.Start.Position != nil {
				pos = *doc.Start.Position
			}
			d.errs = append(d.errs, FieldError{Line: pos.Line, Column: pos.Column,
				Msg: fmt.Sprintf("line %d: a second YAML document; a config file is one document (remove the --- separator)", pos.Line)})
			continue
		}
		body = doc.Body
	}
	if body != nil {
		d.collectAnchors(body)
		// The top-level entries are read once: reading them records their
		// alias and merge errors and spends the merge budget.
		es, ok := d.mappingEntries(d.resolve(body, ""), "")
		if ok && looksLikeSimConfig(d.anchors, es) {
			return nil, FieldErrors{{Msg: "this looks like a simulator config (firstbyte sim -config FILE), not a gateway config: " +
				"its providers are a list of simulated servers; a gateway config names providers in a mapping and routes to them with targets"}}
		}
		if !ok {
			return nil, FieldErrors{{Msg: fmt.Sprintf("the config must be a mapping of keys (%s), not %s",
				strings.Join(fieldNames(yamlFields(reflect.TypeFor[Config]())), ", "), describe(body))}}
		}
		d.fillEntries(es, reflect.ValueOf(&c).Elem(), "")
	}
	c.decodeErrs, c.positions, c.undecoded = d.errs, d.seen, d.undecoded
	c.unsetVars = expandStrings(reflect.ValueOf(&c).Elem(), "", lookup)
	c.applyDefaults()
	return &c, nil
}

// syntaxError is a YAML parse error as one line with its position; the
// parser's own message already says what it expected.
func syntaxError(err error) FieldError {
	var yerr yaml.Error
	if errors.As(err, &yerr) && yerr.GetToken() != nil && yerr.GetToken().Position != nil {
		pos := yerr.GetToken().Position
		return FieldError{Line: pos.Line, Column: pos.Column,
			Msg: fmt.Sprintf("line %d, column %d: not valid YAML: %s", pos.Line, pos.Column, yerr.GetMessage())}
	}
	// Only the message's first line: the parser appends the source lines
	// around the error, which may hold a credential.
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return FieldError{Msg: "not valid YAML: " + msg}
}

// looksLikeSimConfig recognises a `firstbyte sim` config (top-level seed,
// providers as a list of servers with name, listen, ttfb), which would
// otherwise decode into a cascade of unrelated errors. es are the file's
// top-level entries. What it looks into below them it reads with a
// scratch decoder: the real one reports those nodes' problems, with their
// field paths, when it decodes them.
func looksLikeSimConfig(anchors map[string]ast.Node, es []entry) bool {
	d := newDecoder()
	d.anchors = anchors
	var seed, targets bool
	var providers ast.Node
	for _, e := range es {
		switch e.key {
		case "seed":
			seed = true
		case "targets":
			targets = true
		case "providers":
			providers = d.resolve(e.value, "")
		}
	}
	if seq, ok := providers.(*ast.SequenceNode); ok && len(seq.Values) > 0 {
		item, ok := d.mappingEntries(d.resolve(seq.Values[0], ""), "")
		if ok {
			for _, e := range item {
				switch e.key {
				case "name", "ttfb", "listen", "stream", "errors", "phases":
					return true
				}
			}
		}
	}
	return seed && !targets
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandStrings walks v and expands ${VAR} in every string it holds,
// returning the fields that named, without a default, a variable that is
// not set or is empty (each error says which).
// It runs once at load, so reflection is fine here.
func expandStrings(v reflect.Value, path string, lookup func(string) (string, bool)) []FieldError {
	var unset []FieldError
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if !strings.Contains(s, "${") {
			return nil
		}
		out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			val, set := lookup(m[1])
			if set && val != "" {
				return val
			}
			if m[2] != "" { // ${VAR:-default}: as in a shell, unset or empty
				return m[3]
			}
			msg := "environment variable " + m[1] + " is not set"
			if set {
				// OPENAI_API_KEY= in an env file: the variable is there, its
				// value is not, and "not set" would send the user looking for
				// the wrong mistake.
				msg = "environment variable " + m[1] + " is set but empty"
			}
			unset = append(unset, FieldError{Path: path, Msg: msg})
			return ""
		})
		v.SetString(out)
	case reflect.Pointer:
		if !v.IsNil() {
			unset = append(unset, expandStrings(v.Elem(), path, lookup)...)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			unset = append(unset, expandStrings(v.Field(i), joinPath(path, name), lookup)...)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			unset = append(unset, expandStrings(v.Index(i), path+"["+strconv.Itoa(i)+"]", lookup)...)
		}
	case reflect.Map:
		// Map values are not addressable: expand a copy and store it back.
		for _, k := range v.MapKeys() {
			elem := v.MapIndex(k)
			if elem.Kind() == reflect.String {
				cp := reflect.New(elem.Type()).Elem()
				cp.Set(elem)
				unset = append(unset, expandStrings(cp, joinPath(path, k.String()), lookup)...)
				v.SetMapIndex(k, cp)
				continue
			}
			unset = append(unset, expandStrings(elem, joinPath(path, k.String()), lookup)...)
		}
	}
	return unset
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
