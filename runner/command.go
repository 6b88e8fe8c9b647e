package runner

import (
	"fmt"
	"io"

	"github.com/outpost-dev/outpost/protocol"
)

// Command runs the command line args of a runner binary (outpost-runner,
// outpost-runner-helm): the commands cmds names, version and help. It
// returns the exit code; with no command or an unknown one it prints usage
// on stderr and returns 2.
func Command(binary, usage string, args []string, stdout, stderr io.Writer, cmds map[string]func(args []string) int) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if cmd, ok := cmds[args[0]]; ok {
		return cmd(args[1:])
	}
	switch args[0] {
	case "version", "--version":
		fmt.Fprintf(stdout, "%s %s (protocol %s)\n", binary, Version, protocol.Version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "%s: unknown command %q\n\n%s", binary, args[0], usage)
	return 2
}
