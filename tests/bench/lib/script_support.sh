# Shell helpers the bench scripts share (side_by_side/run.sh, soak/run.sh). Source it after
# setting `script_name`; it defines no traps and starts nothing.

log() { printf '[%s] %s\n' "$script_name" "$*" >&2; }
# die MESSAGE [FILE]: logs the error and the last 40 lines of FILE, then exits 1.
die() {
  log "error: $1"
  [[ -n ${2:-} && -f ${2:-} ]] && sed 's/^/  | /' "$2" | tail -n 40 >&2
  exit 1
}
absolute() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac }
need_value() { (($# >= 2)) || die "$1 needs a value"; }
number() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 needs a non-negative integer, not '$2'"; }

# The first of the candidate paths that is an executable file (else the first candidate).
first_executable() {
  local c
  for c; do [[ -f $c && -x $c ]] && { printf '%s' "$c"; return; }; done
  printf '%s' "$1"
}

# True while PID runs (a zombie, exited but not yet reaped, counts as gone).
alive() {
  local stat
  [[ -r /proc/$1/stat ]] || return 1
  read -r stat <"/proc/$1/stat" 2>/dev/null || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# TERMs every pid given, waits up to 5 s for them to go, then KILLs what is left.
stop_processes() {
  local p i any
  for p; do kill -TERM "$p" 2>/dev/null || true; done
  for ((i = 0; i < 50; ++i)); do
    any=0
    for p; do alive "$p" && any=1; done
    ((any)) || break
    sleep 0.1
  done
  for p; do kill -KILL "$p" 2>/dev/null || true; done
}

# Microseconds since the epoch into $now (no subshell; EPOCHREALTIME's separator follows the locale).
now_us() {
  local t=$EPOCHREALTIME
  now=$((10#${t//[.,]/}))
}
seconds_since() { # START_US -> seconds as a decimal string
  now_us
  local us=$((now - $1))
  printf '%d.%06d' $((us / 1000000)) $((us % 1000000))
}

# Starts kubesim with ARGS on a free loopback port, its output in WORK/kubesim.{out,err}; sets
# $kubesim_pid and $url ("http://127.0.0.1:PORT"). Gives up after TIMEOUT seconds.
start_kubesim() { # KUBESIM WORK TIMEOUT ARGS...
  local bin=$1 dir=$2 limit=$3 line start
  shift 3
  "$bin" --listen 127.0.0.1:0 "$@" >"$dir/kubesim.out" 2>"$dir/kubesim.err" &
  kubesim_pid=$!
  url=
  now_us
  start=$now
  while :; do
    line=
    if [[ -s $dir/kubesim.out ]]; then read -r line <"$dir/kubesim.out" || true; fi
    if [[ $line == "listening on "* ]]; then
      url=${line#listening on }
      break
    fi
    alive "$kubesim_pid" || die "kubesim exited before listening" "$dir/kubesim.err"
    now_us
    (((now - start) / 1000000 < limit)) || die "kubesim did not listen within $limit s" "$dir/kubesim.err"
    sleep 0.2
  done
  [[ $url =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || die "kubesim listens on '$url', not on a loopback http URL"
}

# Waits until kinformerd (pid $kinformerd_pid, stderr ERR) has logged both listen addresses and
# /readyz answers 200; sets $api_url and $metrics_url. Gives up after TIMEOUT seconds.
wait_kinformerd_ready() { # ERR TIMEOUT
  local err=$1 limit=$2 line t0
  api_url=
  metrics_url=
  now_us
  t0=$now
  until [[ -n $api_url && -n $metrics_url ]] && curl -sf --max-time 5 "$metrics_url/readyz" >/dev/null; do
    if [[ -z $api_url ]] && line=$(grep -m1 'event=api_listening' "$err"); then
      [[ $line =~ address=(127\.0\.0\.1:[0-9]+) ]] && api_url="http://${BASH_REMATCH[1]}"
    fi
    if [[ -z $metrics_url ]] && line=$(grep -m1 'event=metrics_listening' "$err"); then
      [[ $line =~ address=(127\.0\.0\.1:[0-9]+) ]] && metrics_url="http://${BASH_REMATCH[1]}"
    fi
    alive "$kinformerd_pid" || die "kinformerd exited before it was ready" "$err"
    now_us
    (((now - t0) / 1000000 < limit)) || die "kinformerd not ready within $limit s" "$err"
    sleep 0.1
  done
}
