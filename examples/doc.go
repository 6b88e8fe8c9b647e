// Package examples holds the example apps (demo-app, build-app) and tests of
// their local stand-ins: the demo sandbox's registry and the cluster
// component, which run as daemons on the install runner's machine and must
// come back after that machine restarts.
package examples
