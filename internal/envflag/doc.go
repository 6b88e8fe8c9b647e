// Package envflag reads a command's flags from its command line and, for the
// flags not given there, from the environment: one way for every Outpost
// binary (outpost, outpost-runner, outpost-registry, outpost-cluster).
//
// A FlagSet is a standard flag.FlagSet whose flags each have an environment
// variable named after them: the set's prefix, then the flag's name in upper
// case with dashes as underscores (-gateway-url of prefix OUTPOST_ is
// OUTPOST_GATEWAY_URL). A flag may also have aliases, variables read when its
// own is unset (DATABASE_URL for -database-url), and a flag may opt out of
// the environment. A value is taken from, in order: the command line, the
// flag's variable, its aliases, the default. An empty variable counts as
// unset. -h lists each flag's variables after its usage.
//
// It depends on the standard library only, so the runner may use it without
// linking anything of the control plane.
package envflag
