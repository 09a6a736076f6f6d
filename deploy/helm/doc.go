// Package helm holds the tests of the Helm chart in queuewatch/: they
// render it with Helm's Go SDK for the default, HA and sharded values,
// lint it as helm lint --strict does, decode every object strictly into
// its Kubernetes type, check that its rules and dashboards are the repo's
// generated files, and that the config it renders passes queuewatch's
// validation.
//
// It is a module of its own so that Helm and the Kubernetes API types
// stay out of queuewatch's go.mod and build; `make test` runs it.
package helm
