// Package cliconfig is the file in which outpostctl, the vendor's CLI, keeps
// its contexts: named pairs of an API URL and where the context's API token
// is (a file, or else the environment variable OUTPOST_TOKEN), and which one
// is current. It lives in $XDG_CONFIG_HOME/outpost/config.yaml (mode 0600)
// and never holds a token itself. `outpost dev` writes its context here too,
// so the format has one owner; the package imports nothing of the control
// plane.
package cliconfig
