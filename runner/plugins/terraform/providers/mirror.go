package providers

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// cliConfig is the part of a terraform CLI configuration read here: its
// filesystem mirrors, where a build finds other platforms' providers.
type cliConfig struct {
	Installation []struct {
		Mirrors []struct {
			Path string   `hcl:"path"`
			Rest hcl.Body `hcl:",remain"`
		} `hcl:"filesystem_mirror,block"`
		Rest hcl.Body `hcl:",remain"`
	} `hcl:"provider_installation,block"`
	Rest hcl.Body `hcl:",remain"`
}

// MirrorDirs are the filesystem mirrors (provider_installation's
// filesystem_mirror paths) of the CLI configuration file path.
func MirrorDirs(path string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(src))) == 0 {
		return nil, err
	}
	p := hclparse.NewParser()
	f, diags := p.ParseHCL(src, path)
	if strings.HasSuffix(path, ".json") {
		f, diags = p.ParseJSON(src, path)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("the CLI configuration %s: %w", path, diags)
	}
	var cfg cliConfig
	if diags := gohcl.DecodeBody(f.Body, nil, &cfg); diags.HasErrors() {
		return nil, fmt.Errorf("the CLI configuration %s: %w", path, diags)
	}
	var dirs []string
	for _, in := range cfg.Installation {
		for _, m := range in.Mirrors {
			dirs = append(dirs, m.Path)
		}
	}
	return dirs, nil
}

// fromMirror puts provider (<host>/<namespace>/<type>/<version>) for
// platform into dst (terraform's unpacked layout), from the first of mirrors
// that has it: unpacked (<provider>/<platform>/, linked) or packed
// (<host>/<namespace>/<type>/terraform-provider-<type>_<version>_<platform>.zip,
// extracted), the layouts "terraform providers mirror" and filesystem
// mirrors use. It returns whether one had it.
func fromMirror(mirrors []string, provider, platform, dst string) (bool, error) {
	parts := strings.Split(provider, "/")
	zipName := "terraform-provider-" + parts[2] + "_" + parts[3] + "_" + platform + ".zip"
	for _, m := range mirrors {
		unpacked := filepath.Join(m, filepath.FromSlash(provider), platform)
		if fi, err := os.Stat(unpacked); err == nil && fi.IsDir() {
			return true, os.Symlink(unpacked, dst)
		}
		packed := filepath.Join(m, parts[0], parts[1], parts[2], zipName)
		if _, err := os.Stat(packed); err == nil {
			return true, unzip(packed, dst)
		}
	}
	return false, nil
}

// unzip extracts a provider package (a zip of the provider's executable
// and, at most, a few files beside it) into dst.
func unzip(src, dst string) error {
	r, err := zip.OpenReader(src)
	if err != nil {
		return err
	}
	defer r.Close()
	var total int64
	for _, f := range r.File {
		name := filepath.FromSlash(f.Name)
		if f.FileInfo().IsDir() {
			continue
		}
		if !filepath.IsLocal(name) {
			return fmt.Errorf("%s: entry %q leaves the package", src, f.Name)
		}
		if total += int64(f.UncompressedSize64); total > limits.Bytes {
			return fmt.Errorf("%s: more than %d bytes", src, limits.Bytes)
		}
		if err := unzipFile(f, filepath.Join(dst, name)); err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
	}
	return nil
}

func unzipFile(f *zip.File, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := f.Open()
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.LimitReader(in, int64(f.UncompressedSize64)))
	return errors.Join(err, out.Close())
}
