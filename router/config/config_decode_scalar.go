package config

import (
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// fillScalar decodes a string, bool, whole number or number node into v,
// the value at path; pos is where the value starts.
func (d *decoder) fillScalar(node ast.Node, v reflect.Value, path string, pos token.Position) {
	switch v.Kind() {
	case reflect.String:
		switch n := node.(type) {
		case *ast.StringNode:
			v.SetString(n.Value)
		case *ast.LiteralNode:
			v.SetString(n.Value.Value)
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
			v.SetString(n.GetToken().Value) // as written: 0123 stays 0123
		default:
			d.fail(path, pos, "must be a string, not %s", d.describe(node))
		}
	case reflect.Bool:
		b, ok := node.(*ast.BoolNode)
		if !ok {
			d.failScalar(node, path, pos, "true or false", "write true or false")
			return
		}
		v.SetBool(b.Value)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := node.(*ast.IntegerNode)
		if !ok {
			d.failScalar(node, path, pos, "a whole number", "write e.g. 8")
			return
		}
		i, ok := intValue(n)
		if !ok || v.OverflowInt(i) {
			d.fail(path, pos, "%s is too large", d.describe(node))
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		var f float64
		switch n := node.(type) {
		case *ast.IntegerNode:
			i, ok := intValue(n)
			if !ok {
				d.fail(path, pos, "%s is too large", d.describe(node))
				return
			}
			f = float64(i)
		case *ast.FloatNode:
			f = n.Value
		default:
			d.failScalar(node, path, pos, "a number", "write e.g. 1.5")
			return
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			d.fail(path, pos, "%s is not a finite number", d.describe(node))
			return
		}
		v.SetFloat(f)
	}
}

// intValue is an integer node's value, if it fits an int64 (the parser
// holds non-negative ones as uint64).
func intValue(n *ast.IntegerNode) (int64, bool) {
	switch i := n.Value.(type) {
	case int64:
		return i, true
	case uint64:
		if i <= math.MaxInt64 {
			return int64(i), true
		}
	}
	return 0, false
}

// failScalar reports a value that is not of the scalar kind want; a quoted
// number gets the hint to drop the quotes.
func (d *decoder) failScalar(node ast.Node, path string, pos token.Position, want, hint string) {
	if isCollection(node) {
		d.fail(path, pos, "must be %s, not %s", want, d.describe(node))
		return
	}
	if s, ok := node.(*ast.StringNode); ok && (s.Token.Type == token.SingleQuoteType || s.Token.Type == token.DoubleQuoteType) {
		if _, err := strconv.ParseFloat(s.Value, 64); err == nil || s.Value == "true" || s.Value == "false" {
			hint = "write it without quotes"
		}
	}
	d.fail(path, pos, "%s is not %s: %s", d.describe(node), want, hint)
}

const (
	durationHint = "write a duration with a unit, e.g. 10s"
	sizeHint     = "write a size such as 10MiB, 512KiB or a byte count"
)

func (d *decoder) fillDuration(node ast.Node, v reflect.Value, path string, pos token.Position) {
	switch n := node.(type) {
	case *ast.IntegerNode:
		if i, ok := intValue(n); ok && i == 0 { // 0 needs no unit
			v.SetInt(0)
			return
		}
	case *ast.StringNode:
		if dur, err := time.ParseDuration(n.Value); err == nil {
			v.SetInt(int64(dur))
			return
		}
	}
	if isCollection(node) {
		d.fail(path, pos, "must be a duration, not %s: %s", d.describe(node), durationHint)
		return
	}
	d.fail(path, pos, "%s is not a duration: %s", d.describe(node), durationHint)
}

func (d *decoder) fillByteSize(node ast.Node, v reflect.Value, path string, pos token.Position) {
	switch n := node.(type) {
	case *ast.IntegerNode:
		if i, ok := intValue(n); ok && i >= 0 {
			v.SetInt(i)
			return
		}
	case *ast.StringNode:
		if b, err := ParseByteSize(n.Value); err == nil {
			v.SetInt(int64(b))
			return
		}
	}
	if isCollection(node) {
		d.fail(path, pos, "must be a size, not %s: %s", d.describe(node), sizeHint)
		return
	}
	d.fail(path, pos, "%s is not a size: %s", d.describe(node), sizeHint)
}
