package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestInputsFromFileAndFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "inputs.yaml")
	if err := os.WriteFile(file, []byte("region: eu-west-1\napi_replicas: 3\ndb_password: from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := parseInputs([]string{"db_password=a=b", "empty="}, file)
	want := map[string]string{"region": "eu-west-1", "api_replicas": "3", "db_password": "a=b", "empty": ""}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseInputs = %v, %v; want %v", got, err, want)
	}
	if err := os.WriteFile(file, []byte("nested: {a: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseInputs(nil, file); err == nil {
		t.Error("a nested value was taken")
	}
	if _, err := parseInputs([]string{"=x"}, ""); err == nil {
		t.Error("an input without a name was taken")
	}
}
