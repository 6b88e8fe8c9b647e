package errscrub

// Error returns err with its message passed through scrub (nil for nil).
// errors.Is and errors.As still see err (through Unwrap); only the message
// is what the user is shown.
func Error(err error, scrub func(string) string) error {
	if err == nil {
		return nil
	}
	return &scrubbed{msg: scrub(err.Error()), err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
