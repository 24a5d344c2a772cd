package config

import (
	"reflect"
	"strings"
)

// RestartChange is a field a reload cannot change (tagged
// reload:"restart") whose value differs between two configs.
type RestartChange struct {
	Path     string
	Was, Now any
	// Hidden: the values must not be shown (a secret, or a URL that may
	// carry credentials).
	Hidden bool
}

// RestartChanges lists the restart-only fields whose values differ
// between old and cfg, in declaration order.
func RestartChanges(old, cfg *Config) []RestartChange {
	var out []RestartChange
	walkRestartOnly(reflect.ValueOf(old).Elem(), reflect.ValueOf(cfg).Elem(), "", func(path string, was, now reflect.Value, hidden bool) {
		if !reflect.DeepEqual(was.Interface(), now.Interface()) {
			out = append(out, RestartChange{Path: path, Was: was.Interface(), Now: now.Interface(), Hidden: hidden})
		}
	})
	return out
}

// restartOnlyPaths lists every restart-only field's path, in declaration
// order: what the docs' "needs a restart" lists must name.
func restartOnlyPaths() []string {
	var out []string
	var c Config
	v := reflect.ValueOf(&c).Elem()
	walkRestartOnly(v, v, "", func(path string, _, _ reflect.Value, _ bool) { out = append(out, path) })
	return out
}

// walkRestartOnly calls f for each field under a and b (values of one
// struct type) tagged reload:"restart", descending into nested structs
// (not maps or slices: providers and targets always reload).
func walkRestartOnly(a, b reflect.Value, prefix string, f func(path string, a, b reflect.Value, hidden bool)) {
	t := a.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		if tag, ok := sf.Tag.Lookup("reload"); ok {
			mode, opt, _ := strings.Cut(tag, ",")
			if mode == "restart" {
				f(path, a.Field(i), b.Field(i), opt == "hidden" || sf.Tag.Get("secret") == "true")
			}
			continue
		}
		if sf.Type.Kind() == reflect.Struct && sf.Type != durationType {
			walkRestartOnly(a.Field(i), b.Field(i), path, f)
		}
	}
}
