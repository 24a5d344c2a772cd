package reqbody

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Input checks made before any token is spent: what every provider
// refuses of a request's own shape is answered 400 at once, naming the
// field, in the caller's error shape, rather than sent to each target in
// turn. They read what Scan found at the top level; the messages
// are walked only when they mention tools at all (a byte search), so a
// request without tools costs nothing more.
//
//   - a token limit (max_tokens, max_completion_tokens, max_output_tokens)
//     of zero or less;
//   - messages: [] on Chat Completions and Messages;
//   - a tool result that answers no earlier tool call (Chat: a tool message's
//     tool_call_id; Messages: a tool_result's tool_use_id; Responses: a
//     function_call_output's call_id, unless previous_response_id is set:
//     the call may be in the stored response);
//   - on Chat Completions and Messages, a tool call left without its result
//     when the conversation goes on (OpenAI and Anthropic both refuse it;
//     calls in the last message await their results, as they should).

// tokenLimitFields are the token limits of the three APIs, in the order
// Fields.tokenLimits holds their values.
var tokenLimitFields = [...]string{"max_tokens", "max_completion_tokens", "max_output_tokens"}

// InputError is why a request cannot be served as it stands: the field at
// fault (an OpenAI error's Param) and a message that starts with it.
type InputError struct{ Param, Msg string }

func refuse(param, why string) InputError { return InputError{Param: param, Msg: param + " " + why} }

// API is which client API a request is of: the input checks it takes
// (Check) and the members that leave state behind (SideEffect, Stores).
type API uint8

const (
	Unchecked       API = iota // an endpoint with no checks here
	ChatCompletions            // OpenAI Chat Completions
	Messages                   // Anthropic Messages
	Responses                  // the OpenAI Responses API
)

// Check returns why a request of api cannot be served as it stands,
// naming the field; a zero InputError when nothing here refuses it.
func Check(api API, f *Fields) InputError {
	if api == Unchecked {
		return InputError{}
	}
	for i, v := range f.tokenLimits {
		if nonPositive(v) {
			return refuse(tokenLimitFields[i], "must be a positive integer")
		}
	}
	switch {
	case api != Responses && !f.fromInput && f.Messages != nil:
		if emptyArray(f.Messages) {
			return refuse("messages", "must not be empty")
		}
		if api == Messages {
			return checkToolUses(f.Messages)
		}
		return checkToolCalls(f.Messages)
	case api == Responses && f.fromInput && !f.prevResponse:
		return checkFunctionCalls(f.Messages)
	}
	return InputError{}
}

// nonPositive reports whether v is a JSON number of zero or less.
func nonPositive(v []byte) bool {
	if len(v) == 0 || (v[0] != '-' && v[0] != '0') {
		return false // absent, positive, or not a number: the provider's to judge
	}
	n, err := strconv.ParseFloat(string(v), 64)
	return err == nil && n <= 0
}

// emptyArray reports whether v is [].
func emptyArray(v []byte) bool {
	return len(v) > 0 && v[0] == '[' && jsonscan.SkipSpace(v, 1) < len(v) && v[jsonscan.SkipSpace(v, 1)] == ']'
}

// What a part of the messages must contain to make or answer a tool call
// (tool_calls, tool_call_id; tool_use, tool_use_id; function_call,
// function_call_output): a byte search, led by '_', which prose and JSON
// punctuation seldom stop on, says which parts to walk at all.
var (
	markCall       = []byte("_call")
	markUse        = []byte("_use")
	markCallOutput = []byte("_call_output")
)

// marks finds a mark in the parts of b walked in order, searching b once
// from start to end however many parts there are.
type marks struct {
	b, mark []byte
	next    int // where the next mark at or after the walk is; -1: none is left
}

func newMarks(b, mark []byte) marks { return marks{b: b, mark: mark, next: bytes.Index(b, mark)} }

// in reports whether part, the next part of b walked, holds the mark, and
// whether none is left at or after part.
func (m *marks) in(part []byte) (has, none bool) {
	off := jsonscan.Offset(m.b, part)
	if m.next >= 0 && m.next < off {
		if j := bytes.Index(m.b[off:], m.mark); j >= 0 {
			m.next = off + j
		} else {
			m.next = -1
		}
	}
	return m.next >= off && m.next+len(m.mark) <= off+len(part), m.next < 0
}

// toolCall is a call not yet answered: where it was made, and its id.
type toolCall struct {
	msg, idx int
	id       string
}

// stringValue is v unquoted when it is a JSON string; ok is false else.
func stringValue(v []byte) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	return jsonscan.Unquote(v), true
}

// unanswered names the first of pending, left without its result by
// message i.
func unanswered(pending []toolCall, where string, i int) InputError {
	p := pending[0]
	return refuse("messages["+strconv.Itoa(p.msg)+"]."+where+"["+strconv.Itoa(p.idx)+"]",
		"(id "+Quote(p.id)+") has no result before messages["+strconv.Itoa(i)+"]: every tool call needs its result before the conversation goes on")
}

// checkToolCalls checks Chat Completions messages: every tool message
// answers a call of an earlier assistant message, and every call is
// answered before a message other than a tool message follows.
func checkToolCalls(msgs []byte) InputError {
	seek := newMarks(msgs, markCall)
	var issued []string
	var pending []toolCall
	for i, msg := range jsonscan.Each(msgs) {
		if has, none := seek.in(msg); len(pending) == 0 && !has {
			if none {
				break // no call made or answered from here on
			}
			continue // neither makes nor answers a call, and none awaits an answer
		}
		var role, calls, answers []byte
		m := jsonscan.MembersOf(msg)
		for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
			switch string(k) {
			case "role":
				role = v
			case "tool_calls":
				calls = v
			case "tool_call_id":
				answers = v
			}
		}
		isTool := string(role) == `"tool"`
		if !isTool && len(pending) > 0 {
			return unanswered(pending, "tool_calls", i)
		}
		if id, ok := stringValue(answers); ok && isTool {
			if !slices.Contains(issued, id) {
				return refuse("messages["+strconv.Itoa(i)+"].tool_call_id", Quote(id)+" answers no tool call of an earlier assistant message")
			}
			pending = slices.DeleteFunc(pending, func(c toolCall) bool { return c.id == id })
		}
		if string(role) != `"assistant"` {
			continue
		}
		for j, call := range jsonscan.Each(calls) {
			if id, ok := stringValue(jsonscan.Field(call, "id")); ok {
				issued = append(issued, id)
				pending = append(pending, toolCall{msg: i, idx: j, id: id})
			}
		}
	}
	return InputError{}
}

// checkToolUses checks Messages: every tool_result answers a tool_use of
// an earlier assistant message, and the message after an assistant
// message's tool_use blocks carries a tool_result for each.
func checkToolUses(msgs []byte) InputError {
	seek := newMarks(msgs, markUse)
	var issued []string
	var pending []toolCall
	for i, msg := range jsonscan.Each(msgs) {
		if has, none := seek.in(msg); len(pending) == 0 && !has {
			if none {
				break
			}
			continue
		}
		assistant := string(jsonscan.Field(msg, "role")) == `"assistant"`
		var answered []string
		var made []toolCall
		for j, block := range jsonscan.Each(jsonscan.Field(msg, "content")) {
			switch string(jsonscan.Field(block, "type")) {
			case `"tool_use"`:
				if id, ok := stringValue(jsonscan.Field(block, "id")); ok && assistant {
					made = append(made, toolCall{msg: i, idx: j, id: id})
				}
			case `"tool_result"`:
				id, ok := stringValue(jsonscan.Field(block, "tool_use_id"))
				if !ok || assistant {
					continue
				}
				if !slices.Contains(issued, id) {
					return refuse("messages["+strconv.Itoa(i)+"].content["+strconv.Itoa(j)+"].tool_use_id",
						Quote(id)+" answers no tool_use of an earlier assistant message")
				}
				answered = append(answered, id)
			}
		}
		pending = slices.DeleteFunc(pending, func(c toolCall) bool { return slices.Contains(answered, c.id) })
		if len(pending) > 0 {
			return unanswered(pending, "content", i)
		}
		for _, c := range made {
			issued = append(issued, c.id)
		}
		pending = made
	}
	return InputError{}
}

// checkFunctionCalls checks a Responses input: every function_call_output
// answers a function_call earlier in the input.
func checkFunctionCalls(input []byte) InputError {
	if !bytes.Contains(input, markCallOutput) {
		return InputError{}
	}
	seek := newMarks(input, markCall)
	var issued []string
	for i, item := range jsonscan.Each(input) {
		if has, none := seek.in(item); !has {
			if none {
				break
			}
			continue
		}
		var typ, callID []byte
		m := jsonscan.MembersOf(item)
		for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
			switch string(k) {
			case "type":
				typ = v
			case "call_id":
				callID = v
			}
		}
		id, ok := stringValue(callID)
		if !ok {
			continue
		}
		switch string(typ) {
		case `"function_call"`:
			issued = append(issued, id)
		case `"function_call_output"`:
			if !slices.Contains(issued, id) {
				return refuse("input["+strconv.Itoa(i)+"].call_id",
					Quote(id)+" answers no function_call earlier in input (a call made in a stored response needs previous_response_id)")
			}
		}
	}
	return InputError{}
}
