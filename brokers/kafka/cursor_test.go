package kafka

import "testing"

// TestCursorPosition is the worked example of CursorPosition's doc comment,
// plus the edges around it.
func TestCursorPosition(t *testing.T) {
	for _, tc := range []struct {
		name             string
		logStart, commit int64
		committed        bool
		want             int64
	}{
		{"no commit reads from the log start", 40, 0, false, 40},
		{"a commit inside the log", 40, 55, true, 55},
		{"a commit at the log start", 40, 40, true, 40},
		{"retention passed the commit", 40, 12, true, 40},
		{"everything replayed", 40, 100, true, 100},
		{"a commit past the end is kept", 40, 120, true, 120},
		{"an uncommitted offset (-1) reads from the log start", 0, -1, true, 0},
		{"no commit ignores its offset", 40, 55, false, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CursorPosition(tc.logStart, tc.commit, tc.committed); got != tc.want {
				t.Errorf("CursorPosition(%d, %d, %v) = %d, want %d", tc.logStart, tc.commit, tc.committed, got, tc.want)
			}
		})
	}
}
