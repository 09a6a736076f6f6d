package web

import (
	"os"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestMain stops the package's ElasticMQ server and Pub/Sub emulator
// (started by the first test that needs them) once every test ran.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopElasticMQ()
	testenv.StopPubSub()
	os.Exit(code)
}
