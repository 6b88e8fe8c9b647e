// Package dockerbuild holds what a docker_build image build takes and gives
// (Options, Result, Failed) and BuildFunc, the builder's signature. It links
// nothing heavy: the builder itself is package engine, which only
// outpost-runner-helm links and passes in.
package dockerbuild
