package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/notify"
)

const (
	defaultListLimit = 50
	maxListLimit     = 200
	defaultLogPage   = 200
	maxLogPage       = 1000
	// followBatch is how many chunks a follower reads at a time.
	followBatch = 500
)

func (s *Server) listInstallJobs(c echo.Context) error {
	return listBelowInstall(s, c, s.store.ListJobs, func(jobs []store.Job) wire.JobList {
		return wire.JobList{Jobs: views(jobs, jobView)}
	})
}

// jobView shows a job. Its manifest, inputs and outputs are never shown
// (they may hold rendered secrets).
func jobView(j store.Job) wire.Job {
	return wire.Job{ID: j.ID, OrgID: j.OrgID, RunnerID: j.RunnerID, InstallID: j.InstallID, IdempotencyKey: j.Key,
		Type: j.Type, Status: string(j.Status), Attempt: j.Attempt, TimeoutMS: j.TimeoutMS, LeaseExpiresAt: j.LeaseExpiresAt,
		CancelRequestedAt: j.CancelRequestedAt, ExitCode: j.ExitCode, Error: j.Error, InputsDeferred: j.InputsDeferred,
		InputsAt: j.InputsAt, InputsWaitMS: j.InputsWaitMS, CreatedAt: j.CreatedAt, StartedAt: j.StartedAt,
		FinishedAt: j.FinishedAt, UpdatedAt: j.UpdatedAt}
}

func attemptView(a store.JobAttempt) wire.JobAttempt {
	return wire.JobAttempt{Attempt: a.Attempt, RunnerID: a.RunnerID, RunnerVersion: a.RunnerVersion, Status: string(a.Status),
		ClaimedAt: a.ClaimedAt, FinishedAt: a.FinishedAt, LastSeq: a.LastSeq, Error: a.Error}
}

func jobEventView(e store.JobEvent) wire.JobEvent {
	return wire.JobEvent{Attempt: e.Attempt, Status: string(e.Status), Message: e.Message, At: e.CreatedAt}
}

func logChunkView(ch store.JobLogChunk) wire.LogChunk {
	return wire.LogChunk{Attempt: ch.Attempt, Seq: ch.Seq, Stream: ch.Stream, Data: ch.Data, Time: ch.Time}
}

func (s *Server) getJob(c echo.Context) error {
	ctx := c.Request().Context()
	job, err := s.store.GetJob(ctx, orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	attempts, events, err := s.store.JobHistory(ctx, job.ID)
	if err != nil {
		return fmt.Errorf("history of job %s: %w", job.ID, err)
	}
	waiting, err := s.waiting(ctx, job)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.JobDetail{Job: jobView(job), Attempts: views(attempts, attemptView),
		History: views(events, jobEventView), Waiting: waiting})
}

// parseCursor reads a log cursor, "<attempt>.<seq>".
func parseCursor(field, v string) (store.LogCursor, error) {
	a, sq, ok := strings.Cut(v, ".")
	attempt, err1 := strconv.Atoi(a)
	seq, err2 := strconv.ParseInt(sq, 10, 64)
	if !ok || err1 != nil || err2 != nil || attempt < 0 || seq < 0 {
		return store.LogCursor{}, apierr.Invalid(field, "%q is not a log cursor: want <attempt>.<seq> as given in next_cursor, e.g. 1.42", v)
	}
	return store.LogCursor{Attempt: attempt, Seq: seq}, nil
}

func formatCursor(c store.LogCursor) string { return fmt.Sprintf("%d.%d", c.Attempt, c.Seq) }

func (s *Server) jobLogs(c echo.Context) error {
	ctx := c.Request().Context()
	job, err := s.store.GetJob(ctx, orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	var cursor store.LogCursor
	if v := c.QueryParam("after"); v != "" {
		if cursor, err = parseCursor("after", v); err != nil {
			return err
		}
	} else if v := c.Request().Header.Get("Last-Event-ID"); v != "" {
		// An EventSource that reconnects resumes after the last event it got.
		if cursor, err = parseCursor("Last-Event-ID", v); err != nil {
			return err
		}
	}
	follow := false
	if v := c.QueryParam("follow"); v != "" {
		if follow, err = strconv.ParseBool(v); err != nil {
			return apierr.Invalid("follow", "%q must be true or false", v)
		}
	}
	if follow {
		return s.followLogs(c, job, cursor)
	}
	limit, err := queryInt(c, "limit", defaultLogPage, 1, maxLogPage)
	if err != nil {
		return err
	}
	chunks, err := s.store.ListLogs(ctx, job.ID, cursor, limit)
	if err != nil {
		return fmt.Errorf("logs of job %s: %w", job.ID, err)
	}
	if n := len(chunks); n > 0 {
		cursor = store.LogCursor{Attempt: chunks[n-1].Attempt, Seq: chunks[n-1].Seq}
	}
	return c.JSON(http.StatusOK, wire.LogPage{Chunks: views(chunks, logChunkView), NextCursor: formatCursor(cursor)})
}

// followLogs streams a job's logs after cursor as Server-Sent Events, woken by the bus (and
// followTick), until the job ended and every line was sent (or logGrace passed), the client left,
// or followMax passed or the API drains (then a `resume` event: the client reconnects after its
// last cursor).
func (s *Server) followLogs(c echo.Context, job store.Job, cursor store.LogCursor) error {
	ctx := c.Request().Context()
	// Subscribe before the first read, so nothing that happens after it is missed.
	wake, unsubscribe := s.store.Bus().Subscribe(notify.JobTopic(job.ID))
	defer unsubscribe()
	wakeLogs, unsubscribeLogs := s.store.Bus().Subscribe(notify.JobLogsTopic(job.ID))
	defer unsubscribeLogs()
	tick := time.NewTicker(s.followTick)
	defer tick.Stop()
	limit := time.NewTimer(s.followMax)
	defer limit.Stop()

	w := c.Response()
	// The server's write timeout would cut the stream: it lasts followMax
	// (a client that stops reading, a minute more).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.followMax + time.Minute))
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set(echo.HeaderCacheControl, "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: don't buffer the stream
	w.WriteHeader(http.StatusOK)
	w.Flush()

	var grace <-chan time.Time // set once the job is finished but lines are missing
	for {
		// Read the job before its logs: if it was finished then, every line
		// it delivered before finishing is in the read that follows.
		j, err := s.store.GetJob(ctx, job.OrgID, job.ID)
		if err != nil {
			return s.streamFailed(c, err)
		}
		chunks, err := s.store.ListLogs(ctx, job.ID, cursor, followBatch)
		if err != nil {
			return s.streamFailed(c, err)
		}
		for _, ch := range chunks {
			cursor = store.LogCursor{Attempt: ch.Attempt, Seq: ch.Seq}
			if err := writeEvent(w, "log", formatCursor(cursor), logChunkView(ch)); err != nil {
				return nil // the client went away
			}
		}
		w.Flush()
		if len(chunks) == followBatch {
			continue
		}
		if status.JobTerminal(j.Status) {
			complete, err := s.logsComplete(ctx, j, cursor)
			if err != nil {
				return s.streamFailed(c, err)
			}
			if complete {
				return s.endStream(w, j)
			}
			if grace == nil {
				grace = time.After(s.logGrace)
			}
		}
		if s.followIdle != nil {
			s.followIdle(j, cursor)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-grace:
			return s.endStream(w, j)
		case <-limit.C:
			return resumeStream(w, cursor)
		case <-s.draining.Done(): // the server shuts down: go on at another replica
			return resumeStream(w, cursor)
		case <-wake:
		case <-wakeLogs:
		case <-tick.C:
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return nil
			}
			w.Flush()
		}
	}
}

// logsComplete reports whether cursor is at or past the last line the job's
// final attempt reported when it completed.
func (s *Server) logsComplete(ctx context.Context, j store.Job, cursor store.LogCursor) (bool, error) {
	if j.Attempt == 0 {
		return true, nil // never ran
	}
	attempts, _, err := s.store.JobHistory(ctx, j.ID)
	if err != nil {
		return false, fmt.Errorf("history of job %s: %w", j.ID, err)
	}
	var lastSeq int64
	for _, a := range attempts {
		if a.Attempt == j.Attempt {
			lastSeq = a.LastSeq
		}
	}
	return lastSeq == 0 || cursor.Attempt > j.Attempt || (cursor.Attempt == j.Attempt && cursor.Seq >= lastSeq), nil
}

// resumeStream ends a stream that has not reached its end: the client
// reconnects after cursor.
func resumeStream(w *echo.Response, cursor store.LogCursor) error {
	_ = writeEvent(w, "resume", "", wire.LogResume{After: formatCursor(cursor)})
	w.Flush()
	return nil
}

func (s *Server) endStream(w *echo.Response, j store.Job) error {
	_ = writeEvent(w, "end", "", wire.LogEnd{Status: string(j.Status), ExitCode: j.ExitCode, Error: j.Error})
	w.Flush()
	return nil
}

// streamFailed ends a stream whose headers are sent: the error goes in an
// `error` event, its cause to the log.
func (s *Server) streamFailed(c echo.Context, err error) error {
	if c.Request().Context().Err() != nil {
		return nil // the client went away; the error is only that
	}
	s.log.Error("following logs failed", "path", c.Path(), "job", c.Param("id"), "err", err)
	w := c.Response()
	_ = writeEvent(w, "error", "", wire.StreamError{Message: "internal error; reconnect to resume"})
	w.Flush()
	return nil
}

// writeEvent writes one Server-Sent Event whose data is v as JSON (one line:
// JSON escapes newlines).
func writeEvent(w *echo.Response, event, id string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", event, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\n", event)
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	fmt.Fprintf(&b, "data: %s\n\n", data)
	_, err = w.Write(b.Bytes())
	return err
}
