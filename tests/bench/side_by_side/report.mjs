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
};
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
    `${rounds.length} round(s), kinformer first in each. Host: ${host.cpus} × ${host.cpu_model}, ${host.memory_gib} GiB.`,
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
    client_node_list: args.list,
    churn: args.churn,
    command: args.command,
  },
  median: medians,
  runs,
};
writeFileSync(path.join(args.results, 'side_by_side.json'), `${JSON.stringify(report, null, 2)}\n`);

// --- gnuplot -----------------------------------------------------------------------------------
const dat = ['# label kinformer_sync_s client-node_sync_s kinformer_peak_MiB client-node_peak_MiB'];
const row = (label, kf, c) =>
  `"${label}" ${kf?.process_sync_seconds ?? 'NaN'} ${c?.process_sync_seconds ?? 'NaN'} ` +
  `${kf?.peak_rss_bytes != null ? kf.peak_rss_bytes / MiB : 'NaN'} ${c?.peak_rss_bytes != null ? c.peak_rss_bytes / MiB : 'NaN'}`;
for (const round of rounds) dat.push(row(`round ${round}`, find('kinformer', round), find('client-node', round)));
dat.push(row('median', medians.kinformer, medians['client-node']));
const datFile = path.join(args.work, 'side_by_side.dat');
writeFileSync(datFile, `${dat.join('\n')}\n`);
const png = path.join(args.results, 'side_by_side.png');
const q = (s) => `'${s.replace(/'/g, "''")}'`;
const gp = `set terminal pngcairo size 1100,480 font ',10'
set output ${q(png)}
set datafile separator whitespace
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set yrange [0:*]
set multiplot layout 1,2 title ${q(`kinformer vs client-node ${cn.client_node_version ?? ''}: ${Number(args.pods).toLocaleString('en-US')} pods`)}
set title 'initial sync, process start to synced (s)'
plot ${q(datFile)} using 2:xtic(1) title 'kinformer' lc rgb '#1f77b4', '' using 3 title 'client-node' lc rgb '#d62728'
set title 'peak RSS, whole run (MiB)'
plot ${q(datFile)} using 4:xtic(1) title 'kinformer' lc rgb '#1f77b4', '' using 5 title 'client-node' lc rgb '#d62728'
unset multiplot
`;
writeFileSync(path.join(args.work, 'side_by_side.gp'), gp);
