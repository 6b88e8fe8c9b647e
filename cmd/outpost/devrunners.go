package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// devRunner is a runner `outpost dev` launches, with a fresh token.
type devRunner struct {
	name  string
	token string
}

// findRunner locates the outpost-runner binary.
func findRunner(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "outpost-runner")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("outpost-runner")
	if err != nil {
		return "", errors.New("outpost-runner not found next to outpost or on PATH: build it (`go tool task build`) or pass -runner-bin")
	}
	return p, nil
}

// superviseRunner runs one outpost-runner process as a separate process
// (its token passed in the environment, never on the command line) and
// restarts it if it dies, until ctx is done.
func superviseRunner(ctx context.Context, log *slog.Logger, bin, gatewayURL string, r devRunner, dataDir string, kube kubeTools) error {
	workDir := filepath.Join(dataDir, "runners", r.name)
	logPath := filepath.Join(dataDir, "runners", r.name+".log")
	if err := os.MkdirAll(workDir, 0o700); err != nil {
		return err
	}
	for ctx.Err() == nil {
		out, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		// The local runners stand in for the customer's, who allows debug commands here (the tour
		// runs some); a customer's runner runs none unless told so.
		cmd := exec.Command(bin, "run", "--gateway-url", gatewayURL, "--work-dir", workDir, "--name", r.name,
			"--allow-debug-commands")
		// The local stand-ins the example sandbox starts (outpost-registry)
		// are next to the runner.
		cmd.Env = append(os.Environ(), "OUTPOST_TOKEN="+r.token,
			"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if env := kube.env(); env != nil {
			cmd.Env = append(cmd.Env, env...)
		} else {
			log.Warn("no etcd/kube-apiserver: a component that starts a local cluster will fail (bash scripts/tools.sh kube builds them)")
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			out.Close()
			return fmt.Errorf("start runner %s: %w", r.name, err)
		}
		log.Info("runner started", "runner", r.name, "pid", cmd.Process.Pid, "log", logPath)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			log.Warn("runner exited; restarting in 2s", "runner", r.name, "err", err)
			out.Close()
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			out.Close()
		}
	}
	return nil
}
