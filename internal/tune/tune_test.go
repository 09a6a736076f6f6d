package tune

import (
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
		{"serve", "", "", 1, 50},
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
