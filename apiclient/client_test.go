package apiclient

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestEveryOperationHasAMethod fails when openapi.json was updated but the
// client was not generated again from it.
func TestEveryOperationHasAMethod(t *testing.T) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	client := reflect.TypeFor[ClientWithResponsesInterface]()
	n := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			name := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:] + "WithResponse"
			if _, ok := client.MethodByName(name); !ok {
				name = strings.TrimSuffix(name, "WithResponse") + "WithBodyWithResponse"
			}
			if _, ok := client.MethodByName(name); !ok {
				t.Errorf("%s %s (%s) has no client method: run go generate ./apiclient", method, path, op.OperationID)
			}
			n++
		}
	}
	if n < 40 {
		t.Fatalf("only %d operations in openapi.json", n)
	}
}
