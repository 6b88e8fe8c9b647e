package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/outpost-dev/outpost/apiclient"
)

// Messages of the live view: a new snapshot, the watcher's end, a Ctrl-C
// (a key, or SIGINT/SIGTERM), the cancel request's answer.
type (
	snapMsg      snapshot
	watchEndMsg  struct{ err error }
	interruptMsg struct{}
	cancelMsg    struct{ err error }
)

// tuiModel is the live view of an operation (drawn by view in
// tui_view.go); it quits once the operation finished, a read failed, or on
// a Ctrl-C that detaches.
type tuiModel struct {
	inst       apiclient.Install
	snap       snapshot
	spin       spinner.Model
	width      int
	cancelOnCC bool
	cancel     tea.Cmd // asks the API to cancel the operation
	cancelling bool
	detached   bool
	err        error
}

func (m tuiModel) Init() tea.Cmd { return m.spin.Tick }

func (m tuiModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			return m.interrupt()
		}
	case interruptMsg:
		return m.interrupt()
	case cancelMsg:
		if msg.err != nil {
			m.err = msg.err
			return m, tea.Quit
		}
	case snapMsg:
		m.snap = snapshot(msg)
		if m.snap.op.FinishedAt != nil {
			return m, tea.Quit
		}
	case watchEndMsg:
		m.err = msg.err
		return m, tea.Quit
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	}
	return m, nil
}

// interrupt detaches, or first cancels the operation with
// --cancel-on-interrupt (a second Ctrl-C detaches).
func (m tuiModel) interrupt() (tea.Model, tea.Cmd) {
	if m.cancelOnCC && !m.cancelling {
		m.cancelling = true
		return m, m.cancel
	}
	m.detached = true
	return m, tea.Quit
}

func (m tuiModel) View() tea.View { return tea.NewView(m.view(time.Now())) }

// followTUI runs the live view until the operation finishes or the user
// detaches; the last frame stays on screen, the summary below it.
func (c *cli) followTUI(ctx context.Context, a *api, inst apiclient.Install, op apiclient.Operation) error {
	start := time.Now()
	m := tuiModel{inst: inst, snap: snapshot{op: op, steps: stepsOf(op)}, cancelOnCC: c.cancelOnInterrupt,
		spin:   spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		cancel: func() tea.Msg { return cancelMsg{c.cancelOp(ctx, a, inst, op)} }}
	opts := []tea.ProgramOption{tea.WithOutput(c.stdout), tea.WithoutSignalHandler()}
	if !term.IsTerminal(os.Stdin.Fd()) {
		opts = append(opts, tea.WithInput(nil))
	}
	p := tea.NewProgram(m, opts...)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		err := newWatcher(a, inst, op, true).run(wctx, func(s snapshot) { p.Send(snapMsg(s)) })
		p.Send(watchEndMsg{err})
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		for range sig {
			p.Send(interruptMsg{})
		}
	}()
	final, err := p.Run()
	if err != nil {
		return fail(exitUsage, "the live view failed: %w (without a terminal, the progress is plain lines)", err)
	}
	end := final.(tuiModel)
	if end.detached {
		return detached(inst, op)
	}
	return c.ended(ctx, end.err, inst, op, end.snap, time.Since(start))
}
