// Turns run.sh's per-run results into side_by_side.md and side_by_side.json (in --results) and a
// gnuplot script + data (in --work) that draws side_by_side.png into --results.
//
//   node report.mjs --runs RUNS.tsv --results DIR --work DIR --repo DIR [--pods N ...]
//
// RUNS.tsv: one line per run: client, round, result JSON file, churn JSON file (or -), exit code.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const required of ['runs', 'results', 'work']) {
  if (!args[required]) {
    process.stderr.write(`report.mjs: --${required} is required\n`);
    process.exit(2);
  }
}

const clients = ['kinformer', 'client-node'];
const runs = readFileSync(args.runs, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [client, round, resultFile, churnFile, exitCode] = line.split('\t');
    const result = JSON.parse(readFileSync(resultFile, 'utf8').trim().split('\n').at(-1));
    const churn = churnFile && churnFile !== '-' ? JSON.parse(readFileSync(churnFile, 'utf8')) : null;
    return { client, round: Number(round), exit_code: Number(exitCode), ...result, churn };
  });
const rounds = [...new Set(runs.map((r) => r.round))].sort((a, b) => a - b);
const events = Number(args.events || 0);

const MiB = 1024 * 1024;
// Derived per run: CPU per watch event (the client's CPU from ready, i.e. synced and settled,
// to the end, over its events), and the writer's rate: churn time minus the time the driver
// waited for the client.
for (const r of runs) {
  r.cpu_us_per_event =
    r.events > 0 && r.cpu_seconds != null && r.cpu_seconds_at_ready != null
      ? ((r.cpu_seconds - r.cpu_seconds_at_ready) / r.events) * 1e6
      : null;
  // The table's event rate: in drain mode the driver's (events delivered after each resume over
  // the time from resume to the last of them, summed over bursts); in paced mode the client's
  // own (first to N-th event).
  r.watch_events_per_second = r.events_per_second;
  if (r.churn?.mode === 'drain')
    r.watch_events_per_second = r.churn.drain && r.churn.drain.seconds > 0 ? r.churn.drain.events / r.churn.drain.seconds : null;
  if (r.churn?.mode === 'paced') {
    const writerSeconds = r.churn.churn_seconds - r.churn.wait_client_seconds;
    r.churn.writer_events_per_second = writerSeconds > 0 ? r.churn.sent / writerSeconds : null;
    // The driver never waited for this client and it kept up with the writer: the rate measured
    // is the writer's, a lower bound of the client's.
    r.churn.writer_bound =
      r.churn.wait_client_seconds < 0.05 * r.churn.churn_seconds &&
      r.events_per_second != null &&
      r.churn.writer_events_per_second != null &&
      r.events_per_second >= 0.8 * r.churn.writer_events_per_second;
  }
}

// What the table shows: [key, label, unit scale, decimals, lower is better].
const metrics = [
  ['process_sync_seconds', 'initial sync, process start → synced (s)', 1, 3, true],
  ['cpu_seconds_at_sync', 'CPU to sync, user+sys (s)', 1, 2, true],
  ['peak_rss_at_sync_bytes', 'peak RSS at sync (MiB)', MiB, 0, true],
  ['settled_rss_bytes', 'RSS after sync, settled (MiB)', MiB, 0, true],
  ['peak_rss_bytes', 'peak RSS, whole run (MiB)', MiB, 0, true],
];
if (events > 0) {
  const how = args.churn === 'paced' ? 'written while read' : 'drained in bursts';
  metrics.push(['watch_events_per_second', `watch events/s (${events.toLocaleString('en-US')} changes, ${how})`, 1, 0, false]);
  metrics.push(['cpu_us_per_event', 'CPU per watch event (µs)', 1, 1, true]);
}

function median(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}
const find = (client, round) => runs.find((r) => r.client === client && r.round === round);
const fmt = (x, scale, decimals) =>
  x == null ? '—' : (x / scale).toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
// > 1 always means kinformer is better: slower, bigger, or lower-rate client-node divided out.
const ratio = (kf, cn, lowerIsBetter) => {
  if (kf == null || cn == null || kf === 0 || cn === 0) return null;
  return lowerIsBetter ? cn / kf : kf / cn;
};

const medians = {};
for (const client of clients) {
  medians[client] = {};
  for (const [key] of [...metrics, ['sync_seconds'], ['list_seconds'], ['list_fetch_seconds'], ['list_parse_seconds'], ['start_resolved_seconds']])
    medians[client][key] = median(runs.filter((r) => r.client === client).map((r) => r[key]));
}

// --- Markdown ----------------------------------------------------------------------------------
const host = {
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model ?? 'unknown',
  memory_gib: +(os.totalmem() / 1024 ** 3).toFixed(1),
  kernel: os.release(),
  // How an idle CPU waits: on a VM whose idle vCPUs halt without polling first, a wake-up of a
  // thread on the other vCPU waits for the host to run it (host_pace_probe.hpp), p99's floor.
  idle: readFirstLine('/sys/devices/system/cpu/cpuidle/current_driver'),
  halt_poll_ns: readFirstLine('/sys/module/haltpoll/parameters/guest_halt_poll_ns'),
};
function readFirstLine(file) {
  try {
    return readFileSync(file, 'utf8').split('\n')[0].trim() || null;
  } catch {
    return null;
  }
}
let commit = 'unknown';
try {
  commit = execFileSync('git', ['-C', args.repo || '.', 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {
  // not a git checkout
}
const cn = runs.find((r) => r.client === 'client-node') ?? {};
const lines = [];
lines.push('# Side by side: kinformer vs @kubernetes/client-node informer', '');
lines.push(
  `kinformer \`kinformer-watch\` (commit ${commit}) and @kubernetes/client-node ${cn.client_node_version ?? '?'} ` +
    `(Node ${cn.node_version ?? '?'}, list function \`${args.list ?? '?'}\`) against one kubesim with ` +
    `${Number(args.pods).toLocaleString('en-US')} pods over ${args.namespaces} namespaces; ` +
    `${rounds.length} round(s), kinformer first in each${runs.some((r) => r.client === 'raw') ? ", then kubesim's raw watch, then client-node" : ''}, after ${Number(args.warmup ?? 0)} untimed sync-only warm-up run(s) of each. Host: ${host.cpus} × ${host.cpu_model}, ${host.memory_gib} GiB, Linux ${host.kernel}` +
    `${host.idle ? `, cpuidle ${host.idle}${host.halt_poll_ns != null ? ` (guest_halt_poll_ns ${host.halt_poll_ns})` : ''}` : ''}.`,
  '',
);
lines.push('```', args.command ?? 'tests/bench/side_by_side/run.sh', '```', '');
lines.push('| workload | round | kinformer | client-node | ratio (>1: kinformer better) |');
lines.push('|---|---|---:|---:|---:|');
for (const [key, label, scale, decimals, lower] of metrics) {
  for (const round of rounds) {
    const kf = find('kinformer', round)?.[key];
    const c = find('client-node', round)?.[key];
    const q = ratio(kf, c, lower);
    lines.push(`| ${label} | ${round} | ${fmt(kf, scale, decimals)} | ${fmt(c, scale, decimals)} | ${q == null ? '—' : `${q.toFixed(2)}×`} |`);
  }
  const kf = medians.kinformer[key];
  const c = medians['client-node'][key];
  const q = ratio(kf, c, lower);
  lines.push(`| **${label}** | **median** | **${fmt(kf, scale, decimals)}** | **${fmt(c, scale, decimals)}** | **${q == null ? '—' : `${q.toFixed(2)}×`}** |`);
}
lines.push('');
const m = medians['client-node'];
const s3 = (x) => (x == null ? '—' : `${x.toFixed(3)} s`);
lines.push(
  `client-node, medians: from \`informer.start()\` to synced ${s3(m.sync_seconds)} (the table's figure adds Node's start and ` +
    `loading client-node); list function ${s3(m.list_seconds)}` +
    (m.list_fetch_seconds != null ? ` (fetch ${s3(m.list_fetch_seconds)}, JSON.parse ${s3(m.list_parse_seconds)})` : '') +
    `; \`start()\` resolved (list applied and watch connected) ${s3(m.start_resolved_seconds)}.`,
  '',
);
const notes = [];
for (const r of runs) {
  const tag = `${r.client}, round ${r.round}`;
  if (events > 0 && !r.events_complete) notes.push(`${tag}: ${r.events ?? 0} of ${events} events arrived before the stream went quiet.`);
  if (r.watch_connects > 1) notes.push(`${tag}: client-node's watch (re)connected ${r.watch_connects - 1} times after the list: its events may include a relist's.`);
  if (r.churn?.stalled) notes.push(`${tag}: some events never arrived; the driver went on after --idle quiet seconds.`);
  if (r.churn?.writer_bound)
    notes.push(
      `${tag}: writer-bound: the client kept up with kubesim's churn (${Math.round(r.churn.writer_events_per_second).toLocaleString('en-US')} writes/s), so its event rate is a lower bound.`,
    );
}
if (notes.length) lines.push('Notes:', '', ...notes.map((n) => `- ${n}`), '');
// kubesim's ceiling (run.sh's raw client): one watch counted without parsing, right after
// kinformer in each round and on the same bursts, so kinformer's rate can be read against what
// kubesim could send at that moment.
const rawRuns = runs.filter((r) => r.client === 'raw');
const ceiling =
  rawRuns.length > 0 ? { watch_events_per_second: median(rawRuns.map((r) => r.watch_events_per_second)) } : null;
if (events > 0 && ceiling) {
  const share = (kf, raw) => (kf != null && raw ? `${((100 * kf) / raw).toFixed(0)} %` : '—');
  lines.push(
    "### kubesim's ceiling: one raw watch on the same bursts",
    '',
    '`raw_watch_counter` (C++; it counts the lines of the chunked body and parses nothing) watches kubesim right after ' +
      'kinformer in each round, and the same churn is drained through it the same way: what kubesim could send one watcher ' +
      'at that moment. Before round 1 one untimed raw watch of as many changes let kubesim recycle its memory.',
    '',
    "| workload | round | kinformer | raw watch (kubesim's ceiling) | kinformer's share of the ceiling |",
    '|---|---|---:|---:|---:|',
  );
  for (const round of rounds) {
    const kf = find('kinformer', round)?.watch_events_per_second;
    const raw = find('raw', round)?.watch_events_per_second;
    lines.push(`| watch events/s | ${round} | ${fmt(kf, 1, 0)} | ${fmt(raw, 1, 0)} | ${share(kf, raw)} |`);
  }
  const kf = medians.kinformer.watch_events_per_second;
  lines.push(
    `| **watch events/s** | **median** | **${fmt(kf, 1, 0)}** | **${fmt(ceiling.watch_events_per_second, 1, 0)}** | **${share(kf, ceiling.watch_events_per_second)}** |`,
    '',
  );
}
// CPU per event at a steady pace (run.sh's run_steady): each client synced, then kubesim's churn
// at a fixed rate; the client's CPU over the window and until it has counted what was written.
let steady = null;
if (args.steady) {
  const steadyRuns = readFileSync(args.steady, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((file) => JSON.parse(readFileSync(file, 'utf8')));
  for (const r of steadyRuns) r.cpu_us_per_event = r.events > 0 ? (r.cpu_seconds / r.events) * 1e6 : null;
  const byClient = (client) => steadyRuns.filter((r) => r.client === client);
  steady = {
    runs: steadyRuns,
    median: Object.fromEntries(clients.map((client) => [client, { cpu_us_per_event: median(byClient(client).map((r) => r.cpu_us_per_event)) }])),
  };
  const first = steadyRuns[0];
  lines.push(
    '### CPU per watch event at a steady pace',
    '',
    `Each client once more, synced, then kubesim's churn at ${first ? first.rate.toLocaleString('en-US') : '?'} writes/s for ${first?.seconds ?? '?'} s ` +
      "(creates, updates and deletes, one event at a time, as a cluster's watch mostly is); the client's CPU, user+sys " +
      "(kinformer-watch's own, not its probe's; client-node's process), over that window and until it has counted what was written, over the events it counted.",
    '',
    '| workload | round | kinformer | client-node | ratio (>1: kinformer better) |',
    '|---|---|---:|---:|---:|',
  );
  const label = 'CPU per watch event, steady (µs)';
  const steadyRounds = [...new Set(steadyRuns.map((r) => r.round))].sort((a, b) => a - b);
  for (const round of steadyRounds) {
    const kf = byClient('kinformer').find((r) => r.round === round);
    const c = byClient('client-node').find((r) => r.round === round);
    const q = ratio(kf?.cpu_us_per_event, c?.cpu_us_per_event, true);
    lines.push(
      `| ${label}; events ${kf?.events ?? '—'} / ${c?.events ?? '—'} | ${round} | ${fmt(kf?.cpu_us_per_event, 1, 1)} | ${fmt(c?.cpu_us_per_event, 1, 1)} | ${q == null ? '—' : `${q.toFixed(2)}×`} |`,
    );
  }
  const q = ratio(steady.median.kinformer.cpu_us_per_event, steady.median['client-node'].cpu_us_per_event, true);
  lines.push(
    `| **${label}** | **median** | **${fmt(steady.median.kinformer.cpu_us_per_event, 1, 1)}** | **${fmt(steady.median['client-node'].cpu_us_per_event, 1, 1)}** | **${q == null ? '—' : `${q.toFixed(2)}×`}** |`,
    '',
  );
  const short = steadyRuns.filter((r) => r.stalled || r.events < r.written);
  if (short.length)
    lines.push(...short.map((r) => `Note: ${r.client}, round ${r.round}: counted ${r.events} events for ${r.written} writes.`), '');
}
// The read API: kinformerd's list and watch against kubesim's own, same run.
let readApi = null;
if (args['read-api']) {
  readApi = JSON.parse(readFileSync(args['read-api'], 'utf8'));
  const listed = (server) => readApi.lists.filter((l) => l.server === server);
  const rate = (w) => (w && w.seconds > 0 ? w.events / w.seconds : null);
  readApi.median = {
    kinformerd: { list_seconds: median(listed('kinformerd').map((l) => l.seconds)), watch_events_per_second: rate(readApi.watch.kinformerd) },
    kubesim: { list_seconds: median(listed('kubesim').map((l) => l.seconds)), watch_events_per_second: rate(readApi.watch.kubesim) },
  };
  const mb = (bytes) => (bytes / 1e6).toFixed(0);
  lines.push(
    '### The read API: kinformerd against the simulator it caches',
    '',
    `\`kinformerd --watch pods\` caching the same kubesim; \`GET /api/v1/pods\` (every pod, one response) from each, ` +
      `alternating, after one untimed list from kinformerd (kubesim's pages were first read by the kernel when kinformerd synced; ` +
      `some VMs charge for each page's first such read); then one raw watch on each, counted without parsing, while ${readApi.events.toLocaleString('en-US')} changes ` +
      `are drained in bursts of ${readApi.burst.toLocaleString('en-US')} (kubesim holds every watch, kinformerd's own included, ` +
      'while a burst is written; each server is timed from the release to its watcher\'s last event).',
    '',
    '| workload | round | kinformerd | kubesim | ratio (>1: kinformerd faster) |',
    '|---|---|---:|---:|---:|',
  );
  const kd = listed('kinformerd');
  const ks = listed('kubesim');
  // Untimed in the ratio: the kernel's first read of kinformerd's stored pages (run.sh says why).
  if (readApi.first_list)
    lines.push(
      `| list every pod (s; ${mb(readApi.first_list.bytes)} MB), kinformerd's first: untimed, the kernel's first read of its pages | 0 | ${fmt(readApi.first_list.seconds, 1, 3)} | — | — |`,
    );
  for (let i = 0; i < Math.max(kd.length, ks.length); ++i) {
    const q = ratio(kd[i]?.seconds, ks[i]?.seconds, true);
    lines.push(
      `| list every pod (s; ${mb(kd[i]?.bytes ?? 0)} / ${mb(ks[i]?.bytes ?? 0)} MB) | ${i + 1} | ${fmt(kd[i]?.seconds, 1, 3)} | ${fmt(ks[i]?.seconds, 1, 3)} | ${q == null ? '—' : `${q.toFixed(2)}×`} |`,
    );
  }
  const ql = ratio(readApi.median.kinformerd.list_seconds, readApi.median.kubesim.list_seconds, true);
  lines.push(
    `| **list every pod (s)** | **median** | **${fmt(readApi.median.kinformerd.list_seconds, 1, 3)}** | **${fmt(readApi.median.kubesim.list_seconds, 1, 3)}** | **${ql == null ? '—' : `${ql.toFixed(2)}×`}** |`,
  );
  const qw = ratio(readApi.median.kinformerd.watch_events_per_second, readApi.median.kubesim.watch_events_per_second, false);
  lines.push(
    `| watch events/s (${readApi.watch.kinformerd.events.toLocaleString('en-US')} / ${readApi.watch.kubesim.events.toLocaleString('en-US')} events) | 1 | ${fmt(readApi.median.kinformerd.watch_events_per_second, 1, 0)} | ${fmt(readApi.median.kubesim.watch_events_per_second, 1, 0)} | ${qw == null ? '—' : `${qw.toFixed(2)}×`} |`,
    '',
  );
  if (readApi.stalled) lines.push('Note: a read-API watcher missed events; the driver went on after --idle quiet seconds.', '');
}

// Memory per stored pod as kinformer-watch runs (run.sh's measure_watch_memory): settled RSS less
// that of the same program watching a kind with no objects, over the pods synced.
const memoryForms = ['full', 'no-managed-fields', 'metadata-only', 'metadata-only-no-managed-fields', 'compressed', 'metadata-only-compressed'];
let watchMemory = null;
if (args['watch-memory']) {
  const runsByForm = {};
  let listBytes = null;
  for (const line of readFileSync(args['watch-memory'], 'utf8').split('\n').filter(Boolean)) {
    const [name, value] = line.split('\t');
    if (name === 'list_bytes') listBytes = Number(value);
    else runsByForm[name] = JSON.parse(readFileSync(value, 'utf8').trim().split('\n').at(-1));
  }
  const empty = runsByForm.empty?.settled_rss_bytes;
  const pods = runsByForm.full?.objects;
  if (empty != null && pods > 0 && listBytes > 0) {
    watchMemory = { empty_settled_rss_bytes: empty, pods, pod_json_bytes: listBytes / pods, forms: {} };
    for (const form of memoryForms) {
      const r = runsByForm[form];
      if (r?.settled_rss_bytes == null) continue;
      const perPod = (r.settled_rss_bytes - empty) / r.objects;
      watchMemory.forms[form] = { settled_rss_bytes: r.settled_rss_bytes, objects: r.objects, per_pod_bytes: perPod, share_of_pod_json: perPod / watchMemory.pod_json_bytes };
    }
    const f0 = (x) => Math.round(x).toLocaleString('en-US');
    const row = (label, form) => {
      const m = watchMemory.forms[form];
      return `| ${label} | ${m ? `${f0(m.per_pod_bytes)} B (${m.share_of_pod_json.toFixed(2)}× the pod's JSON; settled RSS ${f0(m.settled_rss_bytes / MiB)} MiB)` : '—'} |`;
    };
    lines.push(
      '### Memory per stored pod, as kinformer-watch runs',
      '',
      `\`kinformer-watch\` as shipped (its allocator tuning included) syncing the same ${f0(pods)} pods ` +
        `(${f0(watchMemory.pod_json_bytes)} B of JSON each on average), once per form of storage; a pod's share is the ` +
        `settled RSS less that of the same program watching a kind with no objects (${f0(empty / MiB)} MiB), over the pods.`,
      '',
      '| form | memory per stored pod |',
      '|---|---:|',
      row('full', 'full'),
      row('managedFields dropped (`--drop-managed-fields`)', 'no-managed-fields'),
      row('metadata-only, text as received (`--metadata-only --no-compress-objects`)', 'metadata-only'),
      row('metadata-only, managedFields dropped, text as received', 'metadata-only-no-managed-fields'),
      row('full, text compressed (`--compress-objects`)', 'compressed'),
      row('metadata-only (`--metadata-only`: text compressed, the default)', 'metadata-only-compressed'),
      '',
    );
  }
}

// kinformer alone: informer_bench's runs (full, no-managed-fields, metadata-only,
// metadata-only-no-managed-fields).
const bench = {};
if (args['informer-bench']) {
  for (const line of readFileSync(args['informer-bench'], 'utf8').split('\n').filter(Boolean)) {
    const [name, file] = line.split('\t');
    bench[name] = JSON.parse(readFileSync(file, 'utf8'));
  }
}
const full = bench.full;
// The latency phase's writer priority (informer_bench --writer-nice; absent before it existed).
const writerNice = (r) => (r.latency_writer_nice == null ? '' : `, writer at nice ${r.latency_writer_nice}`);
const avgPodBytes = full && full.list_items > 0 ? full.list_bytes / full.list_items : null;
if (full) {
  const f0 = (x) => (x == null ? '—' : Math.round(x).toLocaleString('en-US'));
  const f1 = (x) => (x == null ? '—' : x.toFixed(1));
  const f3 = (x) => (x == null ? '—' : x.toFixed(3));
  const perPod = (r) => (r ? `${f0(r.rss_per_object_bytes)} B (${(r.rss_per_object_bytes / avgPodBytes).toFixed(2)}× the pod's JSON)` : '—');
  lines.push(
    '### kinformer alone: informer_bench',
    '',
    `The informer against the simulator in one process (\`informer_bench\`, ${Number(full.pods).toLocaleString('en-US')} pods of ` +
      `${f0(avgPodBytes)} B JSON on average), with Boost.JSON's DOM parse of the same bytes as the limit; ` +
      'CPU is the informer\'s threads only. tests/bench/README.md says how each figure is taken.',
    '',
    '| figure | value |',
    '|---|---:|',
    `| sync | ${f3(full.sync_seconds)} s, ${f1(full.sync_mb_per_second)} MB/s of list items |`,
    `| Boost.JSON DOM parse of the same items (limit) | ${f1(full.sync_limit_mb_per_second)} MB/s (informer: ${(100 * full.sync_share_of_limit).toFixed(0)} %) |`,
    ...(full.sync_cpu_seconds != null
      ? [`| informer CPU to sync | ${f3(full.sync_cpu_seconds)} s, ${f1(full.sync_cpu_mb_per_second)} MB of list items per CPU second (limit's: ${(100 * full.sync_cpu_share_of_limit).toFixed(0)} %) |`]
      : []),
    `| watch events, drained (${f0(full.updates_written)}) | ${f0(full.events_per_second)} events/s, ${f1(full.event_mb_per_second)} MB/s |`,
    `| Boost.JSON DOM parse of the same lines (limit) | ${f1(full.event_limit_mb_per_second)} MB/s (informer: ${(100 * full.event_share_of_limit).toFixed(0)} %) |`,
    `| informer CPU per event, 1 handler | ${f1(full.event_cpu_us_per_update)} µs |`,
    `| informer CPU per event, ${full.fanout_handlers} handlers | ${f1(full.fanout_cpu_us_per_update)} µs (${full.fanout_cpu_ratio.toFixed(2)}× one handler's) |`,
    `| delivery latency at ${f0(full.latency_rate)}/s asked (${f0(full.latency_writes_per_second)}/s kept${writerNice(full)}) p50 / p99 / p99.9 / max | ` +
      `${f3(full.latency_p50_ms)} / ${f3(full.latency_p99_ms)} / ${f3(full.latency_p999_ms)} / ${f3(full.latency_max_ms)} ms |`,
    ...(full.host_pace_p99_ms != null
      ? [`| the host alone at that pace, touching ${f0(full.host_pace_working_set_bytes / MiB)} MiB (no informer) p50 / p99 / p99.9 / max | ` +
          `${f3(full.host_pace_p50_ms)} / ${f3(full.host_pace_p99_ms)} / ${f3(full.host_pace_p999_ms)} / ${f3(full.host_pace_max_ms)} ms |`]
      : []),
    ...(full.host_relay_threads > 0
      ? [`| the same ticks handed through ${full.host_relay_threads} threads that only wake each other (no informer) p50 / p99 / p99.9 / max | ` +
          `${f3(full.host_relay_p50_ms)} / ${f3(full.host_relay_p99_ms)} / ${f3(full.host_relay_p999_ms)} / ${f3(full.host_relay_max_ms)} ms |`]
      : []),
    `| forced relist (410) with ${f0(full.informer_objects)} stored: time to converge | ${f3(full.relist_seconds)} s (${f0(full.relist_deltas)} deltas) |`,
    `| forced relist: extra peak RSS (whole process) | ${f1(full.relist_extra_peak_rss_bytes / MiB)} MiB |`,
    ...(full.restore_relist_seconds != null
      ? [`| relist after a restore to before ${f0(full.restore_updates)} random updates: time to converge | ${f3(full.restore_relist_seconds)} s (${f0(full.restore_relist_deltas)} deltas, ${f0(full.restore_relist_items_reused)} items handed on as stored) |`,
          `| relist after a restore: extra peak RSS (whole process) | ${f1(full.restore_relist_extra_peak_rss_bytes / MiB)} MiB |`]
      : []),
    `| memory per stored pod, full | ${perPod(full)} |`,
    `| memory per stored pod, managedFields dropped | ${perPod(bench['no-managed-fields'])} |`,
    `| memory per stored pod, metadata-only, text as received | ${perPod(bench['metadata-only'])} |`,
    `| memory per stored pod, metadata-only, managedFields dropped, text as received | ${perPod(bench['metadata-only-no-managed-fields'])} |`,
    '',
  );
}

// The issue's targets, each from this run.
const targets = [];
const target = (name, value, goal, met) => targets.push(`| ${name} | ${value} | ${goal} | ${met == null ? '—' : met ? 'met' : '**missed**'} |`);
const x2 = (q) => (q == null ? '—' : `${q.toFixed(2)}×`);
{
  const q = ratio(medians.kinformer.process_sync_seconds, medians['client-node'].process_sync_seconds, true);
  target('sync time vs client-node', x2(q), '≥ 5×', q == null ? null : q >= 5);
}
if (events > 0) {
  const q = ratio(medians.kinformer.watch_events_per_second, medians['client-node'].watch_events_per_second, false);
  const rawRate = ceiling?.watch_events_per_second;
  // The issue asks for 5× "wherever the simulator can push that much": when kubesim's own
  // ceiling to one raw watch on the same bursts is below 5× client-node, kinformer meets the
  // target by keeping up with that ceiling.
  const kinformerRate = medians.kinformer.watch_events_per_second;
  const clientNodeRate = medians['client-node'].watch_events_per_second;
  const simulatorBound = rawRate != null && clientNodeRate != null && rawRate < 5 * clientNodeRate;
  const keptUp = simulatorBound && kinformerRate != null && kinformerRate >= rawRate;
  target(
    'watch events/s vs client-node',
    `${x2(q)} (${Math.round(kinformerRate ?? 0).toLocaleString('en-US')} events/s` +
      (rawRate ? `; kubesim's ceiling to one raw watch on the same bursts: ${Math.round(rawRate).toLocaleString('en-US')}/s` : '') +
      (simulatorBound ? `, below 5× client-node's ${Math.round(5 * clientNodeRate).toLocaleString('en-US')}/s` : '') + ')',
    '≥ 5× where the simulator can push it',
    q == null ? null : q >= 5 || keptUp,
  );
}
if (full) {
  target('ingest MB/s vs Boost.JSON DOM parse (sync)', x2(full.sync_share_of_limit), '≥ 1×', full.sync_share_of_limit >= 1);
  if (full.sync_cpu_share_of_limit != null)
    // Beside it: the same bytes per second of the informer's own CPU, so the simulator serving
    // the list in the same process on the same 2 cores is not counted as the informer's cost.
    target('(beside it) ingest MB per informer CPU second vs Boost.JSON DOM parse', x2(full.sync_cpu_share_of_limit), '≥ 1×', full.sync_cpu_share_of_limit >= 1);
}
// Memory per pod: as kinformer-watch runs when measured, else informer_bench's.
{
  const benchShare = (r) => (r && avgPodBytes ? r.rss_per_object_bytes / avgPodBytes : undefined);
  const share = (form) =>
    watchMemory ? watchMemory.forms[form]?.share_of_pod_json : benchShare(form === 'full' ? full : bench[form]);
  const source = watchMemory ? ' (kinformer-watch)' : ' (informer_bench)';
  const r = share('full');
  if (r != null) target(`RSS per stored full pod / its JSON${source}`, x2(r), '≤ 1.5×', r <= 1.5);
  // Metadata-only informers keep their text compressed unless told not to (a decompression for
  // each reader of the text); as received is beside it.
  const mc = share('metadata-only-compressed');
  if (mc != null) target(`RSS per metadata-only pod / full pod JSON, as kinformer stores it by default (text compressed)${source}`, x2(mc), '≤ 0.3×', mc <= 0.3);
  const m = share('metadata-only');
  if (m != null) target(`(beside it) RSS per metadata-only pod / full pod JSON, text as received${source}`, x2(m), '≤ 0.3×', m <= 0.3);
  const c = share('compressed');
  if (c != null) target(`(beside it) RSS per stored full pod / its JSON, text compressed${source}`, x2(c), '≤ 1.5×', c <= 1.5);
  // Not the target's own figure: the same informer with controller-runtime's usual transform.
  const n = share('metadata-only-no-managed-fields');
  if (n != null) target(`(beside it) metadata-only pod without managedFields / full pod JSON${source}`, x2(n), '≤ 0.3×', n <= 0.3);
}
{
  const peak = medians.kinformer.peak_rss_at_sync_bytes;
  const settled = medians.kinformer.settled_rss_bytes;
  const q = peak && settled ? peak / settled : null;
  target('peak RSS during sync / settled RSS (kinformer-watch)', x2(q), '≤ 1.3×', q == null ? null : q <= 1.3);
}
if (full && full.fanout_handlers >= 2)
  target(`${full.fanout_handlers} handlers' CPU / one handler's`, x2(full.fanout_cpu_ratio), '≤ 1.5×', full.fanout_cpu_ratio <= 1.5);
if (full && full.latency_samples > 0)
  target(
    `p99 delivery latency at ${full.latency_rate.toLocaleString('en-US')}/s`,
    `${full.latency_p99_ms.toFixed(3)} ms (${Math.round(full.latency_writes_per_second).toLocaleString('en-US')}/s kept${writerNice(full)}` +
      `${full.host_pace_p99_ms != null ? `; the host alone at that pace and size: ${full.host_pace_p99_ms.toFixed(3)} ms` : ''}` +
      `${full.host_relay_threads > 0 ? `, relayed through ${full.host_relay_threads} threads: ${full.host_relay_p99_ms.toFixed(3)} ms` : ''})`,
    '≤ 2 ms',
    full.latency_p99_ms <= 2,
  );
if (readApi) {
  const q = ratio(readApi.median.kinformerd.list_seconds, readApi.median.kubesim.list_seconds, true);
  target('read API list of every pod vs the simulator', x2(q), '≥ 1×', q == null ? null : q >= 1);
}
lines.push('### Targets', '', '| target | this run | goal | |', '|---|---|---|---|', ...targets, '');

lines.push('What the figures mean: tests/bench/side_by_side/README.md. Every figure of every run: side_by_side.json.');
writeFileSync(path.join(args.results, 'side_by_side.md'), `${lines.join('\n')}\n`);

// --- JSON --------------------------------------------------------------------------------------
const report = {
  generated: new Date().toISOString(),
  commit,
  host,
  config: {
    pods: Number(args.pods),
    namespaces: Number(args.namespaces),
    events,
    burst: Number(args.burst),
    rounds: Number(args.rounds),
    warmup: Number(args.warmup ?? 0),
    client_node_list: args.list,
    churn: args.churn,
    command: args.command,
  },
  median: medians,
  ceiling,
  runs,
  steady,
  read_api: readApi,
  informer_bench: bench,
  watch_memory: watchMemory,
};
writeFileSync(path.join(args.results, 'side_by_side.json'), `${JSON.stringify(report, null, 2)}\n`);

// --- gnuplot -----------------------------------------------------------------------------------
const dat = [
  '# label kinformer_sync_s client-node_sync_s kinformer_peak_MiB client-node_peak_MiB kinformer_watch client-node_watch ceiling_watch',
];
const row = (label, kf, c, raw) =>
  `"${label}" ${kf?.process_sync_seconds ?? 'NaN'} ${c?.process_sync_seconds ?? 'NaN'} ` +
  `${kf?.peak_rss_bytes != null ? kf.peak_rss_bytes / MiB : 'NaN'} ${c?.peak_rss_bytes != null ? c.peak_rss_bytes / MiB : 'NaN'} ` +
  `${kf?.watch_events_per_second ?? 'NaN'} ${c?.watch_events_per_second ?? 'NaN'} ${raw?.watch_events_per_second ?? 'NaN'}`;
for (const round of rounds) dat.push(row(`round ${round}`, find('kinformer', round), find('client-node', round), find('raw', round)));
dat.push(row('median', medians.kinformer, medians['client-node'], ceiling));
const datFile = path.join(args.work, 'side_by_side.dat');
writeFileSync(datFile, `${dat.join('\n')}\n`);
const png = path.join(args.results, 'side_by_side.png');
const q = (s) => `'${s.replace(/'/g, "''")}'`;
// The watch panel only when events were timed; the ceiling's bars only when it was measured.
const watchPanel =
  events > 0
    ? `set title 'watch events/s, drained in bursts'
set key below horizontal
plot ${q(datFile)} using 6:xtic(1) title 'kinformer' lc rgb '#1f77b4', '' using 7 title 'client-node' lc rgb '#d62728'` +
      (ceiling ? `, '' using 8 title "kubesim's ceiling (raw watch)" lc rgb '#7f7f7f'` : '') +
      '\n'
    : '';
const gp = `set terminal pngcairo size ${events > 0 ? 1500 : 1100},480 font ',10'
set output ${q(png)}
set datafile separator whitespace
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set yrange [0:*]
set multiplot layout 1,${events > 0 ? 3 : 2} title ${q(`kinformer vs client-node ${cn.client_node_version ?? ''}: ${Number(args.pods).toLocaleString('en-US')} pods`)}
set title 'initial sync, process start to synced (s)'
plot ${q(datFile)} using 2:xtic(1) title 'kinformer' lc rgb '#1f77b4', '' using 3 title 'client-node' lc rgb '#d62728'
set title 'peak RSS, whole run (MiB)'
plot ${q(datFile)} using 4:xtic(1) title 'kinformer' lc rgb '#1f77b4', '' using 5 title 'client-node' lc rgb '#d62728'
${watchPanel}unset multiplot
`;
writeFileSync(path.join(args.work, 'side_by_side.gp'), gp);
