// Package storetest opens a fresh, migrated store for a test: a new database
// on the PostgreSQL server (OUTPOST_TEST_DATABASE_URL, default the local
// server) or a new SQLite file, dropped when the test ends. NewTenant fills
// it with an org, its app and an install with its runner; StartServer starts
// a PostgreSQL server of the test's own, for a test that stops and starts it.
package storetest
