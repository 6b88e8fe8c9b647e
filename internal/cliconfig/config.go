package cliconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Config is the file's content.
type Config struct {
	Current  string    `yaml:"current-context,omitempty"`
	Contexts []Context `yaml:"contexts"`
}

// Context is an API and where its token is.
type Context struct {
	Name string `yaml:"name"`
	API  string `yaml:"api"`
	// TokenFile holds the token; when empty, OUTPOST_TOKEN does.
	TokenFile string `yaml:"token-file,omitempty"`
}

// Path is where the file is: $XDG_CONFIG_HOME/outpost/config.yaml, or
// ~/.config/outpost/config.yaml when XDG_CONFIG_HOME is unset.
func Path() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the configuration directory: %w", err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "outpost", "config.yaml"), nil
}

// Load reads the file at path; a missing file is an empty Config.
func Load(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	return c, nil
}

// Save writes c to path (mode 0600, its directory 0700), replacing the file
// in one rename.
func (c Config) Save(path string) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Find is the context named name.
func (c Config) Find(name string) (Context, bool) {
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return Context{}, false
	}
	return c.Contexts[i], true
}

// Put adds ctx, or replaces the context of the same name.
func (c *Config) Put(ctx Context) {
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == ctx.Name })
	if i < 0 {
		c.Contexts = append(c.Contexts, ctx)
		return
	}
	c.Contexts[i] = ctx
}

// Write adds or replaces ctx in the file at path and, if current, makes it
// the current context.
func Write(path string, ctx Context, current bool) error {
	c, err := Load(path)
	if err != nil {
		return err
	}
	c.Put(ctx)
	if current {
		c.Current = ctx.Name
	}
	return c.Save(path)
}
