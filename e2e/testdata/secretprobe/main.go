// Command secretprobe is a hostile job in the runner chart's pod
// (runner_secrets_node_test.go): it reads the environment of every
// `outpost-runner run` process, then each "read:PATH", "list:PATH" or
// "write:DIR" of its arguments, and prints what it got: "READ PATH" and the
// content, "LISTED PATH" and the names, "WROTE DIR", or "DENIED OP PATH"
// with whether the file is there. With "hang" it then waits to be stopped.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	fmt.Printf("uid %d gid %d\n", os.Getuid(), os.Getgid())
	for _, pid := range runners() {
		fmt.Printf("RUNNER pid %s\n", pid)
		try("read:/proc/" + pid + "/environ")
	}
	for _, a := range os.Args[1:] {
		if a == "hang" {
			fmt.Println("hanging")
			time.Sleep(time.Hour)
		}
		try(a)
	}
}

// runners are the pids whose command line is `…outpost-runner run …`
// (/proc/<pid>/cmdline is readable by anyone).
func runners() []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(b), "\x00")
		if err == nil && len(args) > 1 && filepath.Base(args[0]) == "outpost-runner" && args[1] == "run" {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// try does what op:path asks and prints the outcome.
func try(arg string) {
	op, path, _ := strings.Cut(arg, ":")
	var err error
	switch op {
	case "read":
		var b []byte
		if b, err = os.ReadFile(path); err == nil {
			fmt.Printf("READ %s\n%s\n", path, strings.ReplaceAll(string(b), "\x00", "\n"))
		}
	case "list":
		var names []string
		if names, err = readDirNames(path); err == nil {
			fmt.Printf("LISTED %s: %s\n", path, strings.Join(names, " "))
		}
	case "write":
		f := filepath.Join(path, "planted-by-a-job")
		if err = os.WriteFile(f, []byte("forged\n"), 0o644); err == nil {
			fmt.Printf("WROTE %s\n", path)
		}
	default:
		err = fmt.Errorf("unknown operation %q", op)
	}
	if err == nil {
		return
	}
	there := "exists"
	if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
		there = "missing"
	} else if serr != nil {
		there = "not known: " + serr.Error()
	}
	fmt.Printf("DENIED %s %s (%s): %v\n", op, path, there, err)
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
