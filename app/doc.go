// Package app wires configuration into running services: it is the only
// package that knows every concrete type. cmd/queuewatch parses flags and
// signals and calls Run, Check or Demo; tests call them directly with a
// context they cancel.
package app
