// Command outpost-registry serves an OCI registry (package registry): an
// install's own registry, started by an example sandbox. Storage is a
// directory; with OUTPOST_REGISTRY_USERNAME and OUTPOST_REGISTRY_PASSWORD
// set, that one basic-auth user may pull and push everything; with neither
// set, the registry is open. Credentials are never printed.
//
// It has three commands (see usage):
//
//	outpost-registry [serve] -dir DIR [-addr HOST:PORT] [-addr-file FILE] [-pid-file FILE]
//	outpost-registry up -dir DIR -addr HOST:PORT
//	outpost-registry down -dir DIR
//
// serve, the default, serves in the foreground until it receives SIGTERM or
// SIGINT. Once it listens it writes its pid to -pid-file, then the bound
// host:port to -addr-file (each written atomically, so a reader never sees
// half a file); both files are removed on a graceful stop.
//
// up and down (Linux) run the registry as a daemon that outlives whoever
// started it, as a terraform local-exec provisioner does in an Outpost
// runner job:
//
//	provisioner "local-exec" {
//	  command     = "outpost-registry up -dir \"$DIR\" -addr 127.0.0.1:5000"
//	  environment = { DIR = "...", OUTPOST_REGISTRY_USERNAME = "...", OUTPOST_REGISTRY_PASSWORD = "..." }
//	}
//	provisioner "local-exec" {
//	  when    = destroy
//	  command = "outpost-registry down -dir \"$DIR\""
//	  …
//	}
//
// up starts "outpost-registry serve -dir DIR/data -addr ADDR -addr-file
// DIR/addr -pid-file DIR/pid" in a session of its own, its output appended
// to DIR/log, its environment holding only OUTPOST_DAEMON=1 (which tells the
// runner to leave it running after the job), the two credential variables,
// TMPDIR and OUTPOST_REGISTRY_READY_FD. It waits until the registry listens
// (the daemon says so on that pipe, once its files are written), prints
// "install registry listening on ADDR" and returns, leaving it running; on a
// failure it prints
// the end of DIR/log. When the registry of DIR already runs on ADDR, up only
// prints its address (on another address it fails: down first; new
// credentials also take a down and an up). The port must not be 0: the
// address of an install's registry is recorded in terraform outputs and must
// be the same after a restart.
//
// down stops that daemon (SIGTERM, SIGKILL after 10 s) and removes DIR,
// unless DIR holds files up does not make. Both are idempotent, and
// serialized on DIR/lock.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/registry"
)

// Environment variables of the basic-auth user.
const (
	envUsername = "OUTPOST_REGISTRY_USERNAME"
	envPassword = "OUTPOST_REGISTRY_PASSWORD"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

const usage = `Usage:
  outpost-registry [serve] -dir DIR [-addr HOST:PORT] [-addr-file FILE] [-pid-file FILE]
      Serve the registry stored in DIR in the foreground until SIGTERM or
      SIGINT. -addr defaults to 127.0.0.1:0 (any free port); once listening,
      the pid goes to -pid-file, then the bound host:port to -addr-file.

  outpost-registry up -dir DIR -addr HOST:PORT
      Start the registry as a daemon, unless the one of DIR already runs, and
      print "install registry listening on HOST:PORT". The daemon is
      "outpost-registry serve -dir DIR/data -addr HOST:PORT -addr-file DIR/addr
      -pid-file DIR/pid", in a session of its own, logging to DIR/log, with
      OUTPOST_DAEMON=1 in its environment (an Outpost runner leaves it running
      after the job). The port must be fixed (not 0): the address is the
      install's registry address and must survive restarts.

  outpost-registry down -dir DIR
      Stop the daemon of DIR (SIGTERM, then SIGKILL after 10s) and remove DIR.
      Nothing running, or no DIR: "already stopped", success.

Environment:
  OUTPOST_REGISTRY_USERNAME, OUTPOST_REGISTRY_PASSWORD
      The one basic-auth user who may pull and push (serve and up); set both,
      or neither for an open registry. They are never printed.
  OUTPOST_REGISTRY_DIR, OUTPOST_REGISTRY_ADDR, OUTPOST_REGISTRY_ADDR_FILE,
  OUTPOST_REGISTRY_PID_FILE
      The flags' values when they are not given.

Exit status: 0 success, 1 failure, 2 bad arguments.
`

// run runs the command of args and returns the exit code: 0 on success (for
// serve: after a graceful stop), 1 on a failure, 2 for bad arguments.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return runServe(ctx, args, getenv, stderr)
	case "up":
		return runUp(ctx, args, getenv, stdout, stderr)
	case "down":
		return runDown(ctx, args, getenv, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "outpost-registry: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// flagSet is a FlagSet of the command that prints usage on -h; each flag
// falls back on OUTPOST_REGISTRY_<FLAG> (package envflag).
func flagSet(cmd string, stderr io.Writer) *envflag.FlagSet {
	fs := envflag.New("outpost-registry "+cmd, "OUTPOST_REGISTRY_")
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}

// parse parses args and returns -1 to go on, or else the exit code.
func parse(fs *envflag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) int {
	if err := fs.Parse(args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2
	}
	return -1
}

type options struct {
	addr, dir, addrFile, pidFile string
	ready                        *os.File // up's readiness pipe (envReadyFD), or nil
}

// runServe serves until ctx ends.
func runServe(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	var o options
	fs := flagSet("serve", stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "`host:port` to listen on (port 0: any free port)")
	fs.StringVar(&o.dir, "dir", "", "storage `directory` (required)")
	fs.StringVar(&o.addrFile, "addr-file", "", "write the bound host:port to this `file` once listening")
	fs.StringVar(&o.pidFile, "pid-file", "", "write the process id to this `file` once listening")
	if code := parse(fs, args, getenv, stderr); code >= 0 {
		return code
	}
	if o.dir == "" {
		fmt.Fprintln(stderr, "outpost-registry: -dir is required")
		return 2
	}
	authorizer, err := authFromEnv(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "outpost-registry: %v\n", err)
		return 2
	}
	if o.ready, err = readyPipe(getenv); err != nil {
		fmt.Fprintf(stderr, "outpost-registry: %v\n", err)
		return 2
	}
	if err := serve(ctx, o, authorizer, stderr); err != nil {
		fmt.Fprintf(stderr, "outpost-registry: %v\n", err)
		return 1
	}
	return 0
}

// authFromEnv is the Static user of the environment, or nil (an open
// registry) when neither variable is set.
func authFromEnv(getenv func(string) string) (registry.Authorizer, error) {
	user, pass := getenv(envUsername), getenv(envPassword)
	switch {
	case user == "" && pass == "":
		return nil, nil
	case user == "" || pass == "":
		return nil, fmt.Errorf("set both %s and %s, or neither (an open registry)", envUsername, envPassword)
	}
	return registry.Static{Username: user, Password: pass}, nil
}

func serve(ctx context.Context, o options, authorizer registry.Authorizer, stderr io.Writer) (err error) {
	srv, err := registry.Start(context.WithoutCancel(ctx), registry.Config{Addr: o.addr, Dir: o.dir, Auth: authorizer})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Close()) }()

	files := []struct{ path, content string }{
		{o.pidFile, strconv.Itoa(os.Getpid())},
		{o.addrFile, srv.Addr()},
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if err := writeFileAtomic(f.path, f.content+"\n"); err != nil {
			return err
		}
		defer os.Remove(f.path)
	}
	if o.ready != nil {
		// Best effort: up may have seen the files first and gone, closing
		// its end; the registry runs on all the same.
		_, _ = fmt.Fprintln(o.ready, srv.Addr())
		_ = o.ready.Close()
	}
	mode := "open"
	if authorizer != nil {
		mode = "basic auth"
	}
	fmt.Fprintf(stderr, "outpost-registry: serving %s on %s (%s)\n", o.dir, srv.Addr(), mode)
	<-ctx.Done()
	fmt.Fprintln(stderr, "outpost-registry: stopping")
	return nil
}

// envReadyFD names the file descriptor on which the daemon up started says
// it listens, once its pid and address files are written: it writes its
// address there and closes it.
const envReadyFD = "OUTPOST_REGISTRY_READY_FD"

// readyPipe is the pipe envReadyFD names, or nil. The variable is taken out
// of the environment, and a descriptor that is not a pipe is refused (it
// would be some other file of this process).
func readyPipe(getenv func(string) string) (*os.File, error) {
	v := getenv(envReadyFD)
	if v == "" {
		return nil, nil
	}
	_ = os.Unsetenv(envReadyFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: want a file descriptor above 2", envReadyFD, v)
	}
	f := os.NewFile(uintptr(fd), "ready")
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return nil, fmt.Errorf("%s=%d: not a pipe", envReadyFD, fd)
	}
	return f, nil
}

// writeFileAtomic writes a temporary file next to path and renames it.
func writeFileAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing to remove
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
