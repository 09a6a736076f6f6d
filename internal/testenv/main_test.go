package testenv

import (
	"os"
	"testing"
)

// TestMain stops the servers the tests started once every test ran: they
// are shared within the package (started once, like in every other
// package), so a test that stopped one after itself would leave the next
// test that needs it a dead server.
func TestMain(m *testing.M) {
	code := m.Run()
	StopElasticMQ()
	StopMoto()
	StopKinesis()
	StopPubSub()
	StopSchemaRegistry()
	os.Exit(code)
}
