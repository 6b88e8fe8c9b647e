package plugins_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/outpost-dev/outpost/runner/plugins"
)

func TestSecretsScrubLogsSplitAcrossWrites(t *testing.T) {
	s := plugins.NewSecrets("pa55word-long", "pa55", "abc", "line-one\nline-two", `q"uote`)
	var out bytes.Buffer
	w := s.Writer(&out)
	for _, part := range []string{"a pa55w", "ord-long and pa5", "5, abc\n", `json "q\"uote" line-two`} {
		if _, err := io.WriteString(w, part); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "a (sensitive value) and (sensitive value), abc\n" + `json "(sensitive value)" (sensitive value)`
	if out.String() != want {
		t.Errorf("scrubbed logs %q, want %q", out.String(), want)
	}
}

func TestSecretsScrubJSONAndErrors(t *testing.T) {
	s := plugins.NewSecrets("s3cret", "123456")
	got, err := s.JSON(json.RawMessage(`{"a":"x s3cret y","n":123456,"m":1234567,"s3cret":[true]}`))
	if err != nil || !json.Valid(got) || string(got) != `{"(sensitive value)":[true],"a":"x (sensitive value) y","m":"(sensitive value)","n":"(sensitive value)"}` {
		t.Errorf("scrubbed JSON %s, %v", got, err)
	}
	base := errors.New("boom")
	e := s.Error(errJoin(base, "s3cret"))
	if e.Error() != "boom: (sensitive value)" || !errors.Is(e, base) {
		t.Errorf("scrubbed error %q (is the original: %v)", e, errors.Is(e, base))
	}
}

type wrapped struct {
	err error
	msg string
}

func (w wrapped) Error() string { return w.err.Error() + ": " + w.msg }
func (w wrapped) Unwrap() error { return w.err }

func errJoin(err error, msg string) error { return wrapped{err, msg} }
