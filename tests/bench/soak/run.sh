#!/usr/bin/env bash
# Soak: kinformerd against kubesim for --minutes under steady churn and a random fault every
# --fault-every seconds, serving two read-API watchers (kinformer-watch: every pod, and
# track=canary) and a webhook (webhook_sink.mjs). Every --sample seconds it records kinformerd's
# RSS, live heap, threads, open file descriptors and informer events. At the end churn stops, the
# faults are lifted, and every consumer's view is compared with kubesim's truth (compare_views.mjs).
# Writes soak.md, soak.tsv, soak_faults.tsv and soak.png (with gnuplot) into --results.
# A bench script, not a CI step: it takes --minutes plus a few.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tests/bench/soak/run.sh [options]
  --build DIR        C++ build dir holding app/kubesim, app/kinformerd, app/kinformer-watch (build)
  --minutes M        how long churn and faults run (30)
  --pods N           pods kubesim preloads, spread over 50 namespaces (50000)
  --churn R          pod writes per second (200)
  --fault-every S    seconds between faults (30)
  --warmup M         minutes left out of the RSS slope and the fd/thread ranges
                     (default: 5, or a sixth of --minutes when that is shorter)
  --sample S         seconds between samples (5)
  --seed N           seed of kubesim's objects and churn, and of the fault order (1)
  --results DIR      where soak.md, soak.tsv, soak_faults.tsv and soak.png go (tests/bench/results)
  --converge S       how long the views may take to match the truth at the end (300)
  --faults LIST      comma-separated faults to draw from (default: all of them): drop,
                     watch_410, watch_500, watch_429, list_500, list_429, continue_expired, stall,
                     compact, restore, restore_to_backup, resource_version_gap, latency
Relative paths are taken from the current directory; the defaults from the repository root.
Exit status: 0 when every view matched the truth, kinformerd survived every fault, the RSS was
flat and the threads and descriptors stable; 1 otherwise.
EOF
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
script_name=soak
# shellcheck source=../lib/script_support.sh
source "$here/../lib/script_support.sh"

build="$repo/build"
minutes=30
pods=50000
namespaces=50
churn=200
fault_every=30
warmup=
sample=5
seed=1
results="$repo/tests/bench/results"
converge_limit=300
timeout=900
faults=

while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --build) need_value "$@"; build=$(absolute "$2"); shift 2 ;;
    --results) need_value "$@"; results=$(absolute "$2"); shift 2 ;;
    --minutes) need_value "$@"; number "$1" "$2"; minutes=$2; shift 2 ;;
    --pods) need_value "$@"; number "$1" "$2"; pods=$2; shift 2 ;;
    --churn) need_value "$@"; number "$1" "$2"; churn=$2; shift 2 ;;
    --fault-every) need_value "$@"; number "$1" "$2"; fault_every=$2; shift 2 ;;
    --warmup) need_value "$@"; number "$1" "$2"; warmup=$2; shift 2 ;;
    --sample) need_value "$@"; number "$1" "$2"; sample=$2; shift 2 ;;
    --seed) need_value "$@"; number "$1" "$2"; seed=$2; shift 2 ;;
    --converge) need_value "$@"; number "$1" "$2"; converge_limit=$2; shift 2 ;;
    --faults) need_value "$@"; faults=$2; shift 2 ;;
    *) usage >&2; die "unknown argument $1" ;;
  esac
done
((minutes >= 1 && pods >= 1 && sample >= 1 && fault_every >= sample)) ||
  die "--minutes, --pods and --sample must be at least 1, --fault-every at least --sample"
[[ -n $warmup ]] || warmup=$((minutes / 6 < 5 ? minutes / 6 : 5))
((warmup < minutes)) || die "--warmup must be shorter than --minutes"
fault_names=(drop watch_410 watch_500 watch_429 list_500 list_429 continue_expired stall compact
  restore restore_to_backup resource_version_gap latency)
if [[ -n $faults ]]; then # a subset, to probe what some faults do
  IFS=, read -r -a chosen <<<"$faults"
  ((${#chosen[@]})) || die "--faults names no fault"
  for name in "${chosen[@]}"; do
    [[ " ${fault_names[*]} " == *" $name "* ]] || die "--faults: unknown fault $name"
  done
  fault_names=("${chosen[@]}")
fi

kubesim=$(first_executable "$build/app/kubesim")
kinformerd=$(first_executable "$build/app/kinformerd")
watch_bin=$(first_executable "$build/app/kinformer-watch")
for bin in "$kubesim" "$kinformerd" "$watch_bin"; do
  [[ -f $bin && -x $bin ]] || die "$bin not found: build it first (ninja -C $build kubesim kinformerd kinformer-watch)"
done
for tool in node curl awk; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
have_gnuplot=1
command -v gnuplot >/dev/null || { have_gnuplot=0; log "gnuplot not found: no PNG"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
children=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_processes ${children[@]+"${children[@]}"}
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the processes -----------------------------------------------------------------------------
log "starting kubesim with $pods pods over $namespaces namespaces (seed $seed)"
start_kubesim "$kubesim" "$work" "$timeout" --pods "$pods" --namespaces "$namespaces" --seed "$seed"
children+=("$kubesim_pid")
sim() { # METHOD PATH -> body on stdout
  curl -sf --max-time 30 -X "$1" "$url$2"
}

node "$here/webhook_sink.mjs" >"$work/sink.out" 2>"$work/sink.err" &
sink_pid=$!
children+=("$sink_pid")
sink_url=
for ((i = 0; i < 100; ++i)); do
  { read -r line <"$work/sink.out"; } 2>/dev/null || line=
  [[ $line == "listening on "* ]] && { sink_url=${line#listening on }; break; }
  alive "$sink_pid" || die "the webhook sink exited" "$work/sink.err"
  sleep 0.1
done
[[ -n $sink_url ]] || die "the webhook sink did not listen" "$work/sink.err"

cat >"$work/kinformerd.yaml" <<EOF
cluster:
  mode: server
  server: $url
informers:
  - resource: pods
handlers:
  webhooks:
    - name: soak
      url: $sink_url/hook
      batch_size: 500
      flush_interval: 200ms
      queue_bound: 200000
listen:
  api: "127.0.0.1:0"
  metrics: "127.0.0.1:0"
  api_anonymous: true # its read-API watchers send no token (kubesim reviews none)
EOF
log "starting kinformerd (informer: pods; webhook: $sink_url)"
"$kinformerd" --config "$work/kinformerd.yaml" >"$work/kinformerd.out" 2>"$work/kinformerd.err" &
kinformerd_pid=$!
children+=("$kinformerd_pid")
wait_kinformerd_ready "$work/kinformerd.err" "$timeout"
log "kinformerd ready: read API $api_url, metrics $metrics_url"

start_watcher() { # LOG ARGS...
  local out=$1
  shift
  "$watch_bin" -s "$api_url" -A "$@" pods >"$out" 2>"$out.err" &
  children+=("$!")
}
start_watcher "$work/watch_all.log"
start_watcher "$work/watch_canary.log" -l track=canary
for f in watch_all watch_canary; do
  for ((i = 0; i < timeout * 10; ++i)); do
    grep -q '"SYNCED"' "$work/$f.log" && break
    sleep 0.1
  done
  grep -q '"SYNCED"' "$work/$f.log" || die "$f did not sync" "$work/$f.log.err"
done
log "read-API watchers synced"
sim POST /sim/faults/backup >/dev/null || die "cannot take kubesim's backup"

# --- faults ------------------------------------------------------------------------------------
# Each fault is a function (below, fault_NAME); the ones that last until lifted set $lift to the
# lifting function.
cut_watches() { sim POST /sim/faults/drop-watches >/dev/null; }
force_relist() { sim POST '/sim/faults/fail-watches?count=1' >/dev/null && cut_watches; }
fault_drop() { cut_watches; }
fault_watch_410() { force_relist; }
fault_watch_500() { sim POST '/sim/faults/fail-watches?count=1&code=500' >/dev/null && cut_watches; }
fault_watch_429() { sim POST '/sim/faults/fail-watches?count=1&code=429&retryAfter=1' >/dev/null && cut_watches; }
fault_list_500() { sim POST '/sim/faults/fail-lists?count=1&code=500' >/dev/null && force_relist; }
fault_list_429() { sim POST '/sim/faults/fail-lists?count=1&code=429&retryAfter=1' >/dev/null && force_relist; }
fault_continue_expired() { sim POST '/sim/faults/expire-continues?count=1' >/dev/null && force_relist; }
fault_stall() { sim POST /sim/faults/stall-watches >/dev/null && lift=lift_stall; }
lift_stall() { sim POST /sim/faults/resume-watches >/dev/null; }
fault_compact() { sim POST /sim/faults/compact >/dev/null && cut_watches; }
fault_restore() { sim POST /sim/faults/restore >/dev/null; }
fault_restore_to_backup() { sim POST '/sim/faults/restore?to=backup' >/dev/null; }
fault_resource_version_gap() { sim POST '/sim/faults/skip-revisions?count=5000' >/dev/null && cut_watches; }
fault_latency() { sim POST '/sim/faults/latency?ms=50' >/dev/null && lift=lift_latency; }
lift_latency() { sim POST '/sim/faults/latency?ms=0' >/dev/null; }
lift_after=15 # seconds a lasting fault (stall, latency) holds

# --- sampling ----------------------------------------------------------------------------------
# "RSS_KB THREADS FDS" of kinformerd into $s_rss $s_threads $s_fds.
process_sample() {
  s_rss=$(awk '/^VmRSS:/{print $2}' "/proc/$kinformerd_pid/status")
  s_threads=$(awk '/^Threads:/{print $2}' "/proc/$kinformerd_pid/status")
  s_fds=$(find "/proc/$kinformerd_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
}
# Sum of a metric family over its labels, from kinformerd's /metrics (scraped now, or the text
# of the last scrape()).
metric_sum() { # NAME [TEXT]
  local text=${2-$(curl -sf --max-time 10 "$metrics_url/metrics")}
  awk -v n="$1" 'index($1, n "{") == 1 || $1 == n {s += $NF} END {printf "%.0f", s}' <<<"$text"
}
scrape() { scraped=$(curl -sf --max-time 10 "$metrics_url/metrics"); }
ready() { curl -sf --max-time 5 -o /dev/null "$metrics_url/readyz"; }

RANDOM=$seed
printf 't_s\trss_mb\tthreads\tfds\tevents_total\tevents_per_s\trelists_total\tfault\theap_mb\n' >"$work/soak.tsv"
printf 't_s\tfault\tready_before_next\tkinformerd_alive\n' >"$work/faults.tsv"
log "churn at $churn writes/s and a fault every $fault_every s for $minutes min (warm-up $warmup min)"
sim POST "/sim/churn?rate=$churn" >/dev/null || die "cannot start churn"
now_us
t0=$now
duration=$((minutes * 60))
next_sample=0
next_fault=$fault_every
lift=
lift_at=0
last_events=$(metric_sum kinformer_informer_events_total)
last_t=0
pending_fault= # the last fault, judged at the sample before the next one
# Appends the pending fault's row to faults.tsv: was kinformerd ready again, and alive (ALIVE).
judge_pending_fault() { # ALIVE
  [[ -n $pending_fault ]] || return 0
  local ready_now=no
  ready && ready_now=yes
  printf '%s\t%s\t%s\t%s\n' "$pending_t" "$pending_fault" "$ready_now" "$1" >>"$work/faults.tsv"
}
pending_t=0
died=0
while :; do
  now_us
  t=$(((now - t0) / 1000000))
  ((t >= duration)) && break
  alive "$kinformerd_pid" || { died=1; log "kinformerd died at ${t}s"; break; }
  if [[ -n $lift ]] && ((t >= lift_at)); then
    "$lift" || log "lifting with $lift failed"
    lift=
  fi
  fault=-
  if ((t >= next_fault)); then
    judge_pending_fault yes
    [[ -n $lift ]] && { "$lift" || true; lift=; }
    fault=${fault_names[RANDOM % ${#fault_names[@]}]}
    "fault_$fault" || log "injecting $fault failed"
    lift_at=$((t + lift_after))
    pending_fault=$fault
    pending_t=$t
    next_fault=$((next_fault + fault_every))
  fi
  if ((t >= next_sample)) || [[ $fault != - ]]; then
    process_sample
    scrape
    events=$(metric_sum kinformer_informer_events_total "$scraped")
    relists=$(metric_sum kinformer_informer_relists_total "$scraped")
    heap=$(metric_sum kinformer_heap_in_use_bytes "$scraped")
    rate=0
    ((t > last_t)) && rate=$(((events - last_events) / (t - last_t)))
    printf '%d\t%.1f\t%d\t%d\t%s\t%d\t%s\t%s\t%.1f\n' "$t" "$(awk -v k="$s_rss" 'BEGIN{print k/1024}')" \
      "$s_threads" "$s_fds" "$events" "$rate" "$relists" "$fault" \
      "$(awk -v b="$heap" 'BEGIN{print b/1048576}')" >>"$work/soak.tsv"
    last_events=$events
    last_t=$t
    ((t >= next_sample)) && next_sample=$((next_sample + sample))
  fi
  sleep 0.5
done

# --- the end: lift everything, stop churn, compare every view with the truth --------------------
sim POST /sim/faults/reset >/dev/null || log "lifting the faults failed"
sim POST '/sim/churn?rate=0' >/dev/null || log "stopping churn failed"
churn_state=$(sim GET /sim/churn || echo '{}')
judge_pending_fault "$( ((died)) && echo no || echo yes)"
((died)) && die "kinformerd died during the soak" "$work/kinformerd.err"

log "churn stopped; waiting up to $converge_limit s for every view to match kubesim's truth"
now_us
end_start=$now
report=
while :; do
  report=$(node --max-old-space-size=4096 "$here/compare_views.mjs" --sim "$url" --cache "$api_url" \
    --webhook "$sink_url" --watch "$work/watch_all.log" --watch "$work/watch_canary.log@track=canary" \
    2>"$work/compare.err") || die "comparing the views failed" "$work/compare.err"
  [[ $report == *'"ok":true'* ]] && break
  (($(seconds_since "$end_start" | cut -d. -f1) < converge_limit)) || break
  sleep 5
done
converge_s=$(seconds_since "$end_start")
process_sample
final_rss=$s_rss

# --- the report --------------------------------------------------------------------------------
mkdir -p "$results"
cp "$work/soak.tsv" "$results/soak.tsv"
cp "$work/faults.tsv" "$results/soak_faults.tsv"
echo "$report" >"$work/views.json"
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
machine="$(nproc) cores, $(awk '/^MemTotal:/{printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"

# Least squares of column COLUMN of soak.tsv over time after warm-up: "slope (MB/hour), mean,
# drift over the window as % of the mean, threads min max, fds min max, samples".
trend() { # COLUMN
  awk -F'\t' -v w=$((warmup * 60)) -v c="$1" '
  NR > 1 && $1 >= w { n++; x = $1; y = $c; sx += x; sy += y; sxx += x*x; sxy += x*y
    if (n == 1 || $3 < tmin) tmin = $3; if (n == 1 || $3 > tmax) tmax = $3
    if (n == 1 || $4 < fmin) fmin = $4; if (n == 1 || $4 > fmax) fmax = $4
    if (n == 1) first = x; last = x }
  END { if (n < 2) { print "0 0 0 0 0 0 0 " n; exit }
    d = n*sxx - sx*sx; b = d ? (n*sxy - sx*sy) / d : 0; m = sy / n
    printf "%.2f %.1f %.2f %d %d %d %d %d\n", b * 3600, m, 100 * b * (last - first) / m, tmin, tmax, fmin, fmax, n }' \
  "$work/soak.tsv"
}
# The same for the lowest RSS of each minute after warm-up: "slope (MB/hour), mean, drift %,
# minutes". A relist's peak lasts seconds; where peaks fall near the window's ends they tilt the
# slope of every sample, and leave this one alone.
floor_trend() {
  awk -F'\t' -v w=$((warmup * 60)) '
  NR > 1 && $1 >= w { m = int($1 / 60); if (!(m in low) || $2 < low[m]) low[m] = $2 }
  END { for (m in low) { n++; x = m * 60; y = low[m]; sx += x; sy += y; sxx += x*x; sxy += x*y
      if (n == 1 || x < first) first = x; if (n == 1 || x > last) last = x }
    if (n < 2) { print "0 0 0 " n; exit }
    d = n*sxx - sx*sx; b = d ? (n*sxy - sx*sy) / d : 0; m = sy / n
    printf "%.2f %.1f %.2f %d\n", b * 3600, m, 100 * b * (last - first) / m, n }' "$work/soak.tsv"
}
read -r slope mean drift threads_min threads_max fds_min fds_max n < <(trend 2) # RSS
read -r floor_slope floor_mean floor_drift floor_minutes < <(floor_trend)
read -r heap_slope heap_mean heap_drift _ < <(trend 9)                          # the live heap
faults_total=$(($(wc -l <"$work/faults.tsv") - 1))
faults_ready=$(awk -F'\t' 'NR > 1 && $3 == "yes"' "$work/faults.tsv" | wc -l)
flat=$(awk -v d="$drift" 'BEGIN { print (d <= 5 && d >= -5) ? "yes" : "no" }')
threads_stable=$( ((threads_max == threads_min)) && echo yes || echo no)
fds_stable=$( ((fds_max - fds_min <= 16)) && echo yes || echo no)
views_ok=$([[ $report == *'"ok":true'* ]] && echo yes || echo no)

node -e '
const [views, md] = [JSON.parse(process.argv[1]), process.argv[2]];
const rows = views.views.map((v) => `| ${v.name} | ${v.objects} | ${v.truth} | ${v.lost} | ${v.stale} | ${v.extra} |` +
  (v.examples.length ? ` ${v.examples.join("; ")} |` : " |"));
require("fs").writeFileSync(md, rows.join("\n") + "\n");
' "$report" "$work/views.md"

{
  echo "# Soak"
  echo
  echo "Commit $commit, $(date -u +%Y-%m-%d), on $machine."
  echo "\`tests/bench/soak/run.sh --minutes $minutes --pods $pods --churn $churn --fault-every $fault_every --seed $seed${faults:+ --faults $faults}\`"
  echo
  echo "kinformerd cached $pods pods (full objects, managedFields dropped) from kubesim while churn"
  echo "wrote $churn pods/s and a random fault hit every $fault_every s. It served two read-API watchers"
  echo "(kinformer-watch: every pod, and track=canary) and a webhook. Churn at the end: $churn_state."
  echo
  echo "| figure | value | verdict |"
  echo "|---|---|---|"
  echo "| RSS slope after the $warmup-min warm-up | $slope MB/hour ($drift% of the mean $mean MB over the window, $n samples) | flat: $flat (within ±5%) |"
  echo "| slope of each minute's lowest RSS after warm-up (no relist peaks) | $floor_slope MB/hour ($floor_drift% of the mean $floor_mean MB, $floor_minutes minutes) | |"
  echo "| live heap (kinformer_heap_in_use_bytes) slope after warm-up | $heap_slope MB/hour ($heap_drift% of the mean $heap_mean MB) | |"
  echo "| threads after warm-up | $threads_min to $threads_max | stable: $threads_stable |"
  echo "| open file descriptors after warm-up | $fds_min to $fds_max | stable: $fds_stable (range ≤ 16) |"
  echo "| faults injected / kinformerd ready before the next one | $faults_total / $faults_ready | alive throughout: $( ((died)) && echo no || echo yes) |"
  echo "| every view equal to the truth after churn stopped | within ${converge_s%.*} s | $views_ok |"
  echo "| RSS at the end | $(awk -v k="$final_rss" 'BEGIN{printf "%.1f", k/1024}') MB | |"
  echo
  echo "| view | objects | truth | lost | stale | extra | examples |"
  echo "|---|---:|---:|---:|---:|---:|---|"
  cat "$work/views.md"
  echo
  echo "Faults by kind (count): $(awk -F'\t' 'NR > 1 {c[$2]++} END {for (f in c) printf "%s %d, ", f, c[f]}' "$work/faults.tsv" | sed 's/, $//')."
  echo "Every sample: soak.tsv; every fault: soak_faults.tsv$( ((have_gnuplot)) && echo '; the plot: soak.png')."
} >"$results/soak.md"

if ((have_gnuplot)); then
  cat >"$work/soak.gp" <<EOF
set terminal pngcairo size 1100,480 font ',10'
set output '$results/soak.png'
set title 'kinformerd soak: $pods pods, $churn writes/s, a fault every $fault_every s (commit $commit)'
set xlabel 'minutes'
set ylabel 'MB'
set y2label 'informer events/s'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key top left
set datafile separator '\t'
plot '$work/soak.tsv' using (\$1/60):2 every ::1 with lines lw 2 title 'RSS', \
     '' using (\$1/60):9 every ::1 with lines lw 1 lc rgb '#2060c0' title 'live heap', \
     '' using (\$1/60):6 every ::1 axes x1y2 with lines lc rgb '#999999' title 'events/s', \
     '' using (\$1/60):(strcol(8) ne '-' ? 0 : 1/0) every ::1 with points pt 9 ps 1 lc rgb '#cc0000' title 'fault'
EOF
  gnuplot "$work/soak.gp" 2>"$work/gnuplot.err" || die "gnuplot failed" "$work/gnuplot.err"
fi
cat "$results/soak.md"
[[ $views_ok == yes && $flat == yes && $threads_stable == yes && $fds_stable == yes && $faults_ready == "$faults_total" ]]
