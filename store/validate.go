package store

import (
	"errors"
	"fmt"
	"regexp"

	"gorm.io/gorm"
)

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$`)

// validName checks a user-chosen name: lowercase letters, digits, '.', '_'
// and '-', at most 63 characters, starting and ending with a letter or digit.
func validName(field, name string) error {
	if name == "" {
		return fieldErr(field, "is required")
	}
	if !nameRE.MatchString(name) {
		return fieldErr(field, "%q must be 1-63 lowercase letters, digits, '.', '_' or '-', starting and ending with a letter or digit", name)
	}
	return nil
}

// uniqueConflict turns a unique-constraint violation into ErrConflict.
func uniqueConflict(err error, what, name string) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("%s %q already exists: %w", what, name, ErrConflict)
	}
	return err
}
