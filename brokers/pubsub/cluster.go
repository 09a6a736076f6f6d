package pubsub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"cloud.google.com/go/pubsub/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/queuewatch/queuewatch/config"
)

// Cluster is the access to one configured Pub/Sub project.
type Cluster struct {
	cfg config.PubSub
	// monitoringURL is Cloud Monitoring's base URL; tests point it at a
	// recorded server.
	monitoringURL string

	mu     sync.Mutex
	client *pubsub.Client
	mon    *Monitoring
}

// New builds the access to cfg's project. It does no I/O: the client is
// made on first use (see Client).
func New(cfg config.PubSub) (*Cluster, error) {
	if cfg.Project == "" {
		return nil, fmt.Errorf("pubsub %s: no project", cfg.Name)
	}
	return &Cluster{cfg: cfg, monitoringURL: monitoringURL}, nil
}

// Name is the configured project name (the cluster label).
func (c *Cluster) Name() string { return c.cfg.Name }

// Project is the Google Cloud project id.
func (c *Cluster) Project() string { return c.cfg.Project }

// Emulator is the emulator's host:port the cluster talks to, from the
// config's endpoint or PUBSUB_EMULATOR_HOST; empty for Google Cloud.
func (c *Cluster) Emulator() string {
	if c.cfg.Endpoint != "" {
		return c.cfg.Endpoint
	}
	return os.Getenv("PUBSUB_EMULATOR_HOST")
}

// ReadsMonitoring reports whether the project's backlog and ages are read
// from Cloud Monitoring (monitoring.enabled).
func (c *Cluster) ReadsMonitoring() bool { return c.cfg.Monitoring.Enabled }

// Client returns the project's client, making it on first use: with the
// emulator, plain gRPC without credentials; else Application Default
// Credentials or the configured key file. A failure is returned again on
// the next call, which tries again (credentials may appear).
func (c *Cluster) Client(ctx context.Context) (*pubsub.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	client, err := pubsub.NewClient(ctx, c.cfg.Project, c.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("pubsub %s: client: %w", c.cfg.Name, err)
	}
	c.client = client
	return client, nil
}

// ClientOptions are how a client of the project connects: to the
// emulator without credentials, or with the configured key file, else
// with Application Default Credentials. The replay backend's client uses
// them too.
func (c *Cluster) ClientOptions() []option.ClientOption {
	switch {
	case c.cfg.Endpoint != "":
		return emulatorOptions(c.cfg.Endpoint)
	case c.cfg.CredentialsFile != "":
		return []option.ClientOption{option.WithAuthCredentialsFile(option.ServiceAccount, c.cfg.CredentialsFile)}
	}
	return nil
}

// emulatorOptions reach the emulator at addr the way the client does for
// PUBSUB_EMULATOR_HOST: plain gRPC, no credentials.
func emulatorOptions(addr string) []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(addr),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithoutAuthentication(),
		option.WithTelemetryDisabled(),
	}
}

// Close closes the client, if one was made.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == nil {
		return nil
	}
	err := c.client.Close()
	c.client = nil
	// Closing a client of the emulator reports its connection as closed
	// twice; nothing is left open either way.
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("pubsub %s: close: %w", c.cfg.Name, err)
	}
	return nil
}
