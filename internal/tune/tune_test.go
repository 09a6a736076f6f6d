package tune

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	procs, gc := runtime.GOMAXPROCS(0), debug.SetGCPercent(100)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs); debug.SetGCPercent(gc) })
	tests := []struct {
		command, gomaxprocs, gogc string
		wantProcs, wantGC         int
	}{
		{"replay", "", "", 1, 50},
		{"demo", "", "", 3, 50},
		{"serve", "3", "200", 3, 100}, // the environment wins; the runtime read it at start
	}
	for _, tt := range tests {
		t.Run(tt.command+"/"+tt.gomaxprocs, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tt.gomaxprocs)
			t.Setenv("GOGC", tt.gogc)
			runtime.GOMAXPROCS(3)
			debug.SetGCPercent(100)
			Apply(tt.command)
			if got := runtime.GOMAXPROCS(0); got != tt.wantProcs {
				t.Errorf("GOMAXPROCS %d, want %d", got, tt.wantProcs)
			}
			if got := debug.SetGCPercent(100); got != tt.wantGC {
				t.Errorf("GOGC %d, want %d", got, tt.wantGC)
			}
		})
	}
}

// TestServeStartsWithLessGCUntilStarted checks serve's start-up mode:
// GOGC=200 under startLimit until the first data is out, then GOGC=50 and
// no limit.
func TestServeStartsWithLessGCUntilStarted(t *testing.T) {
	procs, gc, limit := runtime.GOMAXPROCS(0), debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs); debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Apply("serve")
	if got := debug.SetGCPercent(startGC); got != startGC {
		t.Errorf("GOGC %d while starting, want %d", got, startGC)
	}
	if got := debug.SetMemoryLimit(-1); got != startLimit {
		t.Errorf("memory limit %d while starting, want %d", got, startLimit)
	}
	Started()
	if got := debug.SetGCPercent(-1); got != steadyGC {
		t.Errorf("GOGC %d once started, want %d", got, steadyGC)
	}
	debug.SetGCPercent(steadyGC)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d once started, want none", got)
	}
	Started() // a second call changes nothing
	if got := debug.SetGCPercent(-1); got != steadyGC {
		t.Errorf("GOGC %d after a second Started, want %d", got, steadyGC)
	}

	// A GOMEMLIMIT of the operator's own is left alone, and so is GOGC.
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(100)
	Apply("serve")
	if got := debug.SetGCPercent(100); got != steadyGC {
		t.Errorf("GOGC %d with GOMEMLIMIT set, want %d", got, steadyGC)
	}
}

func TestLimitForContainers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name  string
		files []string
		want  int64
	}{
		{"no cgroup files", []string{filepath.Join(dir, "absent")}, startLimit},
		{"v2 without a limit", []string{write("v2max", "max\n"), write("v1big", "268435456\n")}, startLimit},
		{"v2 large limit", []string{write("v2large", "8589934592\n")}, startLimit},
		{"v2 256 MiB container", []string{write("v2small", "268435456\n")}, 64 << 20},
		{"v1 128 MiB container", []string{filepath.Join(dir, "absent"), write("v1small", "134217728\n")}, 32 << 20},
	}
	for _, tt := range tests {
		if got := limitFor(tt.files); got != tt.want {
			t.Errorf("%s: limit %d, want %d", tt.name, got, tt.want)
		}
	}
}
