package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/outpost-dev/outpost/runnerrelease"
)

const runnerUsage = `usage:
  outpost runner publish -version V -file PATH -signing-key KEY [-image-digest sha256:…] [-registry-url URL] [flags]
      push a runner binary into the vendor registry as runner version V, signed
      with the release key (the runner image's digest, for runners in a
      Kubernetes Deployment, is signed with it); installs update to it through
      the API (PUT /v1/runner-policy, POST /v1/installs/{id}/runner-updates)
  outpost runner keygen -out KEY
      make a release key: the private key in KEY (PEM, mode 0600; keep it off
      the control plane), the public key printed, for the runner's build
      (-X github.com/outpost-dev/outpost/runner.ReleaseKeys=…) or --release-key`

// runRunner publishes runner binaries and makes release keys.
func runRunner(ctx context.Context, args []string, log *slog.Logger) error {
	if err := groupHelp(args, runnerUsage); err != nil {
		return err
	}
	switch {
	case len(args) >= 1 && args[0] == "publish":
		return runnerPublish(ctx, args[1:], log)
	case len(args) >= 1 && args[0] == "keygen":
		return runnerKeygen(args[1:])
	}
	return errors.New(runnerUsage)
}

func runnerPublish(ctx context.Context, args []string, log *slog.Logger) error {
	var c common
	fs := newFlagSet("runner publish")
	c.register(fs)
	version := fs.String("version", "", "the runner version the binary reports (required)")
	file := fs.String("file", "", "the runner binary (required)")
	keyFile := fs.String("signing-key", "", "the release key (PEM ed25519 private key, from outpost runner keygen) that signs the release (required)")
	imageDigest := fs.String("image-digest", "", "the digest (sha256:…) of this version's runner image, signed with the release")
	registryURL := fs.String("registry-url", "http://127.0.0.1:5000", "the vendor registry's URL, as the control plane reaches it")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *version == "":
		return errors.New("-version is required")
	case *file == "":
		return errors.New("-file is required")
	case *keyFile == "":
		return errors.New("-signing-key is required: runners refuse an unsigned release")
	}
	key, err := runnerrelease.ReadKey(*keyFile)
	if err != nil {
		return err
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
	v, err := runnerrelease.Publish(ctx, s, runnerrelease.Registry{Address: addr, PlainHTTP: plain},
		runnerrelease.Release{Version: *version, Binary: *file, ImageDigest: *imageDigest, Key: key})
	if err != nil {
		return err
	}
	fmt.Printf("published runner %s: %s/%s@%s (binary %s, %d bytes), signed with release key %s\n",
		v.Version, addr, v.Repository, v.Digest, v.BinaryDigest, v.Size, runnerrelease.PublicKey(key))
	return nil
}

func runnerKeygen(args []string) error {
	fs := newFlagSet("runner keygen")
	out := fs.String("out", "", "the file the private key is written to (required; must not exist)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	priv, pub, err := runnerrelease.GenerateKey()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	if _, err := f.Write(priv); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("release key written to %s\npublic key (runner.ReleaseKeys, --release-key, chart update.releaseKeys): %s\n", *out, pub)
	return nil
}
