#!/usr/bin/env bash
# Soak: queuewatch against the target workload (200 topics × 12 partitions,
# 500 groups × 3 topics) for 10 minutes, polling and scraped every 15 s;
# prints RSS, CPU seconds and scrape time after each scrape, then the total.
# Usage: internal/kafkaload/soak.sh [minutes]
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=${1:-10}
dir=$(mktemp -d)
go build -o "$dir/queuewatch" ./cmd/queuewatch
go build -o "$dir/loadcluster" ./internal/kafkaload/loadcluster
"$dir/loadcluster" -config "$dir/load.yaml" -listen 127.0.0.1:8090 &
load=$!
trap 'kill $load ${qw:-} 2>/dev/null; rm -rf "$dir"' EXIT
until [ -s "$dir/load.yaml" ]; do sleep 0.2; done
"$dir/queuewatch" serve --config "$dir/load.yaml" --log-level warn &
qw=$!
sleep 2
hz=$(getconf CLK_TCK)
cpu() { awk -v hz="$hz" '{print ($14+$15)/hz}' "/proc/$qw/stat"; }
start_cpu=$(cpu); start=$(date +%s)
for _ in $(seq 1 $((minutes * 4))); do
  sleep 15
  t0=$(date +%s%N)
  size=$(curl -s -H 'Accept-Encoding: gzip' -o /dev/null -w '%{size_download}' http://127.0.0.1:8090/metrics)
  t1=$(date +%s%N)
  echo "t=$(( $(date +%s) - start ))s rss_kib=$(awk '/VmRSS/{print $2}' "/proc/$qw/status") cpu_s=$(cpu) scrape_ms=$(( (t1 - t0) / 1000000 )) gz_bytes=$size"
done
echo "cpu $(echo "$(cpu) - $start_cpu" | bc) s over $(( $(date +%s) - start )) s"
