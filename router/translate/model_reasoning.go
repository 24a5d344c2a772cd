package translate

// One reasoning setting in the words of each upstream: an effort (low,
// medium, high) or a thinking budget in tokens, each derived from the
// other through effortBudgets when the client gave the other.

// effort is the low, medium or high an upstream that speaks efforts gets
// ("": no thinking asked). minimal counts as low, xhigh as high.
func (r *Reasoning) effort() string {
	switch {
	case r.Off:
		return ""
	case r.Effort != "":
		switch r.Effort {
		case "none":
			return ""
		case "minimal", "low":
			return "low"
		case "medium":
			return "medium"
		}
		return "high"
	case r.Budget <= 0:
		return ""
	case r.Budget <= effortBudgets[1].budget:
		return "low"
	case r.Budget <= effortBudgets[2].budget:
		return "medium"
	}
	return "high"
}

// budget is the thinking budget an upstream that speaks budgets gets (0:
// no thinking asked).
func (r *Reasoning) budget() int64 {
	switch {
	case r.Off:
		return 0
	case r.Budget > 0:
		return r.Budget
	}
	for _, e := range effortBudgets {
		if e.effort == r.Effort {
			return e.budget
		}
	}
	return 0
}
