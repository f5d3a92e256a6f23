// The kinformer side of the side-by-side benchmark: runs kinformer-watch and measures it from the
// outside, printing ONE JSON line with the same figures client_node_informer.mjs prints.
//
//   node kinformer_watch_probe.mjs --bin PATH/kinformer-watch --server URL [--expect N]
//        [--events N] [--timeout S] [--idle S] [--progress FILE] [--pid-file FILE]
//
// kinformer-watch has no quiet or summary mode: it prints one JSON line per delta (flushed after
// each batch of deltas) and {"type":"SYNCED"} once its handler has synced. This probe is the
// fast reader of that stream: it only looks for newlines and at the 10th byte of each line (the
// type's first letter: {"type":"A|U|D|S...), never parses JSON, so 100,000 lines cost it a few
// milliseconds.
// Writing the lines is kinformer-watch's own cost and stays in its figures.
//
// Figures (see README.md): sync_seconds from spawning kinformer-watch to its SYNCED line (the
// process start, discovery, the paged list and every initial delta printed); objects = ADDED
// lines before SYNCED; peak RSS is VmHWM from /proc/PID/status, read at SYNCED and again just
// before SIGINT; settled RSS is VmRSS 300 ms after SYNCED; CPU is utime+stime from
// /proc/PID/stat. With --events N, delta lines after SYNCED are counted until N arrived, timed
// from the first to the N-th (at the granularity of the pipe reads).
//
// Progress for run.sh: "STATE EVENTS LAST_EVENT_WALL_US" in --progress FILE (listing, ready,
// done, failed); SIGUSR2 in state ready ends the count. --pid-file FILE gets kinformer-watch's
// pid, so the driver can kill it should this probe die.

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import {
  count,
  countComplete,
  countEvent,
  eventFigures,
  fail,
  failAfter,
  finishOnSignal,
  parseOptions,
  pollCount,
  printResult,
  progress,
  seconds,
  setScript,
  writeProgress,
} from './bench_cli.mjs';

const usage = `usage: node kinformer_watch_probe.mjs --bin PATH --server URL [options]
  --bin PATH       the kinformer-watch binary
  --server URL     API server, plain http on loopback
  --resource R     resource to watch (default pods)
  --form F         what the informer stores: full, no-managed-fields, metadata-only,
                   metadata-only-no-managed-fields, compressed or metadata-only-compressed
                   (default full)
  --expect N       ADDED lines expected before SYNCED (0 = do not check)
  --events N       after SYNCED, count delta lines until N arrived (0 = skip)
  --timeout S      give up after S seconds in all (default 600)
  --idle S         stop counting events when none arrived for S seconds (default 10)
  --progress FILE  write "STATE EVENTS LAST_EVENT_WALL_US" to FILE for the driver
  --pid-file FILE  write kinformer-watch's pid to FILE
`;

function parseArgs(argv) {
  const defaults = { bin: '', server: '', resource: 'pods', form: 'full', expect: 0, events: 0, timeout: 600, idle: 10, progress: '', 'pid-file': '' };
  const opts = parseOptions(argv, defaults, usage);
  if (!opts.bin || !opts.server) fail(2, `--bin and --server are required\n${usage}`);
  if (!(opts.form in formFlags)) fail(2, `--form: not one of ${Object.keys(formFlags).join(', ')}`);
  return opts;
}

// kinformer-watch's flags for each --form.
const formFlags = {
  full: [],
  'no-managed-fields': ['--drop-managed-fields'],
  'metadata-only': ['--metadata-only', '--no-compress-objects'], // text as received
  'metadata-only-no-managed-fields': ['--metadata-only', '--drop-managed-fields', '--no-compress-objects'],
  compressed: ['--compress-objects'],
  'metadata-only-compressed': ['--metadata-only'], // kinformer-watch's default for metadata-only
};

let child = null;
setScript('kinformer_watch_probe', () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});
const opts = parseArgs(process.argv.slice(2));
progress.file = opts.progress;

// Figures of the child from /proc (Linux). VmHWM is the kernel's RSS high-water mark.
function procStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => {
    const m = text.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) * 1024 : null;
  };
  return { hwm: kib('VmHWM'), rss: kib('VmRSS') };
}
function procCpuSeconds(pid) {
  // Fields after the ")" that ends comm: state is field 3, utime 14, stime 15 (clock ticks;
  // USER_HZ is 100 on every Linux architecture node runs on).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// Peak RSS (VmHWM) and CPU of the child now; null where it is gone already (its exit handler
// reports that).
function childPeakAndCpu() {
  let status = { hwm: null };
  let cpu = null;
  try {
    status = procStatus(child.pid);
    cpu = procCpuSeconds(child.pid);
  } catch {
    // gone already
  }
  return { hwm: status.hwm, cpu };
}

// Counting state.
let added = 0; // ADDED lines before SYNCED
let synced = false;
let sync = null;
let finished = false;
let settledRss = null;
let cpuAtReady = null;
const stderrTail = [];

const TYPE_OFFSET = 9; // {"type":"X  -> X is byte 9 of a line
const BYTE_A = 0x41;
const BYTE_S = 0x53;
// Where the current line's type byte is, counted from the start of the next chunk; -1 when
// already seen. The first line starts at byte 0 of the stream.
let need = TYPE_OFFSET;

function onLineType(byte, now) {
  if (!synced) {
    if (byte === BYTE_S) return markSynced(now);
    if (byte === BYTE_A) added += 1;
    return;
  }
  if (byte === BYTE_S || finished) return; // a second SYNCED (a re-subscribe) is no event
  // A delta line after SYNCED: one event of the count.
  if (countEvent(now, opts.events)) finish();
}

// Scans a chunk: every line start is followed by its type byte at TYPE_OFFSET, which may fall
// into a later chunk (`need` carries the remaining distance).
function scan(chunk, now) {
  let pos = 0;
  if (need >= 0) {
    if (need < chunk.length) {
      onLineType(chunk[need], now);
      need = -1;
    } else {
      need -= chunk.length;
      pos = chunk.length;
    }
  }
  for (;;) {
    const nl = chunk.indexOf(0x0a, pos);
    if (nl < 0) break;
    const typeAt = nl + 1 + TYPE_OFFSET;
    if (typeAt < chunk.length) onLineType(chunk[typeAt], now);
    else need = typeAt - chunk.length;
    pos = nl + 1;
  }
}

function markSynced(now) {
  synced = true;
  const { hwm, cpu } = childPeakAndCpu();
  sync = { seconds: seconds(now - tSpawn), peakRss: hwm, cpu, objects: added };
  if (opts.expect > 0 && added !== opts.expect) fail(1, `${added} ADDED lines before SYNCED, expected ${opts.expect}`);
  setTimeout(() => {
    try {
      settledRss = procStatus(child.pid).rss;
      cpuAtReady = procCpuSeconds(child.pid); // the baseline of the CPU per watch event
    } catch {
      settledRss = null;
    }
    if (opts.events === 0) finish();
    else writeProgress('ready', count.events);
  }, 300);
}

const deadline = failAfter(opts.timeout, () =>
  !synced ? `SYNCED (${added} ADDED lines so far)` : `events (${count.events} of ${opts.events})`,
);

function finish() {
  if (finished) return;
  finished = true;
  clearTimeout(deadline);
  // Peak RSS and CPU read just before SIGINT, while the process still exists.
  const { hwm, cpu } = childPeakAndCpu();
  const complete = countComplete(opts.events);
  const result = {
    client: 'kinformer',
    binary: opts.bin,
    resource: opts.resource,
    form: opts.form,
    synced_signal: 'kinformer-watch {"type":"SYNCED"} line (handler synced: every initial delta delivered)',
    sync_seconds: sync.seconds,
    process_sync_seconds: sync.seconds, // spawned by this probe: the same clock
    objects: sync.objects,
    peak_rss_bytes: hwm,
    peak_rss_at_sync_bytes: sync.peakRss,
    settled_rss_bytes: settledRss,
    cpu_seconds_at_sync: sync.cpu,
    cpu_seconds_at_ready: cpuAtReady,
    cpu_seconds: cpu,
    ...eventFigures(opts.events),
  };
  writeProgress('done', count.events);
  child.kill('SIGINT');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10000);
  child.once('exit', () => {
    clearTimeout(killer);
    printResult(result, complete);
  });
}

writeProgress('listing', 0);
const tSpawn = performance.now();
child = spawn(opts.bin, ['--server', opts.server, '--all-namespaces', ...formFlags[opts.form], opts.resource], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
if (opts['pid-file'] && child.pid) writeFileSync(opts['pid-file'], `${child.pid}\n`);
child.on('error', (err) => fail(1, `cannot run ${opts.bin}: ${err.message}`));
child.stdout.on('data', (chunk) => scan(chunk, performance.now()));
child.stderr.on('data', (chunk) => {
  process.stderr.write(chunk); // kinformer-watch's own log lines, for the driver's log
  stderrTail.push(chunk.toString());
  if (stderrTail.length > 20) stderrTail.shift();
});
child.on('exit', (code, signal) => {
  if (!finished)
    fail(1, `kinformer-watch exited early (code ${code}, signal ${signal}); stderr:\n${stderrTail.join('')}`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => fail(130, `stopped by ${sig}`));
finishOnSignal(finish);

// 'ready' once settled (markSynced's timer).
if (opts.events > 0) pollCount(opts, () => !finished && progress.state === 'ready', finish);
