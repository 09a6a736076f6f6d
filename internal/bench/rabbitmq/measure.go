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
// polls (listEvery cycles: a management listing, then polls served by
// rabbitmq_prometheus), then the listing alone and the plugin scrapes.
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
	pp, err := newProxy("127.0.0.1:15692")
	if err != nil {
		return nil, err
	}
	src, cl, err := newSource("http://"+mp.addr, "http://"+pp.addr)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	both := multiProxy{mp, pp}
	var lastKind string
	pollOnce := func() (int, error) {
		listed := cl.Management().Requests()
		snap, err := src.Poll(ctx)
		if err != nil {
			return 0, err
		}
		lastKind = kindListing
		if cl.Management().Requests() == listed {
			lastKind = kindPlugin
		}
		return len(snap.Queues), nil
	}
	first, err := timed(node, idle, both, 1, "queuewatch first poll (paged listing)", pollOnce)
	if err != nil {
		return nil, err
	}
	r.costs = append(r.costs, first)
	byKind, err := steadyPolls(node, idle, both, rounds, pollOnce, func() string { return lastKind })
	if err != nil {
		return nil, err
	}
	r.costs = append(r.costs, byKind[kindListing], byKind[kindPlugin])
	for _, every := range listEvery {
		r.costs = append(r.costs, cycle(byKind, every))
	}
	for _, l := range listings {
		get := func() (int, error) { return getListing(ctx, mp.addr, l.query) }
		c, err := timed(node, idle, mp, rounds, l.name, get)
		if err != nil {
			return nil, err
		}
		r.costs = append(r.costs, c)
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

// listEvery are the cycles whose mean poll is shown: the default listing
// every fifth poll, and list_every 10 and 20 computed from the same polls.
var listEvery = []int{collector.DefaultListEvery, 10, 20}

// The two kinds of steady poll.
const (
	kindListing = "queuewatch steady poll, management listing"
	kindPlugin  = "queuewatch steady poll, rabbitmq_prometheus"
)

// steadyPolls runs rounds cycles of the source's polls and keeps the
// medians of each kind (kind tells the last poll's).
func steadyPolls(node int, idle time.Duration, p counter, rounds int, poll func() (int, error), kind func() string) (map[string]cost, error) {
	samples := map[string][]sample{}
	items := 0
	for range rounds * collector.DefaultListEvery {
		sm, n, err := once(node, idle, p, poll)
		if err != nil {
			return nil, fmt.Errorf("steady poll: %w", err)
		}
		items = n
		samples[kind()] = append(samples[kind()], sm)
	}
	out := map[string]cost{}
	for _, k := range []string{kindListing, kindPlugin} {
		if len(samples[k]) == 0 {
			return nil, fmt.Errorf("no %s among %d polls", k, rounds*collector.DefaultListEvery)
		}
		out[k] = medians(k, samples[k], items)
		log.Printf("%s: %d polls, %+v", k, len(samples[k]), out[k])
	}
	return out, nil
}

// cycle is the mean cost of one poll over a cycle of every polls: one
// listing and every-1 polls served by the plugin.
func cycle(byKind map[string]cost, every int) cost {
	l, p := byKind[kindListing], byKind[kindPlugin]
	mean := func(a, b time.Duration) time.Duration { return (a + time.Duration(every-1)*b) / time.Duration(every) }
	return cost{
		name: fmt.Sprintf("queuewatch steady poll, mean of 1 listing + %d plugin", every-1),
		wall: mean(l.wall, p.wall), self: mean(l.self, p.self), cpu: mean(l.cpu, p.cpu), raw: mean(l.raw, p.raw),
		bytes: (l.bytes + int64(every-1)*p.bytes) / int64(every), items: p.items,
	}
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
const pollColumns = "name,vhost,node,type,policy,arguments,effective_policy_definition," +
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

func newSource(mgmt, plugin string) (*collector.Source, *rabbit.Cluster, error) {
	cl, err := rabbit.New(config.RabbitMQ{
		Name: "bench", URL: amqpURL, ManagementURL: mgmt, PrometheusURL: plugin,
		ManagementUsername: "guest", ManagementPassword: "guest",
	})
	if err != nil {
		return nil, nil, err
	}
	src, err := collector.New(collector.Options{Cluster: cl, VHosts: []string{benchVHost}})
	return src, cl, err
}

// sample is one run of a reader.
type sample struct{ wall, self, cpu, raw, bytes int64 }

// counter is what counts the bytes on the wire: one proxy or several.
type counter interface{ total() int64 }

// once runs f and measures it.
func once(node int, idle time.Duration, p counter, f func() (int, error)) (sample, int, error) {
	n0, s0, b0 := nodeCPU(node), selfCPU(), p.total()
	t0 := time.Now()
	n, err := f()
	wall := time.Since(t0)
	if err != nil {
		return sample{}, 0, err
	}
	raw := nodeCPU(node) - n0
	netCPU := raw - time.Duration(float64(idle)*wall.Seconds())
	sm := sample{wall: int64(wall), self: int64(selfCPU() - s0), cpu: int64(netCPU), raw: int64(raw), bytes: p.total() - b0}
	time.Sleep(time.Second) // let the node's statistics settle between rounds
	return sm, n, nil
}

// timed runs f rounds times and keeps the median of each measure.
func timed(node int, idle time.Duration, p counter, rounds int, name string, f func() (int, error)) (cost, error) {
	var samples []sample
	var items int
	for range rounds {
		sm, n, err := once(node, idle, p, f)
		if err != nil {
			return cost{}, fmt.Errorf("%s: %w", name, err)
		}
		samples, items = append(samples, sm), n
	}
	c := medians(name, samples, items)
	log.Printf("%s: %+v", name, c)
	return c, nil
}

// medians is the cost with the median of each measure over samples.
func medians(name string, samples []sample, items int) cost {
	pick := func(f func(sample) int64) int64 {
		v := make([]int64, len(samples))
		for i, sm := range samples {
			v[i] = f(sm)
		}
		return median(v)
	}
	return cost{
		name:  name,
		wall:  time.Duration(pick(func(s sample) int64 { return s.wall })),
		self:  time.Duration(pick(func(s sample) int64 { return s.self })),
		cpu:   time.Duration(pick(func(s sample) int64 { return s.cpu })),
		raw:   time.Duration(pick(func(s sample) int64 { return s.raw })),
		bytes: pick(func(s sample) int64 { return s.bytes }),
		items: items,
	}
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

func (p *proxy) total() int64 { return p.bytes.Load() }

// multiProxy counts the bytes of several proxies.
type multiProxy []*proxy

func (m multiProxy) total() int64 {
	var n int64
	for _, p := range m {
		n += p.total()
	}
	return n
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
	steady := r.costs[1 : 3+len(listEvery)]
	p := r.costs[3+len(listEvery)+len(listings)]
	fmt.Fprintln(w, "\nratios to the plugin scrape (coarse+consumers): queuewatch CPU, wall, node CPU (raw), bytes")
	for _, q := range steady {
		fmt.Fprintf(w, "  %s: CPU %.2f×, wall %.2f×, node CPU %.2f× (raw %.2f×), bytes %.2f×\n", q.name,
			ratio(q.self, p.self), ratio(q.wall, p.wall), ratio(q.cpu, p.cpu), ratio(q.raw, p.raw), float64(q.bytes)/float64(max(p.bytes, 1)))
	}
	q := r.costs[3] // the default cycle
	fmt.Fprintf(w, "node CPU-s/min at 15 s incl. idle: queuewatch %.2f (list every %d), plugin %.2f (%.2f×)\n",
		r.idlePerMin.Seconds()+4*q.cpu.Seconds(), collector.DefaultListEvery, r.idlePerMin.Seconds()+4*p.cpu.Seconds(),
		(r.idlePerMin.Seconds()+4*q.cpu.Seconds())/(r.idlePerMin.Seconds()+4*p.cpu.Seconds()))
}

func ratio(a, b time.Duration) float64 { return a.Seconds() / max(b.Seconds(), 0.001) }
