package protocol

import "encoding/json"

// ScrubLeaves appends to out the values within v (a decoded JSON value,
// numbers as json.Number) as text: every string and number, at any depth.
// They are what a runner scrubs from a job's logs when v is sensitive
// (TerraformManifest.Scrub, HelmManifest.SensitiveValues).
func ScrubLeaves(out []string, v any) []string {
	switch v := v.(type) {
	case string:
		return append(out, v)
	case json.Number:
		return append(out, v.String())
	case map[string]any:
		for _, x := range v {
			out = ScrubLeaves(out, x)
		}
	case []any:
		for _, x := range v {
			out = ScrubLeaves(out, x)
		}
	}
	return out
}
