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
