package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// A runner's reported connection errors add up to the latest five.
func TestRecordConnectionErrors(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		report := func(kinds ...string) {
			var errs []protocol.ConnectionError
			for _, k := range kinds {
				errs = append(errs, protocol.ConnectionError{At: time.Now().UTC(), Kind: k, Message: k + " failed"})
			}
			if err := f.s.RecordConnectionErrors(ctx, f.runner.ID, errs); err != nil {
				t.Fatal(err)
			}
		}
		report("dns", "tls")
		report()
		report("proxy", "network", "http", "clock")
		r, err := f.s.GetRunner(ctx, f.org.ID, f.runner.ID)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range r.ConnectionErrors {
			kinds = append(kinds, e.Kind)
		}
		if !reflect.DeepEqual(kinds, []string{"tls", "proxy", "network", "http", "clock"}) {
			t.Fatalf("kept %v, want the latest five in order", kinds)
		}
	})
}
