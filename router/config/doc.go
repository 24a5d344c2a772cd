// Package config is firstbyte's configuration: the schema (every field
// documented, with what its zero value means), the defaults in one place,
// YAML decoding with ${VAR} expansion and "did you mean" for near misses,
// validation whose every error names its field path (firstbyte check), and
// the fields a reload cannot change.
//
// It must not know how a request is served: package router builds a
// gateway from a validated Config.
package config
