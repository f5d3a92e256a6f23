// The client-node side of the side-by-side benchmark: @kubernetes/client-node 1.4.0's informer
// (makeInformer -> ListWatch) for pods in all namespaces, against a plain-http API server on
// loopback (kubesim). Prints ONE JSON line on stdout at the end; see README.md for the figures.
//
//   node --expose-gc client_node_informer.mjs --server URL [--expect N] [--events N]
//        [--list raw|api] [--timeout S] [--idle S] [--progress FILE]
//
// --list raw (default): the informer's list function is fetch(URL/api/v1/pods) + JSON.parse,
//   returning the parsed PodList as is. client-node's ListWatch only reads list.items[].metadata
//   (namespace, name, resourceVersion) and list.metadata.resourceVersion, so a plain parsed
//   object is a valid KubernetesListObject. This is the fastest list function client-node
//   accepts: the generated CoreV1Api.listPodForAllNamespaces does the same fetch + JSON.parse and
//   then walks every object again through ObjectSerializer.deserialize (class instances, Date
//   objects), which costs more time and a second copy of the list while it runs. The fetch is
//   node-fetch, the one client-node itself uses (resolved from client-node's own dependencies,
//   already loaded by its Watch): in a fresh process Node's built-in fetch first loads undici
//   (~60 ms inside the timed sync) and read a 70 MB list slower (see README.md).
// --list api: the generated CoreV1Api.listPodForAllNamespaces(), as client-node's README does it.
// Either way the watch after the list is client-node's own Watch (node-fetch + readline +
// JSON.parse per line), created by makeInformer.
//
// "Synced": client-node 1.4.0 has no synced signal. ListWatch.doneHandler fires 'connect'
// *before* it calls the list function, then adds every list item to its cache synchronously
// (one 'add' per item), then opens the watch; start() resolves once the watch's response
// headers are in. We count as synced the moment the last 'add' of the initial list has run,
// i.e. the cache holds every listed object: that is what client-go's HasSynced means (initial
// list delivered), and what kinformer-watch's SYNCED means. The list function wrapper below
// records how many items the list returned, so no guess is involved; --expect N checks that
// number. start()'s resolution (list + watch connected) is reported too, as start_resolved_seconds.
//
// Progress (for run.sh, which paces the churn): with --progress FILE, the line
// "STATE EVENTS LAST_EVENT_WALL_US" is written to FILE (atomically, by rename) whenever it
// changes, at most every 50 ms. STATE is listing, ready (synced and settled: the driver may
// start writing), done or failed. SIGUSR2 in state ready ends the event count: the result is
// printed with the events counted so far.

import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
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

const usage = `usage: node --expose-gc client_node_informer.mjs --server URL [options]
  --server URL     API server, plain http on loopback (no authentication)
  --expect N       objects the initial list must hold (0 = do not check)
  --events N       after sync, count add/update/delete callbacks until N arrived (0 = skip)
  --list MODE      raw (fetch + JSON.parse, default) or api (CoreV1Api.listPodForAllNamespaces)
  --timeout S      give up after S seconds in all (default 600)
  --idle S         stop counting events when none arrived for S seconds (default 10;
                   run.sh passes its timeout and ends the count with SIGUSR2 instead)
  --progress FILE  write "STATE EVENTS LAST_EVENT_WALL_US" to FILE for the driver
`;

function parseArgs(argv) {
  const defaults = { server: '', expect: 0, events: 0, list: 'raw', timeout: 600, idle: 10, progress: '' };
  const opts = parseOptions(argv, defaults, usage);
  if (!opts.server) fail(2, `--server is required\n${usage}`);
  if (!/^http:\/\//.test(opts.server)) fail(2, '--server must be a plain http:// URL');
  opts.server = opts.server.replace(/\/+$/, '');
  if (opts.list !== 'raw' && opts.list !== 'api') fail(2, '--list must be raw or api');
  return opts;
}

setScript('client_node_informer');
const opts = parseArgs(process.argv.slice(2));
progress.file = opts.progress;

const rssNow = () => process.memoryUsage().rss;
const maxRss = () => process.resourceUsage().maxRSS * 1024; // kernel's high-water mark, KiB
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const clientNodeEntry = fileURLToPath(import.meta.resolve('@kubernetes/client-node'));
// node-fetch exactly as client-node resolves it; require() returns the instance its Watch loaded.
const nodeFetch = createRequire(clientNodeEntry)('node-fetch');

function clientNodeVersion() {
  try {
    const pkg = new URL('../package.json', pathToFileURL(clientNodeEntry));
    return JSON.parse(readFileSync(pkg, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

// RSS sampled every 50 ms. A synchronous JSON.parse of the whole list blocks the event loop,
// so samples miss that peak; the kernel's maxRSS does not, and is what peak_rss_bytes reports.
let sampledPeak = rssNow();
const sampler = setInterval(() => {
  sampledPeak = Math.max(sampledPeak, rssNow());
}, 50);

const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'sim', server: opts.server, skipTLSVerify: true }],
  users: [{ name: 'anonymous' }],
  contexts: [{ name: 'sim', cluster: 'sim', user: 'anonymous' }],
  currentContext: 'sim',
});

// The list function, wrapped to record what the list returned and how long it took.
const listStats = { calls: 0, items: -1, seconds: 0, fetchSeconds: null, parseSeconds: null };

async function rawList() {
  const t0 = performance.now();
  const response = await nodeFetch(`${opts.server}/api/v1/pods`);
  if (!response.ok) {
    const err = new Error(`list /api/v1/pods: HTTP ${response.status}`);
    err.statusCode = response.status;
    throw err;
  }
  let text;
  try {
    text = await response.text();
  } catch (err) {
    // V8 strings stop at ~512 MiB (0x1fffffe8 characters): a bigger list cannot be parsed at
    // once, by this function or by client-node's generated one.
    throw new Error(`reading the list body failed (${err.message}); lists over ~512 MiB do not fit a V8 string`);
  }
  const t1 = performance.now();
  const list = JSON.parse(text);
  text = undefined;
  const t2 = performance.now();
  listStats.fetchSeconds = seconds(t1 - t0);
  listStats.parseSeconds = seconds(t2 - t1);
  return list;
}

const core = opts.list === 'api' ? kc.makeApiClient(k8s.CoreV1Api) : null;
const listFn = async () => {
  const t0 = performance.now();
  const list = opts.list === 'api' ? await core.listPodForAllNamespaces() : await rawList();
  listStats.seconds = seconds(performance.now() - t0);
  listStats.calls += 1;
  listStats.items = Array.isArray(list.items) ? list.items.length : 0;
  return list;
};

const informer = k8s.makeInformer(kc, '/api/v1/pods', listFn);

let tStart = 0; // just before informer.start()
let adds = 0; // 'add' callbacks of the initial list
let synced = false;
let sync = null; // figures taken at the synced moment
let connects = 0;
let finished = false;
const errors = [];

function cacheSize() {
  // ListWatch.list() copies every object into a new array; summing the namespace maps does not.
  let n = 0;
  for (const byName of informer.objects.values()) n += byName.size;
  return n;
}

function markSynced() {
  if (synced) return;
  const now = performance.now();
  synced = true;
  sync = {
    seconds: seconds(now - tStart),
    processSeconds: seconds(now), // performance.now() counts from process start
    peakRss: maxRss(),
    cpu: cpuSeconds(),
    objects: cacheSize(),
  };
  if (opts.expect > 0 && sync.objects !== opts.expect)
    fail(1, `the initial list holds ${sync.objects} pods, expected ${opts.expect}`);
}

// An add/update/delete callback after sync: one event of the count.
function onEvent() {
  if (!synced || finished) return;
  if (countEvent(performance.now(), opts.events)) finish();
}

informer.on('add', () => {
  if (synced) return onEvent();
  adds += 1;
  // The initial list's items are added synchronously right after the list function returns,
  // so listStats.items is known here.
  if (listStats.items >= 0 && adds >= listStats.items) markSynced();
});
informer.on('update', onEvent);
informer.on('delete', onEvent);
// 'connect' fires before every list and every (re)watch: more than one means the watch was
// restarted, and events counted after that may include a relist's adds and deletes.
informer.on('connect', () => {
  connects += 1;
});
informer.on('error', (err) => {
  if (finished) return;
  // client-node's ListWatch does not restart after an error (except 410): the run is over.
  errors.push(String(err && err.message ? err.message : err));
  fail(1, `informer error: ${errors.at(-1)}`);
});

let phase = 'start';
const deadline = failAfter(opts.timeout, () =>
  phase === 'start' && !synced
    ? `the initial list (list calls ${listStats.calls}, items ${listStats.items}, adds ${adds})`
    : phase === 'start'
      ? 'the watch to connect after the list'
      : `events (${count.events} of ${opts.events})`,
);

let settledRss = 0;
let cpuAtReady = null;
let startResolvedSeconds = null;

function finish() {
  if (finished) return;
  finished = true;
  clearInterval(sampler);
  clearTimeout(deadline);
  sampledPeak = Math.max(sampledPeak, rssNow());
  const complete = countComplete(opts.events);
  const result = {
    client: 'client-node',
    client_node_version: clientNodeVersion(),
    node_version: process.version,
    list_mode: opts.list,
    synced_signal: 'last add of the initial list (cache holds every listed object)',
    sync_seconds: sync.seconds,
    process_sync_seconds: sync.processSeconds,
    start_resolved_seconds: startResolvedSeconds,
    list_seconds: listStats.seconds,
    list_fetch_seconds: listStats.fetchSeconds,
    list_parse_seconds: listStats.parseSeconds,
    objects: sync.objects,
    peak_rss_bytes: Math.max(maxRss(), sampledPeak),
    peak_rss_sampled_bytes: sampledPeak,
    peak_rss_at_sync_bytes: sync.peakRss,
    settled_rss_bytes: settledRss,
    gc: typeof global.gc === 'function',
    cpu_seconds_at_sync: sync.cpu,
    cpu_seconds_at_ready: cpuAtReady,
    cpu_seconds: cpuSeconds(),
    watch_connects: connects,
    ...eventFigures(opts.events),
  };
  writeProgress('done', count.events);
  // The informer's watch keeps its socket open: exit rather than stop it (stopping aborts the
  // watch, which client-node reports as an error).
  printResult(result, complete);
}

finishOnSignal(finish);

writeProgress('listing', 0);
tStart = performance.now();
try {
  await informer.start();
} catch (err) {
  fail(1, `informer start failed: ${err && err.message ? err.message : err}`);
}
startResolvedSeconds = seconds(performance.now() - tStart);
phase = 'events';
if (!synced && listStats.items === 0) markSynced(); // an empty list has no 'add' to wait for
if (!synced) fail(1, `informer started but the cache holds ${adds} of ${listStats.items} listed objects`);

// Settle: let the list's garbage become collectable, collect it (with --expose-gc), then read
// RSS. Without --expose-gc this is RSS after a short pause.
await new Promise((resolve) => setTimeout(resolve, 300));
if (typeof global.gc === 'function') {
  global.gc();
  global.gc();
}
settledRss = rssNow();
sampledPeak = Math.max(sampledPeak, settledRss);
cpuAtReady = cpuSeconds(); // the baseline of the CPU per watch event

if (opts.events === 0) {
  finish();
} else {
  writeProgress('ready', count.events);
  pollCount(opts, () => !finished, finish);
}
