package web

import (
	"os"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestMain stops the ElasticMQ server the SQS browser test started: it is
// one JVM per test binary, shared by the tests that need it.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopElasticMQ()
	os.Exit(code)
}
