package storetest

import (
	"fmt"
	"github.com/outpost-dev/outpost/internal/testutil"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// Server is a PostgreSQL server of a test's own, in a temporary directory
// on a free loopback port, which the test may stop and start (the shared
// server other tests use is never restarted). PostgreSQL refuses to run as
// root: under root the server runs as the "postgres" user.
type Server struct {
	t      testing.TB
	bin    string // the directory of initdb and pg_ctl
	dir    string // data/ and log
	data   string
	port   int
	asUser string // "" runs the server as the test's own user
}

// StartServer initialises and starts a server, stopped and removed when the
// test ends. It skips the test when PostgreSQL's binaries are not installed.
func StartServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, bin: postgresBin()}
	if s.bin == "" {
		t.Skip("no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin")
	}
	dir, err := os.MkdirTemp("", "outpost-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
		if err := chownTo(dir, s.asUser); err != nil {
			t.Skipf("running as root, the server must run as another user: %v", err)
		}
	}
	s.dir, s.data = dir, filepath.Join(dir, "data")
	if s.port, err = freePort(); err != nil {
		t.Fatal(err)
	}
	s.run("initdb", "-D", s.data, "-A", "trust", "-U", "postgres", "--no-sync")
	s.Start()
	t.Cleanup(func() { s.pgCtl("stop", "-m", "immediate") })
	return s
}

// AdminURL is the URL of the server's "postgres" database, as superuser.
func (s *Server) AdminURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Start starts the (stopped) server and waits until it accepts connections.
func (s *Server) Start() {
	s.t.Helper()
	opts := "-p " + strconv.Itoa(s.port) + " -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off"
	if err := s.pgCtl("start", "-w", "-l", filepath.Join(s.dir, "log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		s.t.Fatalf("start PostgreSQL: %v\n%s", err, log)
	}
}

// Stop stops the server at once: every connection is cut, and new ones are
// refused until Start.
func (s *Server) Stop() {
	s.t.Helper()
	if err := s.pgCtl("stop", "-w", "-m", "fast"); err != nil {
		s.t.Fatalf("stop PostgreSQL: %v", err)
	}
}

func (s *Server) pgCtl(args ...string) error {
	return s.command("pg_ctl", append([]string{"-D", s.data}, args...)...).Run()
}

func (s *Server) run(tool string, args ...string) {
	s.t.Helper()
	if out, err := s.command(tool, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("%s: %v\n%s", tool, err, out)
	}
}

// command runs one of the server's tools, as the server's user.
func (s *Server) command(tool string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, tool)
	if s.asUser != "" {
		return exec.Command("runuser", slices.Concat([]string{"-u", s.asUser, "--", path}, args)...)
	}
	return exec.Command(path, args...)
}

// postgresBin is the directory of initdb and pg_ctl ("" when there is none).
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append([]string{filepath.Dir(real)}, dirs...)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// chownTo gives dir to the named user.
func chownTo(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	return os.Chown(dir, uid, gid)
}

func freePort() (int, error) { return testutil.FreePort() }
