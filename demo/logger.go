package demo

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoLogger forwards kgo's warnings and errors to slog. Info and debug are
// dropped: kgo logs every request and rebalance there, which would drown the
// demo's own log lines.
type kgoLogger struct {
	log *slog.Logger
}

// Level tells kgo to build log lines only for warnings and errors.
func (l kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

// Log writes one kgo log line.
func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lvl := slog.LevelWarn
	if level == kgo.LogLevelError {
		lvl = slog.LevelError
	}
	l.log.Log(context.Background(), lvl, "kafka client: "+msg, keyvals...)
}
