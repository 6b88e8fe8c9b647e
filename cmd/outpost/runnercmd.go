package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/outpost-dev/outpost/runnerrelease"
)

const runnerUsage = `usage: outpost runner publish -version V -file PATH [-registry-url URL] [flags]
  push a runner binary into the vendor registry as runner version V; installs
  update to it through the API (PUT /v1/runner-policy, POST /v1/installs/{id}/runner-updates)`

// runRunner publishes runner binaries.
func runRunner(ctx context.Context, args []string, log *slog.Logger) error {
	if err := groupHelp(args, runnerUsage); err != nil {
		return err
	}
	if len(args) < 1 || args[0] != "publish" {
		return errors.New(runnerUsage)
	}
	var c common
	fs := newFlagSet("runner publish")
	c.register(fs)
	version := fs.String("version", "", "the runner version the binary reports (required)")
	file := fs.String("file", "", "the runner binary (required)")
	registryURL := fs.String("registry-url", "http://127.0.0.1:5000", "the vendor registry's URL, as the control plane reaches it")
	if err := fs.Parse(args[1:], os.Getenv); err != nil {
		return err
	}
	switch {
	case *version == "":
		return errors.New("-version is required")
	case *file == "":
		return errors.New("-file is required")
	}
	addr, plain, err := parseRegistryURL(*registryURL)
	if err != nil {
		return err
	}
	s, err := c.openStore(ctx, log, false)
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := runnerrelease.Publish(ctx, s, runnerrelease.Registry{Address: addr, PlainHTTP: plain}, *version, *file)
	if err != nil {
		return err
	}
	fmt.Printf("published runner %s: %s/%s@%s (binary %s, %d bytes)\n", v.Version, addr, v.Repository, v.Digest, v.BinaryDigest, v.Size)
	return nil
}
