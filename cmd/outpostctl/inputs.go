package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/outpost-dev/outpost/apiclient"
)

// parseInputs merges --input-file (a YAML or JSON map of name to value) and
// the --input name=value flags, which win.
func parseInputs(flags []string, file string) (map[string]string, error) {
	in := map[string]string{}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fail(exitUsage, "--input-file: %w", err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fail(exitUsage, "--input-file %s: want a map of input name to value: %w", file, err)
		}
		for k, v := range m {
			switch v.(type) {
			case map[string]any, []any, nil:
				return nil, fail(exitUsage, "--input-file %s: %s: want a string, number or boolean", file, k)
			}
			in[k] = fmt.Sprint(v)
		}
	}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fail(exitUsage, "--input %q: want name=value", f)
		}
		in[name] = value
	}
	return in, nil
}

// inputRequests are the inputs in name order, sensitive where the app's
// latest config declares them so (none when it has no config yet).
func (a *api) inputRequests(ctx context.Context, appID string, in map[string]string) ([]apiclient.InputRequest, error) {
	sensitive := map[string]bool{}
	r, err := a.GetAppConfigWithResponse(ctx, appID, "latest")
	if err == nil && r.StatusCode() == http.StatusNotFound {
		r, err = nil, nil
	} else if r, err = check(r, err); err != nil {
		return nil, err
	}
	if r != nil {
		for _, i := range r.JSON200.Inputs {
			sensitive[i.Name] = i.Sensitive
		}
	}
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]apiclient.InputRequest, len(names))
	for i, n := range names {
		v, s := in[n], sensitive[n]
		out[i] = apiclient.InputRequest{Name: n, Value: &v, Sensitive: &s}
	}
	return out, nil
}
