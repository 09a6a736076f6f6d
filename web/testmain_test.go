package web

import (
	"os"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestMain stops the package's ElasticMQ, kinesis-local and moto servers
// and Pub/Sub emulator (started by the first test that needs each) once
// every test ran.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopElasticMQ()
	testenv.StopKinesis()
	testenv.StopMoto()
	testenv.StopPubSub()
	os.Exit(code)
}
