// Package command is the plugin of the "command" job type, a debugging aid: it
// runs one command (argv, no shell unless the command is one) in the job's
// working directory with the job's clean environment. The command's stdout
// and stderr are the job's logs; their head, up to a bound, is also captured
// into the job's outputs (protocol.CommandOutputs).
package command
