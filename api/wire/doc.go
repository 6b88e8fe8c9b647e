// Package wire holds what goes over the wire of the control API (/v1) and of
// the dashboard's session (/ui/session): the request and answer types, each
// with its JSON names, apart from the store's gorm models. Package api turns
// models into these types with one small converter per type, so a column
// added to a model never reaches an answer by accident (secrets stay out:
// hashes, manifests, rendered inputs, sensitive values).
//
// The API's OpenAPI document is generated from these types (package api,
// openapi.go, with github.com/swaggest/openapi-go): their doc comments are
// its descriptions (docs.gen.go, written by `go generate ./api/wire`), and
// field tags say the rest: `required:"true"` (the field is always in an
// answer, or must be in a request), `nullable:"true"` (it may be null; other
// fields never are), `enum`, `minimum`, `maximum`, `default`, and a request's
// `_ struct{} additionalProperties:"false"` (unknown fields are refused). A
// type's schema is named after the type, so a name here is a name in the
// document and in the generated client (package apiclient).
//
// The documents the runner writes and the API takes or answers as they are
// (the offline deploy's files, a plan policy's result) are package
// protocol's types, named here as aliases (type X = protocol.X); their doc
// comments are read from protocol. It imports nothing else of the project,
// so any side may use it.
package wire

//go:generate go test -run TestDocsAreGenerated -update .
