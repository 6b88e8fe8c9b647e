package main

import (
	"fmt"
	"io"
	"time"
)

// updateCommand shows the runner update waiting for the customer, and
// accepts it: `outpost-runner update` and `outpost-runner update accept VERSION`.
func updateCommand(args []string, stdout, stderr io.Writer) int {
	var accept string
	if len(args) > 0 && args[0] == "accept" {
		if len(args) < 2 || args[1] == "" || args[1][0] == '-' {
			fmt.Fprintln(stderr, "outpost-runner update accept: VERSION is required (the version `outpost-runner update` shows)")
			return 2
		}
		accept, args = args[1], args[2:]
	}
	fs, state := stateFlags("update", stderr)
	if code := parse(fs, args); code >= 0 {
		return code
	}
	st := state()
	if accept != "" {
		if err := st.AcceptUpdate(accept); err != nil {
			fmt.Fprintf(stderr, "outpost-runner update accept: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "runner %s accepted: the running runner switches to it within seconds\n", accept)
		return 0
	}
	h, ok, err := st.Held()
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "outpost-runner update: %v\n", err)
		return 1
	case !ok:
		fmt.Fprintln(stdout, "no runner update is waiting for the customer")
	default:
		fmt.Fprintf(stdout, "runner %s is available since %s (signed release, binary %s): accept it with `outpost-runner update accept %s`\n",
			h.Manifest.Version, h.Since.Format(time.RFC3339), h.Release.BinaryDigest, h.Manifest.Version)
	}
	return 0
}
