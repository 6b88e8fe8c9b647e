package envflag

import (
	"flag"
	"fmt"
	"strings"
)

// FlagSet is a flag.FlagSet whose flags fall back on the environment.
type FlagSet struct {
	*flag.FlagSet
	prefix  string
	own     map[string]string
	aliases map[string][]string
	noEnv   map[string]bool
}

// New returns an empty FlagSet named name (it reports errors and prints its
// usage on -h, and Parse returns them: flag.ContinueOnError) whose variables
// start with prefix, e.g. "OUTPOST_".
func New(name, prefix string) *FlagSet {
	return &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), prefix: prefix,
		own: map[string]string{}, aliases: map[string][]string{}, noEnv: map[string]bool{}}
}

// Env names the flag's own variable, when it is not the one derived from the
// flag's name (a variable shared with another binary).
func (f *FlagSet) Env(name, variable string) {
	f.own[name] = variable
}

// Alias adds variables read, in order, when the flag's own is unset.
func (f *FlagSet) Alias(name string, vars ...string) {
	f.aliases[name] = append(f.aliases[name], vars...)
}

// NoEnv keeps the named flags to the command line.
func (f *FlagSet) NoEnv(names ...string) {
	for _, n := range names {
		f.noEnv[n] = true
	}
}

// Vars returns the variables of a flag, its own first, then its aliases;
// none for a flag kept to the command line.
func (f *FlagSet) Vars(name string) []string {
	if f.noEnv[name] {
		return nil
	}
	own, ok := f.own[name]
	if !ok {
		own = f.prefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	}
	return append([]string{own}, f.aliases[name]...)
}

// Parse sets each flag from the first of its variables that getenv finds
// set, then parses args over them, so the command line wins; flags may come
// before or after the arguments (org create acme -data-dir X), and "--" ends
// the flags. A bad value in the environment is an error naming the variable
// and the flag.
func (f *FlagSet) Parse(args []string, getenv func(string) string) error {
	var err error
	f.VisitAll(func(fl *flag.Flag) {
		vars := f.Vars(fl.Name)
		if len(vars) > 0 && !strings.Contains(fl.Usage, "(env "+vars[0]) {
			fl.Usage += " (env " + strings.Join(vars, ", or ") + ")"
		}
		for _, v := range vars {
			val := getenv(v)
			if val == "" {
				continue
			}
			if serr := f.Set(fl.Name, val); serr != nil && err == nil {
				err = fmt.Errorf("%s: invalid value for -%s: %w", v, fl.Name, serr)
			}
			break
		}
	})
	if err != nil {
		fmt.Fprintf(f.Output(), "%s: %v\n", f.Name(), err)
		return err
	}
	return f.parseInterspersed(args)
}

// parseInterspersed parses the flags among args, keeping the other arguments
// in order as Args.
func (f *FlagSet) parseInterspersed(args []string) error {
	var positional []string
	for {
		if err := f.FlagSet.Parse(args); err != nil {
			return err
		}
		rest := f.FlagSet.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
	// Parsing "--" and the arguments sets no flag and makes them Args.
	return f.FlagSet.Parse(append([]string{"--"}, positional...))
}
