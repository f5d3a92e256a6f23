#!/usr/bin/env bash
# Side-by-side benchmark: kinformer (kinformer-watch) against @kubernetes/client-node 1.4.0's
# informer, on one kubesim, alternating kinformer / client-node for --rounds rounds. Each run:
# start the client, wait until it has synced, then write --events pod changes through kubesim's
# churn and time them in the client; beside kinformer in each round, kubesim's ceiling: one raw
# watch counted without parsing, on the same bursts. Then each client once more at a steady pace
# (--steady-rate), its CPU per event. Then (--read-api on) kinformerd caches the same pods and its
# read API is timed against kubesim's own: listing every pod, and one watch of every pod each,
# drained side by side. Writes side_by_side.{md,json,png} into --results.
# See README.md in this folder for what each figure means.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tests/bench/side_by_side/run.sh [options]
  --build DIR      C++ build dir holding app/kubesim and app/kinformer-watch (build)
  --pods N         pods kubesim preloads, spread over 50 namespaces (100000)
  --rounds R       rounds; each runs kinformer, then client-node (2)
  --warmup W       untimed sync-only runs of each client before round 1 (1): on a VM the first
                   process to touch fresh guest memory pays the host for it (kinformer's first
                   sync after kubesim started: 1.5 s, later ones 0.6 s), and neither client
                   should be measured paying it. Then (with --events) one untimed raw watch of
                   --events changes, so that every timed run meets kubesim's memory recycled, as
                   a long-running API server's is (kubesim's first bursts, into fresh memory,
                   went out at 52,000-65,000 events/s, later ones at 88,000-146,000)
  --events E       watch events timed per client run; 0 = sync only (200000)
  --results DIR    where side_by_side.md, .json and .png go (tests/bench/results)
  --burst B        churn written in bursts of at most B, with at most 2B unread by the client,
                   to stay under kubesim's 100,000-line per-watch queue limit (40000)
  --churn MODE     drain: hold the watch while a burst is written, then time its delivery;
                   paced: write at full speed while the client reads (drain)
  --list MODE      client-node's list function: raw (fetch + JSON.parse) or api (raw)
  --read-api MODE  on: also list and watch every pod through kinformerd's read API and
                   straight from kubesim, side by side; off: skip it (on)
  --read-api-burst B
                   the read-API watches drain bursts of at most B changes (2000): kinformerd
                   drops a watcher with more than 8 MiB unwritten (~2,300 pods)
  --informer-bench MODE
                   on: also run informer_bench (in-process: Boost.JSON limit, latency, relist,
                   fan-out, memory per pod three ways); off: skip it (on)
  --steady-rate R  after the rounds, each client once more: synced, then kubesim's churn at R
                   writes/s for --steady-seconds, and the client's CPU per event at that pace
                   (2000); 0 skips it
  --steady-seconds S
                   how long the steady churn runs (10)
  --idle S         stop waiting for missing events after S quiet seconds (5)
  --timeout S      limit for kubesim's start and for each client run (900)
Relative paths are taken from the current directory; the defaults from the repository root.
EOF
}

command_line="$0 $*"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)

build="$repo/build"
pods=100000
namespaces=50
rounds=2
warmup=1
events=200000
results="$repo/tests/bench/results"
burst=40000
list_mode=raw
churn_mode=drain
read_api=on
read_api_burst=2000
informer_bench_mode=on
steady_rate=2000
steady_seconds=10
idle=5
timeout=900

script_name=side_by_side
# shellcheck source=../lib/script_support.sh
source "$here/../lib/script_support.sh"

while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --build) need_value "$@"; build=$(absolute "$2"); shift 2 ;;
    --results) need_value "$@"; results=$(absolute "$2"); shift 2 ;;
    --pods) need_value "$@"; number "$1" "$2"; pods=$2; shift 2 ;;
    --rounds) need_value "$@"; number "$1" "$2"; rounds=$2; shift 2 ;;
    --warmup) need_value "$@"; number "$1" "$2"; warmup=$2; shift 2 ;;
    --events) need_value "$@"; number "$1" "$2"; events=$2; shift 2 ;;
    --burst) need_value "$@"; number "$1" "$2"; burst=$2; shift 2 ;;
    --steady-rate) need_value "$@"; number "$1" "$2"; steady_rate=$2; shift 2 ;;
    --steady-seconds) need_value "$@"; number "$1" "$2"; steady_seconds=$2; shift 2 ;;
    --idle) need_value "$@"; number "$1" "$2"; idle=$2; shift 2 ;;
    --timeout) need_value "$@"; number "$1" "$2"; timeout=$2; shift 2 ;;
    --list) need_value "$@"; list_mode=$2; shift 2 ;;
    --churn) need_value "$@"; churn_mode=$2; shift 2 ;;
    --read-api) need_value "$@"; read_api=$2; shift 2 ;;
    --read-api-burst) need_value "$@"; number "$1" "$2"; read_api_burst=$2; shift 2 ;;
    --informer-bench) need_value "$@"; informer_bench_mode=$2; shift 2 ;;
    *) usage >&2; die "unknown argument $1" ;;
  esac
done
((pods >= 1)) || die "--pods must be at least 1"
((rounds >= 1)) || die "--rounds must be at least 1"
((burst >= 1 && burst <= 45000)) || die "--burst must be 1 to 45000 (2 bursts stay under kubesim's 100,000-line watch queue)"
((steady_rate == 0 || steady_seconds >= 1)) || die "--steady-seconds must be at least 1"
((idle >= 1 && timeout >= 10)) || die "--idle must be at least 1 and --timeout at least 10"
[[ $list_mode == raw || $list_mode == api ]] || die "--list must be raw or api"
[[ $churn_mode == drain || $churn_mode == paced ]] || die "--churn must be drain or paced"
[[ $read_api == on || $read_api == off ]] || die "--read-api must be on or off"
[[ $informer_bench_mode == on || $informer_bench_mode == off ]] || die "--informer-bench must be on or off"

# CMake puts both programs in $build/app (app/CMakeLists.txt defines them); the second
# candidate is the per-program folder layout.
kubesim=$(first_executable "$build/app/kubesim" "$build/app/kubesim/kubesim")
watch_bin=$(first_executable "$build/app/kinformer-watch" "$build/app/watch/kinformer-watch")
kinformerd=$(first_executable "$build/app/kinformerd" "$build/app/kinformerd/kinformerd")
informer_bench=$(first_executable "$build/tests/bench/informer_bench")
raw_counter=$(first_executable "$build/tests/bench/raw_watch_counter")
[[ -f $kubesim && -x $kubesim ]] || die "$kubesim not found: build it first (cmake --build $build --target kubesim)"
[[ -f $watch_bin && -x $watch_bin ]] || die "$watch_bin not found: build it first (cmake --build $build --target kinformer-watch)"
[[ $read_api == off || (-f $kinformerd && -x $kinformerd) ]] ||
  die "$kinformerd not found: build it first (cmake --build $build --target kinformerd), or pass --read-api off"
((events == 0)) || [[ -f $raw_counter && -x $raw_counter ]] ||
  die "$raw_counter not found: build it first (cmake --build $build --target raw_watch_counter)"
[[ $informer_bench_mode == off || (-f $informer_bench && -x $informer_bench) ]] ||
  die "$informer_bench not found: build it first (cmake --build $build --target informer_bench), or pass --informer-bench off"
for tool in node npm curl; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
have_gnuplot=1
command -v gnuplot >/dev/null || { have_gnuplot=0; log "gnuplot not found: no PNG"; }

# Everything temporary lives here, client-node's node_modules included; removed on exit.
work=$(mktemp -d "${TMPDIR:-/tmp}/side_by_side.XXXXXX")
children=() # pids of the processes this script started and has not reaped

forget_child() {
  local pid=$1 kept=() p
  for p in ${children[@]+"${children[@]}"}; do [[ $p == "$pid" ]] || kept+=("$p"); done
  children=(${kept[@]+"${kept[@]}"})
}

cleanup() {
  local rc=$? f p
  trap - EXIT INT TERM
  # kinformer-watch runs under the probe; its pid file exists only while a run is in flight.
  for f in "$work"/*.pid; do
    [[ -f $f ]] && read -r p <"$f" && [[ $p =~ ^[0-9]+$ ]] && children+=("$p")
  done
  stop_processes ${children[@]+"${children[@]}"}
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- client-node, installed into the throwaway folder ------------------------------------------
log "installing @kubernetes/client-node into $work/npm"
mkdir "$work/npm"
cp "$here/package.json" "$here/client_node_informer.mjs" "$here/bench_cli.mjs" "$work/npm/"
# The script is run from the install folder: ES modules resolve packages from the importing
# file's directory, and NODE_PATH does not apply to them.
npm install --no-audit --no-fund --prefix "$work/npm" >"$work/npm.log" 2>&1 ||
  die "npm install failed" "$work/npm.log"

# --- kubesim -----------------------------------------------------------------------------------
log "starting kubesim with $pods pods over $namespaces namespaces"
start_kubesim "$kubesim" "$work" "$timeout" --pods "$pods" --namespaces "$namespaces"
children+=("$kubesim_pid")
log "kubesim at $url"

sim() { # METHOD PATH -> body on stdout
  curl -sf --max-time 30 -X "$1" "$url$2"
}
churn_idle() { [[ $(sim GET /sim/churn) == *'"running":false'* ]]; }

# Pods in kubesim now (churn creates and deletes, so the count drifts between runs).
pod_count() {
  local body
  body=$(sim GET '/api/v1/pods?limit=1') || die "cannot list pods at $url"
  if [[ $body =~ \"remainingItemCount\":([0-9]+) ]]; then
    echo $((BASH_REMATCH[1] + 1))
  elif [[ $body == *'"items":[]'* ]]; then
    echo 0
  else
    echo 1
  fi
}

# The list's metadata.resourceVersion at BASE_URL (from a one-item page).
list_resource_version() {
  local body
  body=$(curl -sf --max-time 30 "$1/api/v1/pods?limit=1") || die "cannot list pods at $1"
  [[ $body =~ \"metadata\":\{[^}]*\"resourceVersion\":\"([0-9]+)\" ]] || die "no list resourceVersion from $1"
  echo "${BASH_REMATCH[1]}"
}

# "STATE EVENTS LAST_EVENT_WALL_US" from a client's progress file into $p_state, $p_events and
# $p_last_us.
read_progress() {
  p_state=
  p_events=0
  p_last_us=0
  if [[ -f $1 ]]; then read -r p_state p_events p_last_us <"$1" || true; fi
  [[ $p_events =~ ^[0-9]+$ ]] || p_events=0
  [[ $p_last_us =~ ^[0-9]+$ ]] || p_last_us=0
}

# Waits until the client (PID, PROGRESS) has counted at least TARGET events. Deltas can go missing
# for good (kinformer's handler queue coalesces deltas of one object past its bound; a restarted
# client-node watch relists), so it also returns after --idle seconds without progress, and sets
# $stalled. Returns 1 when the client has finished counting (state done).
wait_for_events() { # PID PROGRESS TARGET TAG ERRFILE
  local pid=$1 progress=$2 target=$3 tag=$4 err=$5 t0 last_events=-1 last_change
  now_us
  t0=$now
  last_change=$now
  while :; do
    read_progress "$progress"
    [[ $p_state == "done" ]] && return 1 # finished counting (then it exits)
    alive "$pid" || die "$tag: the client exited during the churn" "$err"
    [[ $p_state == ready ]] || die "$tag: client in state '$p_state' during the churn" "$err"
    ((p_events >= target)) && return 0
    now_us
    if ((p_events != last_events)); then
      last_events=$p_events
      last_change=$now
    elif (((now - last_change) / 1000000 >= idle)); then
      stalled=1
      return 0
    fi
    (((now - t0) / 1000000 < timeout)) || die "$tag: the client stayed $((target - p_events)) events short for $timeout s" "$err"
    sleep 0.02
  done
}

wait_churn_done() { # TAG
  local t0
  now_us
  t0=$now
  until churn_idle; do
    now_us
    (((now - t0) / 1000000 < timeout)) || die "$1: kubesim's churn did not finish within $timeout s"
    sleep 0.05
  done
}

# Writes $events changes through kubesim's churn (POST /sim/churn?rate=max&count=C) in bursts of
# at most $burst, and times the client's delivery:
# - drain (default): kubesim holds the client's watch back (/sim/faults/stall-watches) while the
#   churn writes a burst, then lets it go (resume-watches); the burst's time runs from just before
#   the resume to the client's last event (its wall clock, from the progress file). The rate is
#   the client's alone, whatever the writer's speed (as informer_bench --drain-bursts).
# - paced: the churn writes at full speed while the client reads; the client times its events from
#   the first to the N-th. A new burst starts when the client has read all but one burst. When
#   the script never had to wait for the client, the writer set the pace (writer-bound).
# Either way at most 2 bursts are unread by the client: kubesim closes a watch that has 100,000
# lines queued (a slow watcher, as the real API server does), which would turn client-node's
# count into a relist. POST /sim/churn replaces a running churn, so a burst starts only when the
# previous one is written.
drive_churn() { # PID PROGRESS TAG ERRFILE
  local pid=$1 progress=$2 tag=$3 err=$4
  local sent=0 bursts=0 c t0 start_us wait_client_us=0 drain_us=0 drained=0 before resume_us counting
  stalled=0
  now_us
  start_us=$now
  while ((sent < events)); do
    c=$((events - sent < burst ? events - sent : burst))
    now_us
    t0=$now
    if [[ $churn_mode == drain ]]; then
      wait_for_events "$pid" "$progress" "$sent" "$tag" "$err" || break
      before=$p_events
      sim POST /sim/faults/stall-watches >/dev/null || die "$tag: POST /sim/faults/stall-watches failed"
      sim POST "/sim/churn?rate=max&count=$c" >/dev/null || die "$tag: POST /sim/churn failed"
      sent=$((sent + c))
      bursts=$((bursts + 1))
      wait_churn_done "$tag"
      now_us
      resume_us=$now
      sim POST /sim/faults/resume-watches >/dev/null || die "$tag: POST /sim/faults/resume-watches failed"
      # A client that has counted all it was asked for says so in its last progress line (done).
      counting=1
      wait_for_events "$pid" "$progress" "$sent" "$tag" "$err" || counting=0
      if ((p_events > before && p_last_us > resume_us)); then
        drain_us=$((drain_us + p_last_us - resume_us))
        drained=$((drained + p_events - before))
      fi
      ((counting)) || break
    else
      wait_for_events "$pid" "$progress" $((sent - burst)) "$tag" "$err" || break
      now_us
      wait_client_us=$((wait_client_us + now - t0))
      wait_churn_done "$tag"
      sim POST "/sim/churn?rate=max&count=$c" >/dev/null || die "$tag: POST /sim/churn failed"
      sent=$((sent + c))
      bursts=$((bursts + 1))
    fi
  done
  wait_churn_done "$tag"
  local churn_seconds
  churn_seconds=$(seconds_since "$start_us")
  # Every change is written: wait for the client to count them (or to go quiet), then end its
  # count with SIGUSR2.
  if wait_for_events "$pid" "$progress" "$sent" "$tag" "$err"; then
    kill -USR2 "$pid" 2>/dev/null || true
  fi
  local drain_json=null
  if [[ $churn_mode == drain ]] && ((drain_us > 0)); then
    drain_json=$(printf '{"events":%d,"seconds":%d.%06d}' "$drained" $((drain_us / 1000000)) $((drain_us % 1000000)))
  fi
  printf '{"mode":"%s","sent":%d,"bursts":%d,"burst":%d,"churn_seconds":%s,"wait_client_seconds":%d.%06d,"drain":%s,"stalled":%s,"churn_state":%s}\n' \
    "$churn_mode" "$sent" "$bursts" "$burst" "$churn_seconds" $((wait_client_us / 1000000)) $((wait_client_us % 1000000)) \
    "$drain_json" "$([[ $stalled == 1 ]] && echo true || echo false)" "$(sim GET /sim/churn | tr -d '\n')" \
    >"$work/$tag.churn.json"
}

# Starts CLIENT (kinformer, client-node, or raw: kubesim's ceiling) expecting EXPECT pods, to count
# EVENTS events after it has synced (raw: from the current resourceVersion on, with no list):
# progress in $work/TAG.progress, result in $work/TAG.json, stderr in $work/TAG.err; kinformer's
# probe writes kinformer-watch's pid to $work/TAG.pid. Sets $started_pid.
start_client() { # CLIENT TAG EXPECT EVENTS
  local client=$1 tag=$2 expect=$3 count=$4
  if [[ $client == kinformer ]]; then
    node "$here/kinformer_watch_probe.mjs" --bin "$watch_bin" --server "$url" --expect "$expect" \
      --events "$count" --idle "$timeout" --timeout "$timeout" --progress "$work/$tag.progress" \
      --pid-file "$work/$tag.pid" >"$work/$tag.json" 2>"$work/$tag.err" &
  elif [[ $client == raw ]]; then
    local rv
    rv=$(list_resource_version "$url")
    "$raw_counter" --url "$url/api/v1/pods?watch=1&resourceVersion=$rv" \
      --events "$count" --idle "$timeout" --timeout "$timeout" --progress "$work/$tag.progress" \
      >"$work/$tag.json" 2>"$work/$tag.err" &
  else
    # --expose-gc: the settled RSS is read after a full collection.
    node --expose-gc "$work/npm/client_node_informer.mjs" --server "$url" --expect "$expect" \
      --events "$count" --idle "$timeout" --timeout "$timeout" --list "$list_mode" \
      --progress "$work/$tag.progress" >"$work/$tag.json" 2>"$work/$tag.err" &
  fi
  started_pid=$!
  children+=("$started_pid")
}

# Until the client has synced and settled ("ready"), or finished when there are no events to
# count; $p_state tells which.
wait_ready() { # PID PROGRESS TAG ERRFILE
  local pid=$1 progress=$2 tag=$3 err=$4 t0
  now_us
  t0=$now
  while :; do
    read_progress "$progress"
    [[ $p_state == "ready" || $p_state == "done" ]] && break
    alive "$pid" || break # the exit status tells what happened
    now_us
    (((now - t0) / 1000000 < timeout + 30)) || die "$tag: not synced within $timeout s" "$err"
    sleep 0.05
  done
}

# Waits for the client to exit; sets $reaped_rc to its exit status.
reap_client() { # PID TAG ERRFILE
  local pid=$1 tag=$2 err=$3 t0
  now_us
  t0=$now
  while alive "$pid"; do
    now_us
    (((now - t0) / 1000000 < timeout + 30)) || die "$tag: still running $timeout s after the churn" "$err"
    sleep 0.1
  done
  reaped_rc=0
  wait "$pid" || reaped_rc=$?
  forget_child "$pid"
  rm -f "$work/$tag.pid" # the probe reaped kinformer-watch: its pid may be reused now
}

# A warm-up run (ROUND is warmup-N) is not reported, and syncs only but for the raw watch's.
run_client() { # CLIENT ROUND
  local client=$1 round=$2 tag="$1-$2"
  local progress="$work/$tag.progress" out="$work/$tag.json" err="$work/$tag.err" pid rc expect
  local events=$events
  [[ $round == warmup-* && $client != raw ]] && events=0
  churn_idle || die "kubesim's churn is still running before $tag"
  expect=$(pod_count)
  log "round $round: $client (expects $expect pods, then $events events)"
  start_client "$client" "$tag" "$expect" "$events"
  pid=$started_pid
  wait_ready "$pid" "$progress" "$tag" "$err"
  if ((events > 0)) && [[ $p_state == ready ]]; then
    drive_churn "$pid" "$progress" "$tag" "$err"
  fi
  reap_client "$pid" "$tag" "$err"
  rc=$reaped_rc
  # 4: finished, but fewer events than asked for (reported, and flagged in the table).
  [[ $rc == 0 || $rc == 4 ]] || die "$tag failed (exit $rc)" "$err"
  [[ -s $out ]] || die "$tag printed no result" "$err"
  ((rc == 0)) || log "$tag: fewer events than $events arrived; see the report"
  if [[ $round == warmup-* ]]; then
    sleep 1
    return
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$client" "$round" "$out" \
    "$([[ -f $work/$tag.churn.json ]] && echo "$work/$tag.churn.json" || echo -)" "$rc" >>"$work/runs.tsv"
  cp "$err" "$work/$tag.log" 2>/dev/null || true
  sleep 1 # let kubesim close the finished watch before the next run
}

: >"$work/runs.tsv"
for ((round = 1; round <= warmup; ++round)); do
  run_client kinformer "warmup-$round"
  run_client client-node "warmup-$round"
done
((warmup == 0 || events == 0)) || run_client raw warmup-1
# The raw watch right after kinformer: the same bursts of kubesim, the nearest in time.
for ((round = 1; round <= rounds; ++round)); do
  run_client kinformer "$round"
  ((events == 0)) || run_client raw "$round"
  run_client client-node "$round"
done

# --- CPU per event at a steady pace ------------------------------------------------------------
# A cluster's watch is mostly a trickle, not bursts: each event arrives alone, and what it costs
# is mostly waking the client's threads. Each client once more: synced, then kubesim's churn at
# --steady-rate writes/s for --steady-seconds; the client's CPU (kinformer-watch's, not its
# probe's; client-node's process) over that window and until it has counted what was written.
clock_ticks=$(getconf CLK_TCK)

# User+system CPU of PID so far, in clock ticks.
cpu_ticks() { # PID
  local stat fields
  read -r stat <"/proc/$1/stat" || die "cannot read /proc/$1/stat"
  read -r -a fields <<<"${stat##*) }" # from field 3 (state) on: utime is field 14, stime 15
  echo $((fields[11] + fields[12]))
}

# Writes kubesim's churn has made so far.
churn_writes() {
  local body total=0 key
  body=$(sim GET /sim/churn) || die "GET /sim/churn failed"
  for key in creates deletes labelUpdates statusUpdates specUpdates; do
    [[ $body =~ \"$key\":([0-9]+) ]] || die "no $key in kubesim's churn state: $body"
    total=$((total + BASH_REMATCH[1]))
  done
  echo "$total"
}

run_steady() { # CLIENT ROUND
  local client=$1 round=$2 tag="steady-$1-$2"
  local progress="$work/$tag.progress" err="$work/$tag.err" pid cpu_pid events0 writes0 ticks0
  local written ticks
  churn_idle || die "kubesim's churn is still running before $tag"
  log "steady pace, round $round: $client ($steady_rate writes/s for $steady_seconds s)"
  start_client "$client" "$tag" "$(pod_count)" 1000000000 # counts until SIGUSR2
  pid=$started_pid
  wait_ready "$pid" "$progress" "$tag" "$err"
  [[ $p_state == ready ]] || die "$tag: the client did not get ready" "$err"
  cpu_pid=$pid
  if [[ $client == kinformer ]]; then read -r cpu_pid <"$work/$tag.pid" || die "$tag: no pid file"; fi
  events0=$p_events
  writes0=$(churn_writes)
  ticks0=$(cpu_ticks "$cpu_pid")
  sim POST "/sim/churn?rate=$steady_rate" >/dev/null || die "$tag: POST /sim/churn failed"
  sleep "$steady_seconds"
  sim POST "/sim/churn?rate=0" >/dev/null || die "$tag: stopping the churn failed"
  wait_churn_done "$tag"
  written=$(($(churn_writes) - writes0))
  stalled=0
  wait_for_events "$pid" "$progress" $((events0 + written)) "$tag" "$err" ||
    die "$tag: the client stopped counting" "$err"
  read_progress "$progress"
  ticks=$(($(cpu_ticks "$cpu_pid") - ticks0))
  kill -USR2 "$pid" 2>/dev/null || true
  reap_client "$pid" "$tag" "$err"
  [[ $reaped_rc == 0 || $reaped_rc == 4 ]] || die "$tag failed (exit $reaped_rc)" "$err"
  printf '{"client":"%s","round":%d,"rate":%d,"seconds":%d,"written":%d,"events":%d,"cpu_seconds":%s,"stalled":%s}\n' \
    "$client" "$round" "$steady_rate" "$steady_seconds" "$written" $((p_events - events0)) \
    "$(awk -v t="$ticks" -v hz="$clock_ticks" 'BEGIN { printf "%.3f", t / hz }')" \
    "$([[ $stalled == 1 ]] && echo true || echo false)" >"$work/$tag.steady.json"
  printf '%s\n' "$work/$tag.steady.json" >>"$work/steady.tsv"
  sleep 1
}

steady_args=()
if ((steady_rate > 0)); then
  : >"$work/steady.tsv"
  for ((round = 1; round <= rounds; ++round)); do
    run_steady kinformer "$round"
    run_steady client-node "$round"
  done
  steady_args=(--steady "$work/steady.tsv")
fi

# --- memory per stored pod, as kinformer-watch runs ------------------------------------------------
# kinformer-watch as shipped (its allocator tuning included) syncs every pod once per form of
# storage; a pod's share is the settled RSS less that of the same program watching a kind with
# no objects, over the pods. The pods' JSON is their list's size over their count.
measure_watch_memory() {
  local form resource expect out
  : >"$work/watch_memory.tsv"
  for form in empty full no-managed-fields metadata-only metadata-only-no-managed-fields compressed \
    metadata-only-compressed; do
    resource=pods
    expect=$(pod_count)
    [[ $form == empty ]] && resource=widgets.example.com && expect=0
    out="$work/memory-$form.json"
    log "memory per stored pod: kinformer-watch, $form"
    node "$here/kinformer_watch_probe.mjs" --bin "$watch_bin" --server "$url" --resource "$resource" \
      --form "${form/empty/full}" --expect "$expect" --events 0 --timeout "$timeout" \
      >"$out" 2>"$work/memory-$form.err" || die "kinformer-watch ($form) failed" "$work/memory-$form.err"
    printf '%s\t%s\n' "$form" "$out" >>"$work/watch_memory.tsv"
    sleep 1
  done
  local bytes
  bytes=$(curl -sf --max-time "$timeout" -o /dev/null -w '%{size_download}' "$url/api/v1/pods") ||
    die "cannot list pods"
  printf 'list_bytes\t%s\n' "$bytes" >>"$work/watch_memory.tsv"
}
measure_watch_memory

# --- the read API: kinformerd against kubesim --------------------------------------------------
# Starts kinformerd caching every pod of kubesim and waits until /readyz says it has synced.
# Sets $api_url.
start_kinformerd() {
  # curl sends no token: anonymous reads (kubesim reviews no tokens).
  printf 'listen:\n  api_anonymous: true\n' >"$work/kinformerd.yaml"
  "$kinformerd" --config "$work/kinformerd.yaml" --server "$url" --watch pods \
    --listen-api 127.0.0.1:0 --listen-metrics 127.0.0.1:0 \
    >"$work/kinformerd.out" 2>"$work/kinformerd.err" &
  kinformerd_pid=$!
  children+=("$kinformerd_pid")
  wait_kinformerd_ready "$work/kinformerd.err" "$timeout"
  log "kinformerd's read API at $api_url"
}

# One GET of every pod: "SECONDS BYTES" (curl's total time and body size).
time_list() { # BASE_URL
  curl -sf --max-time "$timeout" -o /dev/null -w '%{time_total} %{size_download}\n' "$1/api/v1/pods" ||
    die "listing every pod from $1 failed"
}

# Lists every pod from kinformerd and from kubesim --rounds times each (alternating), then opens
# one watch on each and drains --events changes through both in bursts of --read-api-burst:
# kubesim holds every watch (kinformerd's own included) while a burst is written, then lets go;
# each server's time runs from the release to its watcher's last event. The bursts are small
# because kinformerd ends a watch whose unwritten bytes pass its stream bound (8 MiB), with a 410
# that makes the client relist; kubesim's bound is 100,000 lines. Writes $work/read_api.json.
measure_read_api() {
  start_kinformerd
  # One untimed list from kinformerd first. Its stored pages have not yet been read by the kernel,
  # kubesim's have (kinformerd's own sync listed them), and some VMs charge for each page's first
  # read by the kernel: on a 2-core AMD EPYC VM, about 8-9 µs a page (a C program's first write()
  # of 400 MB it had memset took 0.93-1.01 s, the next ones 0.08-0.24 s). Reported apart.
  log "read API: one untimed list from kinformerd, the kernel's first read of its pages"
  local first_list
  first_list=$(time_list "$api_url")
  local lists=() round
  for ((round = 1; round <= rounds; ++round)); do
    log "read API round $round: listing every pod from kinformerd, then from kubesim"
    lists+=("kinformerd $(time_list "$api_url")" "kubesim $(time_list "$url")")
  done

  local names=(kinformerd kubesim) bases=("$api_url" "$url") pids=() i
  for i in 0 1; do
    local rv
    rv=$(list_resource_version "${bases[i]}")
    node "$here/watch_counter.mjs" --url "${bases[i]}/api/v1/pods?watch=1&resourceVersion=$rv" \
      --idle "$timeout" --timeout "$timeout" --progress "$work/watch-${names[i]}.progress" \
      >"$work/watch-${names[i]}.json" 2>"$work/watch-${names[i]}.err" &
    pids+=($!)
    children+=($!)
  done
  for i in 0 1; do
    now_us
    local t0=$now
    until read_progress "$work/watch-${names[i]}.progress"; [[ $p_state == ready ]]; do
      alive "${pids[i]}" || die "the watch on ${names[i]} ended" "$work/watch-${names[i]}.err"
      now_us
      (((now - t0) / 1000000 < timeout)) || die "the watch on ${names[i]} did not open" "$work/watch-${names[i]}.err"
      sleep 0.05
    done
  done

  local sent=0 c resume_us drain_us=(0 0) drained=(0 0) before=(0 0)
  stalled=0
  while ((events > 0 && sent < events)); do
    c=$((events - sent < read_api_burst ? events - sent : read_api_burst))
    for i in 0 1; do read_progress "$work/watch-${names[i]}.progress"; before[i]=$p_events; done
    sim POST /sim/faults/stall-watches >/dev/null || die "read API: POST /sim/faults/stall-watches failed"
    sim POST "/sim/churn?rate=max&count=$c" >/dev/null || die "read API: POST /sim/churn failed"
    sent=$((sent + c))
    wait_churn_done read-api
    now_us
    resume_us=$now
    sim POST /sim/faults/resume-watches >/dev/null || die "read API: POST /sim/faults/resume-watches failed"
    for i in 0 1; do
      wait_for_events "${pids[i]}" "$work/watch-${names[i]}.progress" "$sent" "read-api-${names[i]}" \
        "$work/watch-${names[i]}.err" || true
      if ((p_events > before[i] && p_last_us > resume_us)); then
        drain_us[i]=$((drain_us[i] + p_last_us - resume_us))
        drained[i]=$((drained[i] + p_events - before[i]))
      fi
    done
  done
  for i in 0 1; do
    kill -USR2 "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" || true
    forget_child "${pids[i]}"
  done
  kill -TERM "$kinformerd_pid" 2>/dev/null || true
  wait "$kinformerd_pid" || true
  forget_child "$kinformerd_pid"

  {
    printf '{"events":%d,"burst":%d,"stalled":%s,' "$sent" "$read_api_burst" \
      "$([[ $stalled == 1 ]] && echo true || echo false)"
    local first=1 entry server seconds bytes
    read -r seconds bytes <<<"$first_list"
    printf '"first_list":{"server":"kinformerd","seconds":%s,"bytes":%s},"lists":[' "$seconds" "$bytes"
    for entry in "${lists[@]}"; do
      read -r server seconds bytes <<<"$entry"
      ((first)) || printf ','
      first=0
      printf '{"server":"%s","seconds":%s,"bytes":%s}' "$server" "$seconds" "$bytes"
    done
    printf '],"watch":{'
    for i in 0 1; do
      ((i == 0)) || printf ','
      printf '"%s":{"events":%d,"seconds":%d.%06d}' "${names[i]}" "${drained[i]}" \
        $((drain_us[i] / 1000000)) $((drain_us[i] % 1000000))
    done
    printf '}}\n'
  } >"$work/read_api.json"
}

read_api_args=()
if [[ $read_api == on ]]; then
  measure_read_api
  read_api_args=(--read-api "$work/read_api.json")
fi

# --- kinformer alone: informer_bench -----------------------------------------------------------
# The in-process benchmark against the same number of pods: sync and event rates next to
# Boost.JSON's parse of the same bytes, delivery latency, a forced relist, 16-handler fan-out, and
# memory per stored pod as stored whole, without managedFields, metadata-only, and metadata-only
# without managedFields.
run_informer_bench() { # NAME ARGS...
  local name=$1
  shift
  log "informer_bench ($name): $pods pods"
  "$informer_bench" --pods "$pods" --namespaces "$namespaces" "$@" --timeout "$timeout" \
    >"$work/ib-$name.out" 2>"$work/ib-$name.err" || die "informer_bench ($name) failed" "$work/ib-$name.err"
  tail -n 1 "$work/ib-$name.out" >"$work/ib-$name.json"
  printf '%s\t%s\n' "$name" "$work/ib-$name.json" >>"$work/informer_bench.tsv"
}

informer_bench_args=()
if [[ $informer_bench_mode == on ]]; then
  : >"$work/informer_bench.tsv"
  run_informer_bench full --events "$((events > 0 ? events : 100000))" --drain-bursts
  run_informer_bench no-managed-fields --drop-managed-fields --events 1000 --latency-events 0 \
    --fanout-handlers 0 --no-relist
  # Metadata-only as received: compressed is their default, measured by kinformer-watch above.
  run_informer_bench metadata-only --metadata-only --no-compress-objects --events 1000 \
    --latency-events 0 --fanout-handlers 0 --no-relist
  run_informer_bench metadata-only-no-managed-fields --metadata-only --drop-managed-fields \
    --no-compress-objects --events 1000 --latency-events 0 --fanout-handlers 0 --no-relist
  informer_bench_args=(--informer-bench "$work/informer_bench.tsv")
fi

mkdir -p "$results"
node "$here/report.mjs" --runs "$work/runs.tsv" --watch-memory "$work/watch_memory.tsv" ${read_api_args[@]+"${read_api_args[@]}"} \
  ${informer_bench_args[@]+"${informer_bench_args[@]}"} ${steady_args[@]+"${steady_args[@]}"} --results "$results" --work "$work" --repo "$repo" \
  --pods "$pods" --namespaces "$namespaces" --events "$events" --burst "$burst" --rounds "$rounds" --warmup "$warmup" \
  --list "$list_mode" --churn "$churn_mode" --command "$command_line"
if ((have_gnuplot)); then
  gnuplot "$work/side_by_side.gp" 2>"$work/gnuplot.err" || die "gnuplot failed" "$work/gnuplot.err"
fi
log "wrote $results/side_by_side.md, side_by_side.json$( ((have_gnuplot)) && echo ', side_by_side.png')"
cat "$results/side_by_side.md"
