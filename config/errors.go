package config

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Error is one configuration mistake. Its message is one line:
// "file:line: key.path: message", with the parts that are unknown left out
// (a Config built in code has no file or line).
type Error struct {
	File string
	Line int
	// Path is the key path, such as "kafka[0].brokers"; empty for
	// document-level errors.
	Path string
	Msg  string

	// near is a related key whose line Parse uses when Path is not in the
	// file, such as poll_interval for a defaulted history that is too short.
	near string
}

// Error formats e as one line.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// joinErrors joins errs, sorted by line, so a report reads top to bottom.
func joinErrors(errs []*Error) error {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	joined := make([]error, len(errs))
	for i, e := range errs {
		joined[i] = e
	}
	return errors.Join(joined...)
}
