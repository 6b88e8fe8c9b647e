package main

import (
	"fmt"
	"strings"

	"github.com/outpost-dev/outpost/apiclient"
)

// policyLines are what a step's plan policies said that a person must see:
// one line per denial, failure and warning; nothing for a policy that passed.
func policyLines(results *[]apiclient.PolicyResult) []string {
	if results == nil {
		return nil
	}
	var out []string
	for _, r := range *results {
		name := fmt.Sprintf("%s policy %s", r.Source, r.Policy)
		for _, m := range deref2(r.Deny) {
			out = append(out, name+" denies: "+m)
		}
		if e := deref(r.Error); e != "" {
			out = append(out, name+" failed: "+e)
		}
		for _, m := range deref2(r.Warn) {
			out = append(out, name+" warns: "+m)
		}
	}
	return out
}

// policySummary is one line on every policy that ran: "3 plan policies: 2 passed, 1 warns".
func policySummary(results *[]apiclient.PolicyResult) string {
	if results == nil || len(*results) == 0 {
		return ""
	}
	passed, warned, denied := 0, 0, 0
	for _, r := range *results {
		switch {
		case deref(r.Error) != "" || len(deref2(r.Deny)) > 0:
			denied++
		case len(deref2(r.Warn)) > 0:
			warned++
		default:
			passed++
		}
	}
	parts := []string{fmt.Sprintf("%d passed", passed)}
	if warned > 0 {
		parts = append(parts, fmt.Sprintf("%d warn", warned))
	}
	if denied > 0 {
		parts = append(parts, fmt.Sprintf("%d deny", denied))
	}
	return fmt.Sprintf("%d plan policies: %s", len(*results), strings.Join(parts, ", "))
}

func deref2(s *[]string) []string {
	if s == nil {
		return nil
	}
	return *s
}
