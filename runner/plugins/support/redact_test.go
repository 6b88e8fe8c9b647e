package support

import (
	"strings"
	"testing"
)

func TestRedactorRemovesSensitiveValuesAndCredentials(t *testing.T) {
	r := newRedactor([]string{"s3cr3t-db-pass", `quo"te`, "", "postgres://app:s3cr3t-db-pass@db:5432/app"})
	cases := map[string]string{
		"connecting with s3cr3t-db-pass now":                   "connecting with [REDACTED] now",
		`{"password":"quo\"te"}`:                               `{"password":"[REDACTED]"}`,
		"url postgres://app:s3cr3t-db-pass@db:5432/app failed": "url [REDACTED] failed",
		"dsn mysql://root:hunter2@db/x":                        "dsn mysql://root:[REDACTED]@db/x",
		"Authorization: Bearer eyJhbGciOi.abc.def":             "Authorization: Bearer [REDACTED]",
		"token opat_0123456789abcdef leaked":                   "token [REDACTED] leaked",
		"runner oprn_AbCdEf012345 and oprg_zzzzzzzz":           "runner [REDACTED] and [REDACTED]",
		"state opst_abcdefgh":                                  "state [REDACTED]",
		"key AKIAABCDEFGHIJKLMNOP here":                        "key [REDACTED] here",
		"password=hunter2&user=x":                              "password=[REDACTED]&user=x",
		"DB_PASSWORD: hunter2":                                 "DB_PASSWORD: [REDACTED]",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG":        "aws_secret_access_key = [REDACTED]",
		"client-key-data: LS0tLS1CRUdJTg==":                    "client-key-data: [REDACTED]",
		"nothing secret in here":                               "nothing secret in here",
	}
	for in, want := range cases {
		if got := r.redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	pem := "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----\nb"
	if got := r.redact(pem); got != "a\n[REDACTED]\nb" {
		t.Errorf("PEM key: got %q", got)
	}
	if got := r.redact("x -----BEGIN PRIVATE KEY-----\ncut off"); strings.Contains(got, "cut off") {
		t.Errorf("a cut-off PEM key shows: %q", got)
	}
}

// A log cut at a byte limit keeps whole lines only, so a credential the cut
// went through leaves no part of itself for the redactor to miss.
func TestCutLogsKeepWholeLines(t *testing.T) {
	const secret = "s3cret-pa55word-xyz"
	log := []byte("line one\npassword " + secret + "\nline three\n")
	cutEnd := log[:len("line one\npassword s3cret")] // as LimitBytes cuts a container's log
	if got := string(toLastLine(cutEnd, len(cutEnd))); got != "line one\n" {
		t.Errorf("end cut: %q", got)
	}
	if got := string(toLastLine(log, len(log)+1)); got != string(log) {
		t.Errorf("a log under its limit changed: %q", got)
	}
	cutStart := log[len("line one\npassword s3c"):] // as the runner's log is cut to its tail
	if got := string(fromFirstLine(cutStart)); got != "line three\n" {
		t.Errorf("start cut: %q", got)
	}
	if got := string(fromFirstLine([]byte("no line break"))); got != "" {
		t.Errorf("a cut line alone: %q", got)
	}
}

// A logs request prints at most maxLogsRequestBytes, whole lines, redacted,
// then says it was capped and prints nothing more.
func TestLogsRequestOutputIsCapped(t *testing.T) {
	var b strings.Builder
	o := &logsOut{w: &b, r: newRedactor([]string{"s3cret-pa55word"}), left: 64}
	o.printf("line %d with s3cret-pa55word\n", 1)
	o.printf("line 2\nline 3 is long enough to pass the cap of this test\n")
	o.printf("line 4\n")
	got := b.String()
	want := "line 1 with [REDACTED]\nline 2\n== output capped at 16 MiB: ask for less (one workload, a shorter --since, --tail)\n"
	if got != want {
		t.Fatalf("printed %q\nwant    %q", got, want)
	}
}
