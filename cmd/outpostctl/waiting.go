package main

import (
	"context"
	"io"
	"time"
)

// What the commands that wait for something share.

// pause waits d, or less if ctx ends (its error).
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// pollUntil calls step, then again every interval, until it says it is
// done, fails or ctx ends.
func pollUntil(ctx context.Context, every time.Duration, step func() (done bool, err error)) error {
	for {
		if done, err := step(); done || err != nil {
			return err
		}
		if err := pause(ctx, every); err != nil {
			return err
		}
	}
}

// progressOut is where a wait's progress lines go: stdout, or stderr with
// -o json (stdout then holds only what the wait ended on).
func (c *cli) progressOut() io.Writer {
	if c.output == "json" {
		return c.stderr
	}
	return c.stdout
}

// printEnded prints what a wait ended on, the API's answer body with -o
// json or else text's lines, then returns failed: exit code 6 when it did
// not succeed, or nil.
func (c *cli) printEnded(body []byte, text func(), failed error) error {
	if c.output == "json" {
		if err := c.printBody(body); err != nil {
			return err
		}
	} else {
		text()
	}
	return failed
}
