package envflag

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestInterspersedTakesFlagsAroundArguments(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	key := fs.String("key", "", "")
	args, exit, ok := Interspersed(fs, []string{"a.tar", "--key", "k.pem", "b"})
	if !ok || exit != 0 || *key != "k.pem" || !slices.Equal(args, []string{"a.tar", "b"}) {
		t.Errorf("got %q, exit %d, ok %v, key %q", args, exit, ok, *key)
	}
	if _, exit, ok := Interspersed(fs, []string{"a.tar", "--nope"}); ok || exit != 2 {
		t.Errorf("a bad flag: exit %d, ok %v; want 2", exit, ok)
	}
	if _, exit, ok := Interspersed(fs, []string{"-h"}); ok || exit != 0 {
		t.Errorf("-h: exit %d, ok %v; want 0", exit, ok)
	}
}
