package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// How much an answer may reason, in each API's words: OpenAI's
// reasoning_effort and Anthropic's extended-thinking budget
// (thinking.budget_tokens). docs/translation.md tables both directions.

// minThinkingBudget is the smallest budget Anthropic accepts.
const minThinkingBudget = 1024

// effortBudgets are the thinking budgets each reasoning_effort becomes.
var effortBudgets = [...]struct {
	effort string
	budget int64
}{
	{"minimal", minThinkingBudget}, {"low", 2048}, {"medium", 8192}, {"high", 16384}, {"xhigh", 32768},
}

// thinkingBudget is the Anthropic thinking budget for an OpenAI
// reasoning_effort (0: no thinking).
func thinkingBudget(effort []byte) (int64, error) {
	if !present(effort) || stringIs(effort, "none") {
		return 0, nil
	}
	for _, e := range effortBudgets {
		if stringIs(effort, e.effort) {
			return e.budget, nil
		}
	}
	return 0, refuse("reasoning_effort", "must be none, minimal, low, medium, high or xhigh")
}

// reasoningEffort is the OpenAI reasoning_effort for an Anthropic thinking
// object ("": none to send). A budget up to low's is low, up to medium's
// medium, and above that high: each effort's budget comes back as itself.
func reasoningEffort(thinking []byte) (string, error) {
	if !present(thinking) {
		return "", nil
	}
	if !isObject(thinking) {
		return "", refuse("thinking", "must be an object")
	}
	switch typ := jsonscan.Field(thinking, "type"); {
	case stringIs(typ, "disabled"), stringIs(typ, "adaptive"):
		// Adaptive leaves the effort to the model, as an OpenAI request
		// without reasoning_effort does.
		return "", nil
	case stringIs(typ, "enabled"):
		b, ok := intValue(jsonscan.Field(thinking, "budget_tokens"))
		switch {
		case !ok:
			return "", refuse("thinking.budget_tokens", "must be an integer")
		case b <= effortBudgets[1].budget:
			return "low", nil
		case b <= effortBudgets[2].budget:
			return "medium", nil
		}
		return "high", nil
	}
	return "", refuse("thinking.type", "must be enabled, disabled or adaptive")
}

// effortLevel maps Anthropic's output_config.effort to reasoning_effort.
func effortLevel(effort []byte) (string, error) {
	switch {
	case !present(effort):
		return "", nil
	case stringIs(effort, "low"), stringIs(effort, "medium"), stringIs(effort, "high"):
		return string(effort[1 : len(effort)-1]), nil
	case stringIs(effort, "xhigh"), stringIs(effort, "max"):
		return "high", nil
	}
	return "", refuse("output_config.effort", "must be low, medium, high, xhigh or max")
}
