package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// Limits of a debug command.
const (
	maxCommandArgs        = 64
	maxCommandArgBytes    = 4 << 10
	defaultCommandTimeout = 300  // seconds
	maxCommandTimeout     = 3600 // seconds
	maxCommandWait        = 60   // seconds a GET may wait for a command to finish
)

// validCommand checks a command's request; a 400 names the field.
func validCommand(r wire.CreateCommandRequest) error {
	switch n := len(r.Command); {
	case r.Command == nil:
		return apierr.Invalid("command", `is required: the program and its arguments, e.g. ["df", "-h"]`)
	case n == 0:
		return apierr.Invalid("command", "must hold at least the program to run")
	case n > maxCommandArgs:
		return apierr.Invalid("command", "has %d arguments; at most %d", n, maxCommandArgs)
	}
	for i, arg := range r.Command {
		field := fmt.Sprintf("command[%d]", i)
		switch {
		case len(arg) > maxCommandArgBytes:
			return apierr.Invalid(field, "is %d bytes; an argument holds at most %d", len(arg), maxCommandArgBytes)
		case strings.ContainsRune(arg, 0):
			return apierr.Invalid(field, "must not contain a NUL byte")
		case i == 0 && arg == "":
			return apierr.Invalid(field, "the program must not be empty")
		}
	}
	if t := r.TimeoutSeconds; t != nil && (*t < 1 || *t > maxCommandTimeout) {
		return apierr.Invalid("timeout_seconds", "%d is out of range: 1 to %d seconds", *t, maxCommandTimeout)
	}
	return nil
}

// commandView shows a command in the words of its request.
func commandView(c store.InstallCommand) wire.Command {
	return wire.Command{ID: c.ID, InstallID: c.InstallID, Command: nonNil(c.Args), TimeoutSeconds: c.TimeoutMS / 1000,
		WorkflowID: c.WorkflowID, JobID: c.JobID, Status: string(c.Status), ExitCode: c.ExitCode, Output: c.Output,
		Error: c.Error, StartedBy: c.StartedBy, CreatedAt: c.CreatedAt, FinishedAt: c.FinishedAt}
}

// commandFinished reports whether a command will not change any more.
func commandFinished(c store.InstallCommand) bool {
	switch c.Status {
	case status.JobSucceeded, status.JobFailed, status.JobCancelled:
		return true
	}
	return c.FinishedAt != nil
}

func (s *Server) createCommand(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, req, err := pathRequest[wire.CreateCommandRequest](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	if err := validCommand(req); err != nil {
		return err
	}
	if s.ops == nil {
		return errNoOps()
	}
	if err := s.refusedByRunner(ctx, inst, protocol.JobTypeCommand, req.Command[0], ""); err != nil {
		return err
	}
	timeout := defaultCommandTimeout
	if req.TimeoutSeconds != nil {
		timeout = *req.TimeoutSeconds
	}
	id, by := store.NewID("cmd"), caller(c).name()
	cmd, err := s.store.CreateInstallCommand(ctx, store.InstallCommand{ID: id, OrgID: org, InstallID: inst.ID,
		Args: req.Command, TimeoutMS: int64(timeout) * 1000, WorkflowID: contract.InstallCommandWorkflowID(inst.ID, id),
		StartedBy: by})
	if err != nil {
		return err
	}
	noteObject(ctx, "command_id", cmd.ID)
	err = s.startRecorded(ctx, "command", cmd.ID, func(ctx context.Context) error { return s.ops.StartInstallCommand(ctx, cmd) },
		func(ctx context.Context, _ error) error {
			now := s.now()
			cmd.Status, cmd.Error, cmd.FinishedAt = status.JobFailed, "the command's workflow could not be started", &now
			return s.store.UpdateInstallCommand(ctx, cmd)
		})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, commandView(cmd))
}

func (s *Server) listCommands(c echo.Context) error {
	return listBelowInstall(s, c, s.store.ListInstallCommands, func(cmds []store.InstallCommand) wire.CommandList {
		return wire.CommandList{Commands: views(cmds, commandView)}
	})
}

// installCommand reads the command named in the path, if it is one of the
// path's install's (in the token's org).
func (s *Server) installCommand(c echo.Context) (store.InstallCommand, error) {
	return installChild(s, c, "cmd", "command", s.store.GetInstallCommand,
		func(cmd store.InstallCommand) string { return cmd.InstallID })
}

func (s *Server) getCommand(c echo.Context) error {
	wait, err := queryInt(c, "wait", 0, 0, maxCommandWait)
	if err != nil {
		return err
	}
	cmd, err := s.installCommand(c)
	if err != nil {
		return err
	}
	if wait > 0 && !commandFinished(cmd) {
		if err := s.awaitClosed(c.Request().Context(), wait, "command", cmd.WorkflowID); err != nil {
			return err
		}
		if cmd, err = s.store.GetInstallCommand(c.Request().Context(), cmd.OrgID, cmd.ID); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, commandView(cmd))
}

// awaitClosed waits up to wait seconds (less if the API drains) for the workflow of a command or a
// support bundle (what) to close. Whatever goes wrong, the caller's row says where it is: only the lack of a workflow
// service is an error.
func (s *Server) awaitClosed(ctx context.Context, wait int, what, workflowID string) error {
	if s.ops == nil {
		return errNoOps()
	}
	ctx, cancel := s.waitContext(ctx, wait)
	defer cancel()
	if err := s.ops.AwaitWorkflow(ctx, workflowID); err != nil && ctx.Err() == nil {
		s.log.Warn("awaiting a "+what+"'s workflow failed", "workflow", workflowID, "err", err)
	}
	return nil
}

func (s *Server) cancelCommand(c echo.Context) error {
	cmd, err := s.installCommand(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	asked, err := s.cancelWorkflow(ctx, "command", cmd.WorkflowID, commandFinished(cmd), func() (bool, error) {
		cmd, err = s.store.GetInstallCommand(ctx, cmd.OrgID, cmd.ID)
		return commandFinished(cmd), err
	})
	switch {
	case err != nil:
		return err
	case asked:
		return c.JSON(http.StatusAccepted, commandView(cmd))
	}
	return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "command %s has already finished (%s)", cmd.ID, cmd.Status)
}

// cancelWorkflow asks the workflow of a command or an operation (what) to
// stop unless it has finished, and says whether it asked. When the ask
// fails, reread says whether it finished meanwhile; if not, that is the error.
func (s *Server) cancelWorkflow(ctx context.Context, what, workflowID string, finished bool, reread func() (bool, error)) (bool, error) {
	if s.ops == nil {
		return false, errNoOps()
	}
	if finished {
		return false, nil
	}
	err := s.ops.CancelWorkflow(ctx, workflowID)
	if err == nil {
		return true, nil
	}
	done, rerr := reread()
	switch {
	case rerr != nil:
		return false, rerr
	case !done:
		return false, opsFailed("cancelling the "+what, err)
	}
	return false, nil
}
