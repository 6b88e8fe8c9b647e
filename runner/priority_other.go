//go:build !linux

package runner

// canRaiseBack: only Linux sets the priority of one thread, which
// startLowered needs; elsewhere prestarted jobs keep the runner's priority.
func canRaiseBack(int) bool { return false }

// startLowered calls start: without thread priorities, nothing is lowered.
func (p priorities) startLowered(start func() error) error { return start() }
