package config

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docKey is one row of a key table in docs/config.md.
type docKey struct {
	path, typ, def string
}

// docRow matches "| `key` | type | default | meaning |".
var docRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\| ([^|]+) \\|")

func readDocKeys(t *testing.T) map[string]docKey {
	t.Helper()
	data, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]docKey{}
	for line := range strings.SplitSeq(string(data), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := keys[m[1]]; dup {
			t.Errorf("docs/config.md documents %s twice", m[1])
		}
		keys[m[1]] = docKey{path: m[1], typ: strings.TrimSpace(m[2]), def: strings.TrimSpace(m[3])}
	}
	return keys
}

// mapPlaceholders name the keys of the config's mappings of sections, as
// docs/config.md writes them.
var mapPlaceholders = map[string]string{"providers": "<name>", "providers.<name>.pricing": "<model>"}

// configKey is one leaf of the Config type: its documented path, its
// documented type, and how to reach its value in a Config.
type configKey struct {
	path, typ string
	value     func(reflect.Value) reflect.Value
}

// configKeys walks the Config type's yaml tags to its leaves. A mapping or
// list of sections (providers, targets) is walked through its one element.
func configKeys(t *testing.T) []configKey {
	var out []configKey
	var walk func(ty reflect.Type, path string, get func(reflect.Value) reflect.Value)
	walk = func(ty reflect.Type, path string, get func(reflect.Value) reflect.Value) {
		if ty.Kind() == reflect.Pointer && ty.Elem().Kind() == reflect.Struct {
			walk(ty.Elem(), path, func(v reflect.Value) reflect.Value { return get(v).Elem() })
			return
		}
		switch {
		case ty.Kind() == reflect.Struct && ty != durationType:
			fields := yamlFields(ty)
			for _, name := range fieldNames(fields) {
				idx := fields[name]
				walk(ty.Field(idx).Type, joinPath(path, name), func(v reflect.Value) reflect.Value { return get(v).Field(idx) })
			}
			return
		case ty.Kind() == reflect.Map && isSection(ty.Elem()):
			ph, ok := mapPlaceholders[path]
			if !ok {
				t.Fatalf("%s: a mapping of sections with no placeholder in mapPlaceholders", path)
			}
			walk(ty.Elem(), path+"."+ph, func(v reflect.Value) reflect.Value {
				m := get(v)
				return m.MapIndex(m.MapKeys()[0])
			})
			return
		case ty.Kind() == reflect.Slice && isSection(ty.Elem()):
			walk(ty.Elem(), path+"[]", func(v reflect.Value) reflect.Value { return get(v).Index(0) })
			return
		}
		out = append(out, configKey{path: path, typ: docType(t, path, ty), value: get})
	}
	walk(reflect.TypeFor[Config](), "", func(v reflect.Value) reflect.Value { return v })
	return out
}

func isSection(ty reflect.Type) bool {
	if ty.Kind() == reflect.Pointer {
		ty = ty.Elem()
	}
	return ty.Kind() == reflect.Struct && ty != durationType
}

// docType is how docs/config.md names a Go type.
func docType(t *testing.T, path string, ty reflect.Type) string {
	switch ty {
	case durationType:
		return "duration"
	case byteSizeType:
		return "size"
	}
	if ty.Kind() == reflect.Pointer {
		ty = ty.Elem()
	}
	switch ty.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Slice:
		if ty.Elem().Kind() == reflect.String {
			return "list of strings"
		}
	case reflect.Map:
		return "mapping"
	}
	t.Fatalf("%s: no documented name for type %s", path, ty)
	return ""
}

// docDefault writes a defaulted value as the default column does.
func docDefault(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "(nil)"
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case time.Duration:
		return "`" + FormatDuration(x) + "`"
	case ByteSize:
		return "`" + x.String() + "`"
	case string:
		if x == "" {
			return "`\"\"`"
		}
		return "`" + x + "`"
	case float64:
		return "`" + strconv.FormatFloat(x, 'g', -1, 64) + "`"
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			return "`[]`"
		}
	case reflect.Map:
		if v.Len() == 0 {
			return "`{}`"
		}
	}
	return fmt.Sprintf("`%v`", v.Interface())
}

// TestDocsConfigCoversEveryKey: docs/config.md documents every key of the
// config, no key that does not exist, each with the type it has.
func TestDocsConfigCoversEveryKey(t *testing.T) {
	t.Parallel()
	docs := readDocKeys(t)
	var paths []string
	for _, k := range configKeys(t) {
		paths = append(paths, k.path)
		d, ok := docs[k.path]
		if !ok {
			t.Errorf("docs/config.md does not document %s", k.path)
			continue
		}
		if d.typ != k.typ {
			t.Errorf("docs/config.md: %s is documented as %q, the config has %q", k.path, d.typ, k.typ)
		}
	}
	for path := range docs {
		if !slices.Contains(paths, path) {
			t.Errorf("docs/config.md documents %s, which the config does not have", path)
		}
	}
}

// TestDocsConfigDefaults: every default docs/config.md states is the one
// applyDefaults sets. "required" is allowed only where the default is
// empty.
func TestDocsConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
providers:
  p: {pricing: {m: {}}}
targets: [{}]
routes: [{models: [m], hedge: {enabled: false}}]
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	docs := readDocKeys(t)
	root := reflect.ValueOf(cfg).Elem()
	for _, k := range configKeys(t) {
		d, ok := docs[k.path]
		if !ok {
			continue // TestDocsConfigCoversEveryKey reports it
		}
		got := docDefault(k.value(root))
		if strings.HasPrefix(d.def, "`strategy.") || k.path == "routes[].models" {
			continue // a route's field left out takes the strategy's, and models is set here (routes_test.go)
		}
		if d.def == "required" {
			if got != "`\"\"`" {
				t.Errorf("docs/config.md: %s is documented as required, but defaults to %s", k.path, got)
			}
			continue
		}
		if d.def != got {
			t.Errorf("docs/config.md: %s defaults to %s, applyDefaults sets %s", k.path, d.def, got)
		}
	}
}

// TestDocsConfigExampleIsValid: the first config of docs/config.md passes
// check.
func TestDocsConfigExampleIsValid(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/config.md has no yaml example")
	}
	cfg, err := Parse([]byte(example), func(string) (string, bool) { return "set", true })
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Errorf("the example in docs/config.md does not pass check:\n%v", err)
	}
	if len(cfg.Auth.Keys) == 0 {
		t.Errorf("the example in docs/config.md has no client auth")
	}
}

// TestDocsNameTheRestartOnlyKeys: the two places the docs list what a
// reload cannot change (docs/operations.md's "Needs a restart" table and
// docs/config.md's paragraph) name exactly the fields tagged
// reload:"restart".
func TestDocsNameTheRestartOnlyKeys(t *testing.T) {
	t.Parallel()
	want := restartOnlyPaths()
	if len(want) == 0 {
		t.Fatal("no field is tagged reload:\"restart\"")
	}
	slices.Sort(want)
	key := regexp.MustCompile("`([a-z_.]+)`")
	for _, doc := range []struct{ file, from, to string }{
		{"../../docs/operations.md", "**Needs a restart**", "\n\n`POST /admin/reload`"},
		{"../../docs/config.md", "**Some keys cannot change by reload**", "Restart the process"},
	} {
		data, err := os.ReadFile(doc.file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		i := strings.Index(text, doc.from)
		j := strings.Index(text[max(i, 0):], doc.to)
		if i < 0 || j < 0 {
			t.Fatalf("%s: no section from %q to %q", doc.file, doc.from, doc.to)
		}
		var got []string
		for _, m := range key.FindAllStringSubmatch(text[i:i+j], -1) {
			if !slices.Contains(got, m[1]) {
				got = append(got, m[1])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s names %v as restart-only, the config tags %v", doc.file, got, want)
		}
	}
}
