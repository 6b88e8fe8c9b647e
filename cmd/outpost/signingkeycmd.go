package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/outpost-dev/outpost/store"
)

const signingKeyUsage = `usage:
  outpost signing-key list   -owner ORG|platform|legacy [flags]   an owner's keys, newest (the current one) first
  outpost signing-key rotate -owner ORG|platform        [flags]   make a new current key for the owner
  outpost signing-key retire -id KEY_ID                 [flags]   retire a key: what it signed stops verifying
The keys sign the vendor registry's credentials and the attempt credentials: one set per org,
and the platform's (runner releases). "legacy" is the key all orgs shared before keys per org.`

// runSigningKey lists, rotates and retires the registry signing keys.
func runSigningKey(ctx context.Context, args []string, log *slog.Logger) error {
	if err := groupHelp(args, signingKeyUsage); err != nil || len(args) < 1 {
		return cmp.Or(err, errors.New(signingKeyUsage))
	}
	switch args[0] {
	case "list", "rotate", "retire":
	default:
		return errors.New(signingKeyUsage)
	}
	var c common
	fs := newFlagSet("signing-key " + args[0])
	c.register(fs)
	owner := fs.String("owner", "", "the keys' owner: an org ID, platform (or legacy, to list)")
	id := fs.String("id", "", "the key to retire")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	switch {
	case args[0] == "retire" && *id == "":
		return errors.New("-id: required (the key to retire)")
	case args[0] != "retire" && *owner == "":
		return errors.New("-owner: required (an org ID, or platform)")
	case args[0] == "rotate" && *owner == "legacy":
		return errors.New("-owner: legacy cannot be rotated (rotate the orgs', then retire it)")
	}
	s, err := c.openStore(ctx, log, false)
	if err != nil {
		return err
	}
	defer s.Close()
	return signingKey(ctx, s, os.Stdout, args[0], *owner, *id)
}

func signingKey(ctx context.Context, s *store.Store, out io.Writer, cmd, owner, id string) error {
	switch cmd {
	case "rotate":
		k, err := s.RotateSigningKey(ctx, owner)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s's current key is now %s; its older keys verify until retired\n", owner, k.ID)
		return nil
	case "retire":
		if err := s.RetireSigningKey(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(out, "retired %s\n", id)
		return nil
	}
	if owner == "legacy" {
		owner = ""
	}
	keys, err := s.ListSigningKeys(ctx, owner)
	if err != nil {
		return err
	}
	for _, k := range keys {
		state := "verifies"
		if k.RetiredAt != nil {
			state = "retired " + k.RetiredAt.UTC().Format("2006-01-02 15:04:05Z")
		}
		fmt.Fprintf(out, "%s  created %s  %s\n", k.ID, k.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), state)
	}
	return nil
}
