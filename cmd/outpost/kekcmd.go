package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/outpost-dev/outpost/store/seal"
)

const kekUsage = `usage:
  outpost kek generate           print a new key-encryption key (base64 of 32 bytes)
  outpost kek init     [flags]   make -kek-file when missing (-kek's key, or a new one); keep one already there
  outpost kek status   [flags]   the configured keys, and how many data keys each wraps
  outpost kek rotate   [flags]   re-wrap every data key under the current key (-kek-file),
                                 which -kek-previous-file still unwraps meanwhile`

// runKEK manages the key-encryption keys of secrets at rest.
func runKEK(ctx context.Context, args []string, log *slog.Logger) error {
	if err := groupHelp(args, kekUsage); err != nil || len(args) < 1 {
		return cmp.Or(err, errors.New(kekUsage))
	}
	switch args[0] {
	case "generate":
		fs := newFlagSet("kek generate")
		fs.Usage = func() {
			fmt.Fprintln(fs.Output(), "usage: outpost kek generate\n  print a new key-encryption key (base64 of 32 bytes)")
		}
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		fmt.Print(seal.GenerateKeyText())
		return nil
	case "init", "status", "rotate":
	default:
		return errors.New(kekUsage)
	}
	var c common
	fs := newFlagSet("kek " + args[0])
	c.register(fs)
	ownerUID := -1
	if args[0] == "init" {
		fs.IntVar(&ownerUID, "owner-uid", -1, "give the file to this user (when run as root)")
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if args[0] == "init" {
		return runKEKInit(c.kek, ownerUID)
	}
	s, err := c.openStore(ctx, log, args[0] == "rotate")
	if err != nil {
		return err
	}
	defer s.Close()
	if args[0] == "rotate" {
		n, err := s.RotateKeys(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("re-wrapped %d data keys under %s\n", n, c.ring.Current.ID())
	}
	counts, err := s.KeyStatus(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("current key: %s\n", c.ring.Current.ID())
	if ids := c.ring.IDs()[1:]; len(ids) > 0 {
		fmt.Printf("previous key: %s\n", strings.Join(ids, ", "))
	}
	for _, id := range slices.Sorted(maps.Keys(counts)) {
		fmt.Printf("%s wraps %d data keys\n", id, counts[id])
	}
	return nil
}
