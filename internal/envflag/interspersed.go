package envflag

import (
	"errors"
	"flag"
)

// Interspersed parses args with fs, flags before and after the positional
// arguments it returns. When parsing ends the command (-h, or a bad flag,
// which fs has reported), ok is false and exit is the command's exit code:
// 0 for -h, 2 for bad usage.
func Interspersed(fs *flag.FlagSet, args []string) (positional []string, exit int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0, false
			}
			return nil, 2, false
		}
		if fs.NArg() == 0 {
			return positional, 0, true
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
}
