// Package migrations holds Outpost's schema migrations, one file per version
// (v1.go, v2.go, …), each with its own snapshot of the tables it creates or
// changes: structs as they were at that version, never the live models of
// package store. A migration is a list of changes that steps makes in order:
// create (tables of snapshots), add (columns), index, exec (a data change).
// What a released migration does never changes; a schema change is a new file
// with the next version, appended to All. store.Migrate applies them in order
// and records them in schema_migrations.
//
// Snapshots are gorm structs rather than SQL so that PostgreSQL and SQLite get
// exactly the DDL gorm gave the live models when the versions were released;
// store's schema test compares the result with a committed catalog dump
// (store/testdata), which also catches a gorm upgrade that would change it.
package migrations
