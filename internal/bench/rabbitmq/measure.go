package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	collector "github.com/queuewatch/queuewatch/collectors/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
)

// cost is what one poll or scrape cost, medians over its rounds.
type cost struct {
	name            string
	wall, self, cpu time.Duration // wall time, this process's CPU, the node's net CPU
	raw             time.Duration // the node's CPU with its idle rate left in
	bytes           int64
	items           int
}

type result struct {
	idlePerMin time.Duration // the node's CPU per minute doing nothing
	costs      []cost
}

// measure runs each reader in turn: queuewatch's first poll, its steady
// polls, then the plugin scrapes.
func measure(ctx context.Context, node int, rounds int) (*result, error) {
	r := &result{}
	idle, err := idleRate(node, 10*time.Second)
	if err != nil {
		return nil, err
	}
	r.idlePerMin = idle * 60
	mp, err := newProxy("127.0.0.1:15672")
	if err != nil {
		return nil, err
	}
	src, err := newSource("http://" + mp.addr)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	pollOnce := func() (int, error) {
		snap, err := src.Poll(ctx)
		if err != nil {
			return 0, err
		}
		return len(snap.Queues), nil
	}
	first, err := timed(node, idle, mp, 1, "queuewatch first poll (paged)", pollOnce)
	if err != nil {
		return nil, err
	}
	steady, err := timed(node, idle, mp, rounds, "queuewatch steady poll (1 request)", pollOnce)
	if err != nil {
		return nil, err
	}
	r.costs = append(r.costs, first, steady)
	for _, l := range listings {
		get := func() (int, error) { return getListing(ctx, mp.addr, l.query) }
		c, err := timed(node, idle, mp, rounds, l.name, get)
		if err != nil {
			return nil, err
		}
		r.costs = append(r.costs, c)
	}
	pp, err := newProxy("127.0.0.1:15692")
	if err != nil {
		return nil, err
	}
	for _, fam := range [][]string{{"queue_coarse_metrics", "queue_consumer_count"}, {"queue_metrics"}} {
		scrape := func() (int, error) { return scrapeDetailed(ctx, pp.addr, fam) }
		c, err := timed(node, idle, pp, rounds, "plugin /metrics/detailed "+strings.Join(fam, "+"), scrape)
		if err != nil {
			return nil, err
		}
		r.costs = append(r.costs, c)
	}
	return r, nil
}

// listings are the management API's queue listing alone, as queuewatch's
// steady poll sends it, paged, and with only the topology columns (the
// floor of any listing).
var listings = []struct{ name, query string }{
	{"management listing unpaged, poll columns", "columns=" + pollColumns},
	{"management listing page 1 of 500, poll columns", "page=1&page_size=500&columns=" + pollColumns},
	{"management listing unpaged, topology columns only", "columns=name,vhost,type,policy,arguments,effective_policy_definition"},
}

// pollColumns are brokers/rabbitmq's queueColumns.
const pollColumns = "name,vhost,type,policy,arguments,effective_policy_definition," +
	"messages_ready,messages_unacknowledged,consumers,head_message_timestamp,state," +
	"consumer_utilisation,message_stats.publish,message_stats.ack,message_stats.deliver_no_ack," +
	"message_stats.get_no_ack,message_stats.deliver_get"

// getListing reads the bench vhost's queue listing with query and counts
// its queues.
func getListing(ctx context.Context, addr, query string) (int, error) {
	u := "http://" + addr + rabbit.APIPath("queues", benchVHost) + "?" + query
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth("guest", "guest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", u, resp.Status)
	}
	return strings.Count(string(b), `"name":`), err
}

func newSource(mgmt string) (*collector.Source, error) {
	cl, err := rabbit.New(config.RabbitMQ{
		Name: "bench", URL: amqpURL, ManagementURL: mgmt,
		ManagementUsername: "guest", ManagementPassword: "guest",
	})
	if err != nil {
		return nil, err
	}
	return collector.New(collector.Options{Cluster: cl, VHosts: []string{benchVHost}})
}

// timed runs f rounds times and keeps the median of each measure.
func timed(node int, idle time.Duration, p *proxy, rounds int, name string, f func() (int, error)) (cost, error) {
	var walls, selfs, cpus, raws, sizes []int64
	var items int
	for range rounds {
		n0, s0, b0 := nodeCPU(node), selfCPU(), p.bytes.Load()
		t0 := time.Now()
		n, err := f()
		wall := time.Since(t0)
		if err != nil {
			return cost{}, fmt.Errorf("%s: %w", name, err)
		}
		items = n
		raw := nodeCPU(node) - n0
		netCPU := raw - time.Duration(float64(idle)*wall.Seconds())
		walls, selfs, cpus = append(walls, int64(wall)), append(selfs, int64(selfCPU()-s0)), append(cpus, int64(netCPU))
		raws = append(raws, int64(raw))
		sizes = append(sizes, p.bytes.Load()-b0)
		time.Sleep(time.Second) // let the node's statistics settle between rounds
	}
	c := cost{
		name: name, wall: time.Duration(median(walls)), self: time.Duration(median(selfs)),
		cpu: time.Duration(median(cpus)), raw: time.Duration(median(raws)), bytes: median(sizes), items: items,
	}
	log.Printf("%s: %+v", name, c)
	return c, nil
}

func median(v []int64) int64 {
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v[len(v)/2]
}

// scrapeDetailed reads the plugin's detailed endpoint for the bench vhost
// as Prometheus would (gzip) and counts its queue series.
func scrapeDetailed(ctx context.Context, addr string, families []string) (int, error) {
	u := "http://" + addr + "/metrics/detailed?vhost=" + benchVHost
	for _, f := range families {
		u += "&family=" + f
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req) // asks for gzip and inflates
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	return series(string(b)), err
}

// series counts the exposition's samples (lines that are not comments).
func series(text string) int {
	n := 0
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "#") && strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idleRate is the node's CPU per second of wall time while nobody asks it
// anything (statistics collection of 10,000 queues is not free).
func idleRate(node int, over time.Duration) (time.Duration, error) {
	n0 := nodeCPU(node)
	time.Sleep(over)
	d := nodeCPU(node) - n0
	if d <= 0 {
		return 0, fmt.Errorf("beam.smp pid %d: no CPU over %s", node, over)
	}
	return time.Duration(float64(d) / over.Seconds()), nil
}

// findBeam is the pid of the node behind the management API: more than
// one Erlang VM may run on the machine (tests start their own nodes).
func findBeam() (int, error) {
	c, err := rabbit.NewClient(mgmtURL, "guest", "guest", nil)
	if err != nil {
		return 0, err
	}
	var nodes []struct {
		PID string `json:"os_pid"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Get(ctx, rabbit.APIPath("nodes"), url.Values{"columns": {"os_pid"}}, &nodes); err != nil {
		return 0, err
	}
	if len(nodes) != 1 {
		return 0, fmt.Errorf("%d nodes, want the one local node", len(nodes))
	}
	return strconv.Atoi(nodes[0].PID)
}

// nodeCPU is utime+stime of pid from /proc/<pid>/stat.
func nodeCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // comm may hold spaces
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// proxy forwards TCP connections to target and counts the bytes both ways.
type proxy struct {
	addr  string
	bytes atomic.Int64
}

func newProxy(target string) (*proxy, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c, target)
		}
	}()
	return p, nil
}

func (p *proxy) forward(c net.Conn, target string) {
	defer func() { _ = c.Close() }()
	var d net.Dialer
	u, err := d.DialContext(context.Background(), "tcp", target)
	if err != nil {
		return
	}
	defer func() { _ = u.Close() }()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(counting{u, &p.bytes}, c)
		close(done)
	}()
	_, _ = io.Copy(counting{c, &p.bytes}, u)
	<-done
}

// counting counts what is written through it as it goes: connections are
// kept alive across rounds.
type counting struct {
	w io.Writer
	n *atomic.Int64
}

func (c counting) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

func (r *result) print(w io.Writer, queues int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%d queues in one vhost; node idle %.2f CPU-s/min (subtracted below)\t\n", queues, r.idlePerMin.Seconds())
	fmt.Fprintln(tw, "reader\twall s\tqueuewatch CPU-s\tnode CPU-s (raw)\tnode CPU-s/min at 15 s\tKB on the wire\tqueues or samples\t")
	for _, c := range r.costs {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f (%.2f)\t%.2f\t%d\t%d\t\n", c.name, c.wall.Seconds(), c.self.Seconds(),
			c.cpu.Seconds(), c.raw.Seconds(), 4*c.cpu.Seconds(), c.bytes/1000, c.items)
	}
	_ = tw.Flush()
	q, p := r.costs[1], r.costs[2+len(listings)]
	fmt.Fprintf(w, "\nratios, queuewatch steady poll ÷ plugin scrape (coarse+consumers): wall %.2f×, node CPU %.2f× (raw %.2f×), bytes %.2f×\n",
		ratio(q.wall, p.wall), ratio(q.cpu, p.cpu), ratio(q.raw, p.raw), float64(q.bytes)/float64(max(p.bytes, 1)))
	fmt.Fprintf(w, "queuewatch CPU per poll %.2f s; node CPU-s/min incl. idle: queuewatch %.2f, plugin %.2f (%.2f×)\n",
		q.self.Seconds(), r.idlePerMin.Seconds()+4*q.cpu.Seconds(), r.idlePerMin.Seconds()+4*p.cpu.Seconds(),
		(r.idlePerMin.Seconds()+4*q.cpu.Seconds())/(r.idlePerMin.Seconds()+4*p.cpu.Seconds()))
}

func ratio(a, b time.Duration) float64 { return a.Seconds() / max(b.Seconds(), 0.001) }
