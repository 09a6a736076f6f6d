package kafka

// SASLMechanism is saslMechanism for the external tests, which may use
// testenv (it imports this package).
var SASLMechanism = saslMechanism
