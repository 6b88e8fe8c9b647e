package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) jobsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "List an install's jobs, show one (its logs: `outpostctl logs JOB`)"}
	cmd.AddCommand(c.jobsListCmd(), c.jobsShowCmd())
	return cmd
}

func (c *cli) jobsListCmd() *cobra.Command {
	return c.installListCmd("List the jobs of an install's runner, newest first",
		func(ctx context.Context, a *api, inst string, limit *int) error {
			r, err := check(a.ListInstallJobsWithResponse(ctx, inst, &apiclient.ListInstallJobsParams{Limit: limit}))
			return printRows(c, r, err, "ID\tTYPE\tSTATUS\tATTEMPT\tCREATED\tTOOK\tEXIT", func() []apiclient.Job { return r.JSON200.Jobs },
				func(j apiclient.Job) []string {
					return []string{j.Id, j.Type, string(j.Status), fmt.Sprint(j.Attempt), clock(&j.CreatedAt),
						took(j.StartedAt, j.FinishedAt), exitText(j.ExitCode)}
				})
		})
}

func (c *cli) jobsShowCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "show JOB", Short: "Show a job: its attempts and the history of its status", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, a *api, args []string) error {
			r, err := check(a.GetJobWithResponse(ctx, args[0]))
			return c.printAnswer(r, err, func() error {
				return c.showJob(*r.JSON200)
			})
		})
}

func (c *cli) showJob(j apiclient.JobDetail) error {
	w := c.stdout
	fmt.Fprintf(w, "job %s (%s): %s, attempt %d, exit %s, runner %s\n", j.Id, j.Type, j.Status, j.Attempt, exitText(j.ExitCode), j.RunnerId)
	fmt.Fprintf(w, "created %s, started %s, finished %s\n", clock(&j.CreatedAt), clock(j.StartedAt), clock(j.FinishedAt))
	if j.Error != nil && *j.Error != "" {
		fmt.Fprintf(w, "error: %s\n", *j.Error)
	}
	if j.Waiting != nil {
		fmt.Fprintf(w, "queued: %s\n", j.Waiting.Message)
	}
	fmt.Fprintln(w, "\nattempts:")
	var rows [][]string
	for _, at := range j.Attempts {
		rows = append(rows, []string{fmt.Sprint(at.Attempt), at.Status, at.RunnerId, clock(&at.ClaimedAt), took(&at.ClaimedAt, at.FinishedAt), deref(at.Error)})
	}
	if err := table(w, "ATTEMPT\tSTATUS\tRUNNER\tCLAIMED\tTOOK\tERROR", rows); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nhistory:")
	rows = nil
	for _, ev := range j.History {
		rows = append(rows, []string{clock(&ev.At), fmt.Sprint(ev.Attempt), ev.Status, deref(ev.Message)})
	}
	return table(w, "AT\tATTEMPT\tSTATUS\tMESSAGE", rows)
}

func exitText(code *int) string {
	if code == nil {
		return "-"
	}
	return fmt.Sprint(*code)
}
