package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/spf13/cobra"
	sse "github.com/tmaxmax/go-sse"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) logsCmd() *cobra.Command {
	var follow bool
	var step, opRef string
	cmd := c.withAPI(&cobra.Command{
		Use:   "logs JOB [--follow] | logs INSTALL --step STEP [--operation OP] [--follow]",
		Short: "Print a job's logs; with --follow, as they come until the job ends",
		Long: "Print a job's logs (`outpostctl jobs list INSTALL` and `operations show` name the jobs). With\n" +
			"--step, the argument is an install and the job is that step's in its latest operation (or\n" +
			"--operation): its apply job, else its plan or sync job. With -o json, one LogChunk per line.",
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, args []string) error {
		job := args[0]
		if step != "" {
			var err error
			if job, err = a.stepJob(ctx, args[0], opRef, step); err != nil {
				return err
			}
		}
		sink := c.chunkPrinter(false)
		if follow {
			_, err := a.followLogs(ctx, job, sink)
			return err
		}
		return a.readLogs(ctx, job, sink)
	})
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream the logs until the job ends")
	cmd.Flags().StringVar(&step, "step", "", "the argument is an install: the logs of this step's job")
	cmd.Flags().StringVar(&opRef, "operation", "", "with --step: the operation (default: the install's latest)")
	return cmd
}

// chunkPrinter prints a chunk's data, or with -o json the chunk as a line.
// With command, only the command's own: stdout on stdout, stderr on stderr
// (the runner's system lines are left out).
func (c *cli) chunkPrinter(command bool) func(apiclient.LogChunk) error {
	return func(ch apiclient.LogChunk) error {
		if c.output == "json" {
			b, err := json.Marshal(ch)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.stdout, "%s\n", b)
			return err
		}
		w := c.stdout
		switch {
		case command && ch.Stream == apiclient.System:
			return nil
		case command && ch.Stream == apiclient.Stderr:
			w = c.stderr
		}
		_, err := io.WriteString(w, ch.Data)
		return err
	}
}

// stepJob is the job of the install's step: apply, else plan, else sync.
func (a *api) stepJob(ctx context.Context, instRef, opRef, step string) (string, error) {
	inst, err := a.install(ctx, instRef)
	if err != nil {
		return "", err
	}
	op, _, err := a.operation(ctx, inst, opRef)
	if err != nil {
		return "", err
	}
	for _, s := range *op.Steps {
		if s.Name != step {
			continue
		}
		for _, id := range []*string{s.ApplyJobId, s.PlanJobId, s.SyncJobId} {
			if id != nil && *id != "" {
				return *id, nil
			}
		}
		return "", fail(exitNotFound, "step %s of %s %s has no job yet (it is %s)", step, opTitle(op), op.Id, s.Status)
	}
	return "", fail(exitNotFound, "%s %s has no step %q (`outpostctl operations show %s %s`)", opTitle(op), op.Id, step, inst.Name, op.Id)
}

// readLogs prints every page of the job's logs.
func (a *api) readLogs(ctx context.Context, job string, sink func(apiclient.LogChunk) error) error {
	after := ""
	for {
		r, err := check(a.GetJobLogsWithResponse(ctx, job, &apiclient.GetJobLogsParams{After: &after}))
		if err != nil {
			return err
		}
		for _, ch := range r.JSON200.Chunks {
			if err := sink(ch); err != nil {
				return err
			}
		}
		if len(r.JSON200.Chunks) == 0 || r.JSON200.NextCursor == after {
			return nil
		}
		after = r.JSON200.NextCursor
	}
}

// logEnd is the data of the stream's end event.
type logEnd struct {
	Status   string `json:"status"`
	ExitCode *int   `json:"exit_code"`
	Error    string `json:"error"`
}

// followLogs streams the job's logs (Server-Sent Events) into sink until
// the end event, reconnecting after the last chunk if the stream breaks.
func (a *api) followLogs(ctx context.Context, job string, sink func(apiclient.LogChunk) error) (logEnd, error) {
	cursor, broken := "", 0
	for {
		end, got, done, err := a.followOnce(ctx, job, &cursor, sink)
		if done || err != nil {
			return end, err
		}
		if got {
			broken = 0
		}
		if broken++; broken > 3 {
			return end, fail(exitUnreachable, "the log stream of job %s keeps breaking before its end; try again later", job)
		}
	}
}

// followOnce reads one stream: got reports progress (chunks read, or the
// server's resume event), done the end event.
func (a *api) followOnce(ctx context.Context, job string, cursor *string, sink func(apiclient.LogChunk) error) (end logEnd, got, done bool, err error) {
	follow := true
	params := &apiclient.GetJobLogsParams{Follow: &follow}
	if *cursor != "" {
		params.After = cursor
	}
	resp, err := a.ClientInterface.GetJobLogs(ctx, job, params)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return end, false, false, &apiError{Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		return end, false, false, &apiError{Status: resp.StatusCode, Body: body}
	}
	for ev, rerr := range sse.Read(resp.Body, &sse.ReadConfig{MaxEventSize: 4 << 20}) {
		if rerr != nil || ctx.Err() != nil {
			break
		}
		switch ev.Type {
		case "log":
			var ch apiclient.LogChunk
			if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
				return end, got, false, fmt.Errorf("read a log event: %w", err)
			}
			if err := sink(ch); err != nil {
				return end, got, false, err
			}
			*cursor, got = ev.LastEventID, true
		case "resume": // the server ends long streams; not a break
			var r struct {
				After string `json:"after"`
			}
			if json.Unmarshal([]byte(ev.Data), &r) == nil && r.After != "" {
				*cursor = r.After
			}
			return end, true, false, nil
		case "end":
			err := json.Unmarshal([]byte(ev.Data), &end)
			return end, got, true, err
		}
	}
	return end, got, false, ctx.Err()
}
