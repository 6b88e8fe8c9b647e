package terraformtest

import (
	"os"
	"testing"

	"github.com/outpost-dev/outpost/runner/plugins/terraform"
)

// Path returns the terraform binary's path, or why there is none.
func Path() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return terraform.Find(os.Getenv(terraform.EnvTerraform), os.Getenv("PATH"), wd)
}

// Find returns the terraform binary's path; without one the test fails.
func Find(t testing.TB) string {
	t.Helper()
	tf, err := Path()
	if err != nil {
		t.Fatalf("%v (go tool task tools builds one)", err)
	}
	return tf
}
