package appconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
)

// PoliciesDir holds the vendor's plan policies (*.rego, Rego v1); their
// tests (*_test.rego) may sit beside them and are not sent to runners.
const PoliciesDir = "policies"

// readPolicies reads and compiles policies/*.rego: a problem names the file
// and its line ("line 4").
func (c *Config) readPolicies(ps *problems) {
	var mods []protocol.PolicyModule
	for _, f := range c.files {
		if !strings.HasPrefix(f, PoliciesDir+"/") || !planpolicy.IsPolicyFile(path.Base(f)) {
			continue
		}
		b, err := fs.ReadFile(c.fsys, f)
		if err != nil {
			ps.add(f, "", "cannot read: %v", err)
			continue
		}
		mods = append(mods, protocol.PolicyModule{File: f, Source: string(b)})
	}
	var pps planpolicy.Problems
	if err := planpolicy.Parse(mods); errors.As(err, &pps) {
		for _, p := range pps {
			key := ""
			if p.Line > 0 {
				key = fmt.Sprintf("line %d", p.Line)
			}
			ps.add(p.File, key, "%s", p.Message)
		}
		return
	} else if err != nil {
		ps.add(PoliciesDir, "", "%v", err)
		return
	}
	c.policies = mods
}

// Policies are the vendor's plan policies, for a job's manifest.
func (c *Config) Policies() []protocol.PolicyModule { return c.policies }
