package web

import (
	"os"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestMain stops the package's ElasticMQ server (started by the first
// test that needs it) once every test ran.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopElasticMQ()
	os.Exit(code)
}
