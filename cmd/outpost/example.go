package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/appconfig"
)

// exampleArchive packs the example app config that -example names: one
// directory, or several separated by commas, each laid over the ones before
// it (a file in a later one replaces an earlier one's), such as
// examples/demo-app,examples/build-app.
func exampleArchive(spec string) ([]byte, error) {
	dirs := strings.Split(spec, ",")
	if _, err := os.Stat(filepath.Join(dirs[0], "outpost.toml")); err != nil {
		return nil, fmt.Errorf("no app config at %s (run from the repository's root, or pass -example): %w", dirs[0], err)
	}
	root := dirs[0]
	if len(dirs) > 1 {
		tmp, err := os.MkdirTemp("", "outpost-example-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		for _, d := range dirs {
			if err := overlay(tmp, d); err != nil {
				return nil, fmt.Errorf("example %s: %w", d, err)
			}
		}
		root = tmp
	}
	return appconfig.ArchiveDir(os.DirFS(root), ".")
}

// overlay copies the directory tree src into dst, replacing files dst has.
func overlay(dst, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: only directories and regular files", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}
