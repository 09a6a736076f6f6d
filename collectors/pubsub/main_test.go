package pubsub

import (
	"os"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopPubSub()
	os.Exit(code)
}
