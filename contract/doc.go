// Package contract is what the control plane's workflows and activities
// agree on, and nothing of either's implementation: workflow IDs (one
// function per kind), workflow and activity names, their inputs, results,
// signals and payloads, the kinds of install operation, the component
// types, and (in contract/status) every status the store records.
//
// Signatures is the one declaration of the activity contract: each
// activity's name with its Go signature, as a typed nil func. The workflows
// call activities by these names (so they link none of the activities'
// dependencies: gorm, the SQL drivers, HCL, TOML); the worker checks that
// what it registers is exactly this table; the workflows' unit tests
// register stubs of these signatures and mock them.
//
// Names and argument lists are those recorded in workflow histories: a
// change to one is a change of a workflow's commands, gated with
// workflow.GetVersion (docs/architecture/temporal.md, "Workflow versions").
//
// It imports the standard library only (contract_test.go checks).
package contract
