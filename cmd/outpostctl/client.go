package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/outpost-dev/outpost/apiclient"
	"github.com/outpost-dev/outpost/internal/cliconfig"
)

// api is the generated client, bound to a context.
type api struct {
	*apiclient.ClientWithResponses
	ctx cliconfig.Context
}

// answer is what every generated response has.
type answer interface {
	StatusCode() int
	GetBody() []byte
}

// api is a client of the chosen context's API: --context, else
// $OUTPOST_CONTEXT, else the current context.
func (c *cli) api() (*api, error) {
	_, conf, err := loadConfig()
	if err != nil {
		return nil, err
	}
	name := c.context
	if name == "" {
		name = os.Getenv("OUTPOST_CONTEXT")
	}
	if name == "" {
		name = conf.Current
	}
	if name == "" {
		return nil, fail(exitUsage, "no context: run `outpostctl context add NAME --api URL --token-file FILE` (or start `outpost dev`, which writes one)")
	}
	ctx, ok := conf.Find(name)
	if !ok {
		return nil, fail(exitUsage, "no context %q: `outpostctl context list` shows them", name)
	}
	token, err := contextToken(ctx)
	if err != nil {
		return nil, err
	}
	auth := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
	client, err := apiclient.NewClientWithResponses(ctx.API, apiclient.WithRequestEditorFn(auth))
	if err != nil {
		return nil, fail(exitUsage, "context %q: %w", name, err)
	}
	c.used = ctx
	return &api{ClientWithResponses: client, ctx: ctx}, nil
}

// contextToken reads the context's token file, or else OUTPOST_TOKEN.
func contextToken(ctx cliconfig.Context) (string, error) {
	if ctx.TokenFile == "" {
		if t := strings.TrimSpace(os.Getenv("OUTPOST_TOKEN")); t != "" {
			return t, nil
		}
		return "", fail(exitUsage, "context %q has no token file and OUTPOST_TOKEN is unset: set it, or `outpostctl context add %s --api %s --token-file FILE`",
			ctx.Name, ctx.Name, ctx.API)
	}
	b, err := os.ReadFile(ctx.TokenFile)
	if err != nil {
		return "", fail(exitUsage, "context %q: read its token: %w", ctx.Name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// apiError is a call that failed: Err when the API could not be reached,
// else an answer other than a 2xx. run explains it (explain) with the
// context it was made in.
type apiError struct {
	Status int
	Body   []byte
	Err    error
}

func (e *apiError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("the API answered %d: %s", e.Status, e.Body)
}

// check turns a failed call, or an answer other than a 2xx, into an
// *apiError.
func check[R answer](r R, err error) (R, error) {
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return r, &apiError{Err: err}
	}
	if s := r.StatusCode(); s < 200 || s > 299 {
		return r, &apiError{Status: s, Body: r.GetBody()}
	}
	return r, nil
}

// notFound is err, or the message when err is the API's 404.
func notFound(err error, format string, args ...any) error {
	if e, ok := errors.AsType[*apiError](err); ok && e.Status == http.StatusNotFound {
		return fail(exitNotFound, format, args...)
	}
	return err
}

// explain is a one-line error naming what to do, and its exit code.
func explain(e *apiError, ctx cliconfig.Context) error {
	if e.Err != nil {
		return fail(exitUnreachable, "cannot reach the API at %s (context %q): %v; is it running? (`outpostctl context list` shows the URL)",
			ctx.API, ctx.Name, e.Err)
	}
	var body apiclient.Error
	_ = json.Unmarshal(e.Body, &body)
	msg := body.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if body.Field != nil && *body.Field != "" && !strings.HasPrefix(msg, *body.Field) {
		msg = *body.Field + ": " + msg
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		return fail(exitAuth, "the API refused the token of context %q (%s): put a valid API token in its token file, or `outpostctl context add %s --api %s --token-file FILE`",
			ctx.Name, msg, ctx.Name, ctx.API)
	case e.Status == http.StatusNotFound:
		return fail(exitNotFound, "not found: %s (`outpostctl apps list` and `outpostctl installs list` show what there is)", msg)
	case e.Status == http.StatusConflict:
		return fail(exitConflict, "conflict: %s (wait for what runs to finish, see `outpostctl installs show`, then try again)", msg)
	case e.Status >= 500:
		return fail(exitUnreachable, "the API failed (%d): %s; try again later", e.Status, msg)
	}
	return fail(exitUsage, "the API refused the request (%d): %s", e.Status, msg)
}
