// Package filecopy copies a file's bytes into a new one: the terraform
// plugin's init cache and the tests' kept binaries share it. It imports
// nothing of the project.
package filecopy
