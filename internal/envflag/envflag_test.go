package envflag

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// newSet is the set the tests parse: a string flag with an alias, a
// duration, and a flag kept to the command line.
func newSet(out *bytes.Buffer) (*FlagSet, *string, *time.Duration, *string) {
	f := New("outpost test", "OUTPOST_")
	f.SetOutput(out)
	url := f.String("database-url", "sqlite", "the database")
	f.Alias("database-url", "DATABASE_URL")
	wait := f.Duration("claim-wait", 25*time.Second, "how long to wait")
	local := f.String("pid-file", "", "where the pid goes")
	f.NoEnv("pid-file")
	f.String("kube-assets", "", "where etcd is")
	f.Env("kube-assets", "KUBE_ASSETS")
	return f, url, wait, local
}

func TestPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		wantURL  string
		wantWait time.Duration
		wantPid  string
	}{
		{"defaults", nil, nil, "sqlite", 25 * time.Second, ""},
		{"alias beats default", nil, map[string]string{"DATABASE_URL": "pg://alias"}, "pg://alias", 25 * time.Second, ""},
		{"env beats alias", nil, map[string]string{"DATABASE_URL": "pg://alias", "OUTPOST_DATABASE_URL": "pg://env"}, "pg://env", 25 * time.Second, ""},
		{"flag beats env", []string{"-database-url", "pg://flag"}, map[string]string{"DATABASE_URL": "pg://alias", "OUTPOST_DATABASE_URL": "pg://env"}, "pg://flag", 25 * time.Second, ""},
		{"empty variable is unset", nil, map[string]string{"OUTPOST_DATABASE_URL": "", "DATABASE_URL": "pg://alias"}, "pg://alias", 25 * time.Second, ""},
		{"typed value from env", nil, map[string]string{"OUTPOST_CLAIM_WAIT": "3s"}, "sqlite", 3 * time.Second, ""},
		{"typed flag beats env", []string{"--claim-wait=5s"}, map[string]string{"OUTPOST_CLAIM_WAIT": "3s"}, "sqlite", 5 * time.Second, ""},
		{"no env for a local flag", nil, map[string]string{"OUTPOST_PID_FILE": "/tmp/pid"}, "sqlite", 25 * time.Second, ""},
		{"local flag from the command line", []string{"-pid-file", "/tmp/pid"}, nil, "sqlite", 25 * time.Second, "/tmp/pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f, url, wait, pid := newSet(&out)
			if err := f.Parse(tc.args, func(k string) string { return tc.env[k] }); err != nil {
				t.Fatalf("Parse: %v\n%s", err, out.String())
			}
			if *url != tc.wantURL || *wait != tc.wantWait || *pid != tc.wantPid {
				t.Errorf("got -database-url %q -claim-wait %s -pid-file %q, want %q %s %q", *url, *wait, *pid, tc.wantURL, tc.wantWait, tc.wantPid)
			}
		})
	}
}

func TestBadValuesAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"from the environment", nil, map[string]string{"OUTPOST_CLAIM_WAIT": "soon"}, []string{"OUTPOST_CLAIM_WAIT", "-claim-wait"}},
		{"from the command line", []string{"-claim-wait", "soon"}, nil, []string{"-claim-wait"}},
		{"an unknown flag", []string{"-colour"}, nil, []string{"-colour"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f, _, _, _ := newSet(&out)
			err := f.Parse(tc.args, func(k string) string { return tc.env[k] })
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) || !strings.Contains(out.String(), w) {
					t.Errorf("error %q (printed %q) does not name %s", err, out.String(), w)
				}
			}
		})
	}
}

func TestHelpListsVariables(t *testing.T) {
	var out bytes.Buffer
	f, _, _, _ := newSet(&out)
	if err := f.Parse([]string{"-h"}, func(string) string { return "" }); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse -h: %v", err)
	}
	help := out.String()
	for _, w := range []string{"(env OUTPOST_DATABASE_URL, or DATABASE_URL)", "(env OUTPOST_CLAIM_WAIT)", "(env KUBE_ASSETS)"} {
		if !strings.Contains(help, w) {
			t.Errorf("help lacks %q:\n%s", w, help)
		}
	}
	if strings.Contains(help, "OUTPOST_PID_FILE") {
		t.Errorf("help names a variable for a flag kept to the command line:\n%s", help)
	}
}

// Flags may follow the arguments (outpost org create acme -data-dir X); "--"
// keeps what follows it as arguments.
func TestFlagsAfterArguments(t *testing.T) {
	var out bytes.Buffer
	f, url, wait, _ := newSet(&out)
	args := []string{"acme", "-database-url", "postgres://x", "beta", "-claim-wait=3s", "--", "-not-a-flag"}
	if err := f.Parse(args, func(string) string { return "" }); err != nil {
		t.Fatalf("Parse: %v\n%s", err, out.String())
	}
	if *url != "postgres://x" || *wait != 3*time.Second {
		t.Errorf("flags after the arguments: -database-url %q, -claim-wait %v", *url, *wait)
	}
	if got := strings.Join(f.Args(), " "); got != "acme beta -not-a-flag" {
		t.Errorf("Args() = %q, want the arguments in order", got)
	}
	f, _, _, _ = newSet(&out)
	if err := f.Parse([]string{"acme", "-nope"}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "-nope") {
		t.Errorf("an unknown flag after an argument: %v, want an error naming it", err)
	}
}
