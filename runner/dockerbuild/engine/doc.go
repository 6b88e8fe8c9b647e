// Package engine builds a docker_build component's image with a Docker
// engine's BuildKit (the engine's build endpoint, with a BuildKit session
// that serves base images' registry credentials), streams the build's
// progress as plain log lines, and hands the result back as an OCI image
// (go-containerregistry) ready to push. It never interprets a Dockerfile
// itself. Its Build is a dockerbuild.BuildFunc; only outpost-runner-helm
// links it (the Docker client and BuildKit's session are heavy to
// initialise in every job process).
package engine
