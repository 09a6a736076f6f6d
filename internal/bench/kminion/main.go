// Command kminion measures queuewatch side by side with kminion, the Kafka lag
// exporter it is most often compared with, in one run against one cluster.
//
// It seeds an in-process Kafka-protocol cluster (kfake) with the workload of
// the performance targets, builds queuewatch from this tree, and runs each
// exporter in turn as its own process against the same cluster. For each it
// measures:
//
//   - ready: from process start until /metrics shows lag for every group;
//   - CPU to ready: user+system time of the process at that moment (/proc);
//   - peak RSS (VmHWM) over the whole run;
//   - the /metrics series count and size (uncompressed);
//   - the median scrape time over the steady phase (gzip, as Prometheus asks);
//   - the steady poll: queuewatch's own poll duration histogram, and for
//     kminion, which reads the cluster while it is scraped, the scrape;
//   - CPU per minute over the steady phase, scraped every 15 s.
//
// Usage:
//
//	go run ./internal/bench/kminion [-large] [-groups N] [-kminion .cache/bin/kminion] [-steady 60s] [-families]
//
// -families also prints, for each exporter, the series and sample bytes of
// every family of 100 series or more: which families grow with the workload.
//
// -groups N scales the large workload to N groups (N × 60 group-partitions
// on the same 800 topics): the sizing runs of docs/performance.md.
//
// kminion is looked for at -kminion (default .cache/bin/kminion, an ignored
// folder): a kminion v2.3.5 binary you built from its source yourself. When
// it is not there, queuewatch is measured alone and the table says so. Exporters run one after the other, never together, so neither
// takes CPU from the other on a small machine; both see the same seeded
// cluster, which nothing writes to during the run.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/kafkaload"
)

func main() {
	large := flag.Bool("large", false, "the 100,000 group-partition workload (800 topics × 20 partitions, 1,700 groups × 3 topics)")
	kminion := flag.String("kminion", ".cache/bin/kminion", "kminion binary; measured when it exists")
	steady := flag.Duration("steady", time.Minute, "steady phase after ready: CPU per minute, scrapes every 15 s")
	only := flag.String("only", "", "measure only this exporter (queuewatch or kminion)")
	groups := flag.Int("groups", 0, "the large workload with this many groups (60 group-partitions each) instead of 1,700")
	granularity := flag.String("granularity", "", "queuewatch's metrics.granularity (partition, topic or group); empty: the default")
	families := flag.Bool("families", false, "also print each exporter's series and bytes per metric family")
	flag.Parse()
	w := kafkaload.Target
	if *large || *groups > 0 {
		w = kafkaload.Large
	}
	if *groups > 0 {
		w.Groups = *groups
	}
	if err := run(w, *kminion, *steady, *only, *granularity, *families); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(w kafkaload.Workload, kminionBin string, steady time.Duration, only, granularity string, families bool) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "qw-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()

	qwBin := filepath.Join(dir, "queuewatch")
	build := exec.CommandContext(ctx, "go", "build", "-o", qwBin, "./cmd/queuewatch")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build queuewatch: %w", err)
	}

	seedStart := time.Now()
	c, err := kafkaload.Start(ctx, w)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	groups, committed, err := inventory(ctx, brokers)
	if err != nil {
		return err
	}
	fmt.Printf("workload: %d topics × %d partitions, %d groups × %d topics: %d committed group-partitions (seeded in %s)\n",
		w.Topics, w.Partitions, w.Groups, w.TopicsPerGroup, committed, time.Since(seedStart).Round(time.Millisecond))

	var results []result
	if only == "" || only == "queuewatch" {
		r, err := measure(ctx, queuewatch(ctx, qwBin, dir, brokers, granularity), groups, steady)
		if err != nil {
			return fmt.Errorf("queuewatch: %w", err)
		}
		results = append(results, r)
	}
	kminionNote := ""
	if only == "" || only == "kminion" {
		if _, err := os.Stat(kminionBin); err != nil {
			kminionNote = fmt.Sprintf("kminion not measured: %s not found (put a kminion v2.3.5 binary there)", kminionBin)
		} else {
			r, err := measure(ctx, kminion(ctx, kminionBin, dir, brokers), groups, steady)
			if err != nil {
				return fmt.Errorf("kminion: %w", err)
			}
			results = append(results, r)
		}
	}
	printTable(os.Stdout, results)
	if families {
		for _, r := range results {
			printFamilies(os.Stdout, r)
		}
	}
	if kminionNote != "" {
		fmt.Println(kminionNote)
	}
	return nil
}

// inventory lists the seeded groups and counts their committed partitions.
func inventory(ctx context.Context, brokers []string) (groups []string, committed int, err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list groups: %w", err)
	}
	groups = listed.Groups()
	for _, r := range adm.FetchManyOffsets(ctx, groups...) {
		if r.Err != nil {
			return nil, 0, fmt.Errorf("fetch offsets of %s: %w", r.Group, r.Err)
		}
		r.Fetched.Each(func(kadm.OffsetResponse) { committed++ })
	}
	slices.Sort(groups)
	return groups, committed, nil
}

// exporter is one process to measure and how to read its /metrics.
type exporter struct {
	name    string
	cmd     *exec.Cmd
	metrics string
	// lagGroup returns the group of a lag series line, or "" when the line
	// is not a lag series.
	lagGroup func(line string) string
	// pollSeconds reads the total seconds and count of the exporter's own
	// polls from its /metrics; nil when polls happen at scrape time.
	pollSeconds func(body []byte) (sum float64, count float64)
}

func queuewatch(ctx context.Context, bin, dir string, brokers []string, granularity string) exporter {
	addr := freeAddr(ctx)
	cfg := filepath.Join(dir, "queuewatch.yaml")
	text := fmt.Sprintf("listen: %s\npoll_interval: 15s\ndata_dir: %s\nlog: {level: warn}\nkafka:\n  - name: bench\n    brokers: [%s]\n",
		addr, filepath.Join(dir, "qwdata"), strings.Join(brokers, ", "))
	if granularity != "" {
		text += "metrics: {granularity: " + granularity + "}\n"
	}
	must(os.WriteFile(cfg, []byte(text), 0o600))
	cmd := exec.CommandContext(ctx, bin, "serve", "--config", cfg)
	cmd.Stderr = os.Stderr
	return exporter{
		name: "queuewatch", cmd: cmd, metrics: "http://" + addr + "/metrics",
		lagGroup: func(line string) string {
			if !strings.HasPrefix(line, "queuewatch_kafka_consumergroup_lag{") &&
				!strings.HasPrefix(line, "queuewatch_kafka_consumergroup_topic_lag{") {
				return ""
			}
			return label(line, "group")
		},
		pollSeconds: func(body []byte) (float64, float64) {
			return sample(body, "queuewatch_collector_duration_seconds_sum{"), sample(body, "queuewatch_collector_duration_seconds_count{")
		},
	}
}

func kminion(ctx context.Context, bin, dir string, brokers []string) exporter {
	port := strings.TrimPrefix(freeAddr(ctx), "127.0.0.1:")
	cfg := filepath.Join(dir, "kminion.yaml")
	text := fmt.Sprintf("logger: {level: warn}\nkafka:\n  brokers: [%s]\nminion:\n  consumerGroups: {enabled: true, scrapeMode: adminApi, granularity: partition}\n  logDirs: {enabled: false}\nexporter: {host: 127.0.0.1, port: %s}\n",
		strings.Join(brokers, ", "), port)
	must(os.WriteFile(cfg, []byte(text), 0o600))
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "CONFIG_FILEPATH="+cfg)
	cmd.Stderr = os.Stderr
	return exporter{
		name: "kminion", cmd: cmd, metrics: "http://127.0.0.1:" + port + "/metrics",
		lagGroup: func(line string) string {
			if !strings.HasPrefix(line, "kminion_kafka_consumer_group_topic_partition_lag{") &&
				!strings.HasPrefix(line, "kminion_kafka_consumer_group_topic_lag{") {
				return ""
			}
			return label(line, "group_id")
		},
	}
}

// result is what measure found for one exporter.
type result struct {
	name         string
	ready        time.Duration
	cpuToReady   time.Duration
	peakRSS      int64 // bytes
	series       int
	size         int
	families     []familyCount // from the last scrape, most series first
	scrapeMedian time.Duration
	poll         time.Duration
	cpuPerMinute time.Duration
}

func measure(ctx context.Context, e exporter, groups []string, steady time.Duration) (result, error) {
	r := result{name: e.name}
	start := time.Now()
	if err := e.cmd.Start(); err != nil {
		return r, err
	}
	pid := e.cmd.Process.Pid
	defer func() {
		_ = e.cmd.Process.Kill()
		_ = e.cmd.Wait()
	}()
	want := map[string]bool{}
	for _, g := range groups {
		want[g] = true
	}
	// Ready: scrape one request at a time (kminion reads the cluster while
	// it is scraped, so overlapping scrapes would only queue) until every
	// group's lag is there.
	deadline := start.Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			return r, errors.New("not ready after 2 minutes")
		}
		body, _, err := scrape(ctx, e.metrics, false)
		if err == nil && allGroups(body, want, e.lagGroup) {
			r.ready = time.Since(start)
			r.cpuToReady = cpuTime(pid)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "%s ready in %s\n", e.name, r.ready.Round(time.Millisecond))

	// Steady: let the first polls settle, then scrape every 15 s.
	time.Sleep(5 * time.Second)
	body, _, err := scrape(ctx, e.metrics, false)
	if err != nil {
		return r, err
	}
	var sum0, n0 float64
	if e.pollSeconds != nil {
		sum0, n0 = e.pollSeconds(body)
	}
	cpu0, t0 := cpuTime(pid), time.Now()
	var scrapes []time.Duration
	for time.Since(t0) < steady {
		_, took, err := scrape(ctx, e.metrics, true)
		if err != nil {
			return r, err
		}
		scrapes = append(scrapes, took)
		time.Sleep(15*time.Second - took)
	}
	r.cpuPerMinute = time.Duration(float64(cpuTime(pid)-cpu0) * float64(time.Minute) / float64(time.Since(t0)))
	slices.Sort(scrapes)
	r.scrapeMedian = scrapes[len(scrapes)/2]
	body, _, err = scrape(ctx, e.metrics, false)
	if err != nil {
		return r, err
	}
	r.size = len(body)
	r.series = countSeries(body)
	r.families = countFamilies(body)
	r.poll = r.scrapeMedian
	if e.pollSeconds != nil {
		sum1, n1 := e.pollSeconds(body)
		if n1 > n0 {
			r.poll = time.Duration((sum1 - sum0) / (n1 - n0) * float64(time.Second))
		}
	}
	r.peakRSS = peakRSS(pid)
	return r, nil
}

// scrape GETs url once; with gzip it asks for a compressed body as Prometheus
// does and returns it decompressed.
func scrape(ctx context.Context, url string, gz bool) ([]byte, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	start := time.Now()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return nil, took, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, took, fmt.Errorf("%s: %s", url, resp.Status)
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, took, err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, took, err
		}
	}
	return raw, took, nil
}

func allGroups(body []byte, want map[string]bool, lagGroup func(string) string) bool {
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if g := lagGroup(sc.Text()); want[g] {
			seen[g] = true
		}
	}
	return len(seen) == len(want)
}

func countSeries(body []byte) int {
	n := 0
	for line := range bytes.Lines(body) {
		if len(bytes.TrimSpace(line)) > 0 && line[0] != '#' {
			n++
		}
	}
	return n
}

// familyCount is one metric family's share of a /metrics body.
type familyCount struct {
	name          string
	series, bytes int
}

// countFamilies counts the series and sample-line bytes of each family in
// body (a histogram's _bucket, _sum and _count lines count as separate
// families), the most series first: it shows which families grow with the
// workload.
func countFamilies(body []byte) []familyCount {
	idx := map[string]int{}
	var out []familyCount
	for line := range bytes.Lines(body) {
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		end := bytes.IndexAny(line, "{ ")
		if end < 0 {
			continue
		}
		name := string(line[:end])
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, familyCount{name: name})
		}
		out[i].series++
		out[i].bytes += len(line)
	}
	slices.SortFunc(out, func(a, b familyCount) int {
		if a.series != b.series {
			return b.series - a.series
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// printFamilies prints r's series and bytes per family as a Markdown table,
// the families under 100 series in one row.
func printFamilies(w io.Writer, r result) {
	fmt.Fprintf(w, "\n%s: series and sample bytes per family\n\n| family | series | bytes |\n|---|---|---|\n", r.name)
	var rest familyCount
	for _, f := range r.families {
		if f.series < 100 { // runtime and self-metrics: constant, not the workload's
			rest.series, rest.bytes = rest.series+f.series, rest.bytes+f.bytes
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", f.name, count(float64(f.series)), mb(float64(f.bytes)))
	}
	fmt.Fprintf(w, "| families under 100 series | %s | %s |\n", count(float64(rest.series)), mb(float64(rest.bytes)))
}

// label returns the value of name in a series line (no escapes in the
// seeded names).
func label(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// sample sums the values of every series line starting with prefix.
func sample(body []byte, prefix string) float64 {
	var sum float64
	for line := range bytes.Lines(body) {
		s := string(bytes.TrimSpace(line))
		if !strings.HasPrefix(s, prefix) {
			continue
		}
		if i := strings.LastIndexByte(s, ' '); i > 0 {
			if v, err := strconv.ParseFloat(s[i+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// cpuTime is the process's user+system time from /proc/<pid>/stat.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; fields count from after its ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / hz
}

// peakRSS is VmHWM from /proc/<pid>/status, in bytes.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func freeAddr(ctx context.Context) string {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	return l.Addr().String()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func printTable(w io.Writer, rs []result) {
	rows := []struct {
		name string
		val  func(result) float64
		unit func(float64) string
	}{
		{"ready: every group's lag in /metrics", func(r result) float64 { return r.ready.Seconds() }, secs},
		{"CPU to ready", func(r result) float64 { return r.cpuToReady.Seconds() }, secs},
		{"peak RSS", func(r result) float64 { return float64(r.peakRSS) }, mib},
		{"/metrics series", func(r result) float64 { return float64(r.series) }, count},
		{"/metrics size", func(r result) float64 { return float64(r.size) }, mb},
		{"scrape median", func(r result) float64 { return r.scrapeMedian.Seconds() }, secs3},
		{"steady poll", func(r result) float64 { return r.poll.Seconds() }, secs3},
		{"CPU per minute (15 s scrapes)", func(r result) float64 { return r.cpuPerMinute.Seconds() }, secs},
	}
	fmt.Fprintf(w, "\n| | %s", rs[0].name)
	for _, r := range rs[1:] {
		fmt.Fprintf(w, " | %s | ratio", r.name)
	}
	fmt.Fprintln(w, " |")
	fmt.Fprint(w, "|---|---")
	for range rs[1:] {
		fmt.Fprint(w, "|---|---")
	}
	fmt.Fprintln(w, "|")
	for _, row := range rows {
		base := row.val(rs[0])
		fmt.Fprintf(w, "| %s | %s", row.name, row.unit(base))
		for _, r := range rs[1:] {
			v := row.val(r)
			ratio := "–"
			if v > 0 {
				ratio = fmt.Sprintf("%.2f×", base/v)
			}
			fmt.Fprintf(w, " | %s | %s", row.unit(v), ratio)
		}
		fmt.Fprintln(w, " |")
	}
}

func secs(v float64) string  { return fmt.Sprintf("%.2f s", v) }
func secs3(v float64) string { return fmt.Sprintf("%.3f s", v) }
func mib(v float64) string   { return fmt.Sprintf("%.0f MiB", v/(1<<20)) }
func mb(v float64) string    { return fmt.Sprintf("%.1f MB", v/1e6) }
func count(v float64) string {
	s := strconv.FormatInt(int64(v), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
