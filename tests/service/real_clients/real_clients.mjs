// Real clients through kinformerd's read API while the simulator behind it churns and fails.
//
//   node real_clients.mjs --bin BUILD/app --kube-bin DIR [--seconds S] [--pods N]
//
// kubesim (N pods, churn with label flips between track=canary and track=stable) -> kinformerd
// (a full and a metadata-only pods informer) -> the read API, read at once by:
//   - @kubernetes/client-node 1.4.0's informer, every pod;
//   - the same informer with labelSelector track=canary;
//   - kubectl get pods -A -l track=canary -w --output-watch-events -o json;
//   - kinformer-watch --metadata-only (PartialObjectMetadata list and watch), every pod;
//   - kinformer-watch -l track=canary --watch-timeout 1: its watch ends every second and resumes
//     from its last resourceVersion, so it is told about pods that left the selection meanwhile;
//   - client-go's SharedIndexInformer (tests/kube/cmd/kube-informer): plain list and watch,
//     asking for protobuf (the read API answers JSON), a streaming list (WatchListClient), with
//     -l track=canary, and metadata-only;
//   - controller-runtime's cache (tests/kube/cmd/cr-cache), every pod, and with track=canary.
// A second kinformerd caches the pods per namespace (an informer for each of the three), so its
// read API merges three informers into every list and watch across namespaces; read by:
//   - @kubernetes/client-node's informer, every pod;
//   - kinformer-watch --watch-timeout 1, every pod, resuming every second;
//   - client-go's informer with a streaming list.
// During the churn the simulator drops, fails, stalls and compacts kinformerd's watches and fails
// its lists. Then the churn stops, and every client's cache must equal the simulator's truth for
// its selection (key -> resourceVersion), within a deadline. Exit status 0 on success; on failure
// the differences are printed.

import * as k8s from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const bin = option('--bin');
const kubeBin = option('--kube-bin');
const churnSeconds = Number(option('--seconds', '8'));
const pods = Number(option('--pods', '300'));
if (!bin || !kubeBin) {
  console.error('usage: node real_clients.mjs --bin BUILD/app --kube-bin DIR [--seconds S] [--pods N]');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'real-clients-'));
const children = [];
let failed = false;

function log(message) {
  console.log(`real_clients: ${message}`);
}

function stopAll() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}

function die(message) {
  console.error(`real_clients: FAILED: ${message}`);
  stopAll();
  process.exit(1);
}

// Spawns a program; `onLine` gets each stdout line, stderr goes to a log kept for errors.
function start(name, file, argv, { onLine, onErrLine } = {}) {
  const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  child.stderrText = '';
  if (onLine) createInterface({ input: child.stdout }).on('line', onLine);
  else child.stdout.resume();
  createInterface({ input: child.stderr }).on('line', (line) => {
    child.stderrText += line + '\n';
    if (onErrLine) onErrLine(line);
  });
  child.on('exit', (code, signal) => {
    if (!stopping) log(`${name} exited (${code ?? signal})`);
  });
  child.displayName = name;
  return child;
}
let stopping = false;

// Resolves with the first line `match` accepts (its result), or fails after `ms`.
function firstLine(child, stream, match, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${child.displayName}: no expected line in ${ms} ms\n${child.stderrText}`)),
      ms,
    );
    createInterface({ input: child[stream] }).on('line', (line) => {
      const found = match(line);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      setTimeout(() => reject(new Error(`${child.displayName} exited (${code})\n${child.stderrText}`)), 50);
    });
  });
}

async function post(url) {
  const reply = await fetch(url, { method: 'POST' });
  if (!reply.ok) die(`POST ${url}: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

async function getJson(url) {
  const reply = await fetch(url);
  if (!reply.ok) die(`GET ${url}: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

const key = (meta) => `${meta.namespace ?? ''}/${meta.name}`;
const isCanary = (meta) => (meta.labels ?? {}).track === 'canary';

// ---- the simulator and kinformerd ----------------------------------------------------------
const kubesim = start('kubesim', join(bin, 'kubesim'), [
  '--listen', '127.0.0.1:0', '--pods', String(pods), '--namespaces', '3', '--seed', '11',
  '--bookmark-interval-ms', '1000',
]);
const simUrl = await firstLine(kubesim, 'stdout', (l) => l.match(/^listening on (\S+)/)?.[1], 30000)
  .catch((e) => die(e.message));
log(`kubesim at ${simUrl}`);

// kinformerd with `informers` (YAML lines) against the simulator: its read API's URL.
async function startKinformerd(name, informers) {
  const config = join(work, `${name}.yaml`);
  writeFileSync(
    config,
    [
      'informers:',
      ...informers,
      'listen:',
      '  api_anonymous: true',
      '  api: "127.0.0.1:0"',
      '  metrics: "127.0.0.1:0"',
      '',
    ].join('\n'),
  );
  const daemon = start(name, join(bin, 'kinformerd'), ['--config', config, '--server', simUrl]);
  const address = await firstLine(
    daemon,
    'stderr',
    (l) => (l.includes('event=api_listening') ? l.match(/ address=(\S+)/)?.[1] : null),
    60000,
  ).catch((e) => die(e.message));
  log(`${name}'s read API at http://${address}`);
  return `http://${address}`;
}

const api = await startKinformerd('kinformerd', [
  '  - resource: pods',
  '  - resource: pods',
  '    name: pods-metadata',
  '    metadata_only: true',
]);
const perNamespaceApi = await startKinformerd('kinformerd-per-namespace', [
  '  - resource: pods',
  '    namespaces: [default, ns-1, ns-2]',
]);

// ---- the clients -----------------------------------------------------------------------------
// Each client's cache: key -> resourceVersion.
const caches = {};

function clientNodeInformer(name, labelSelector, server = api) {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'kinformerd', server, skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'kinformerd', cluster: 'kinformerd', user: 'anonymous' }],
    currentContext: 'kinformerd',
  });
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(
    kc,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces(labelSelector ? { labelSelector } : {}),
    labelSelector,
  );
  // Read from the informer's own cache at the end: what its users would see.
  caches[name] = () => new Map(informer.list().map((o) => [key(o.metadata), o.metadata.resourceVersion]));
  informer.on('error', () => setTimeout(() => informer.start().catch(() => {}), 200));
  return informer.start();
}

// kinformer-watch's delta lines kept as a map.
function kinformerWatch(name, extra, server = api) {
  deltaLines(name, join(bin, 'kinformer-watch'), ['-s', server, '-A', ...extra, 'pods']);
}

// A Go peer (tests/kube/cmd): client-go's informer or controller-runtime's cache, printing the
// same delta lines.
function goPeer(name, program, extra, server = api) {
  deltaLines(name, join(kubeBin, program), ['-s', server, ...extra, 'pods']);
}

function deltaLines(name, file, argv) {
  const cache = new Map();
  caches[name] = () => cache;
  start(name, file, argv, {
    onLine: (line) => {
      const d = JSON.parse(line);
      if (d.type === 'DELETED') cache.delete(d.key);
      else if (d.key) cache.set(d.key, d.resourceVersion);
    },
  });
}

// kubectl's watch events kept as a map.
function kubectlWatch(name, selector) {
  const cache = new Map();
  caches[name] = () => cache;
  const child = spawn('kubectl', [
    `--server=${api}`, `--cache-dir=${join(work, 'kubectl-cache')}`, 'get', 'pods', '-A', '-l',
    selector, '-w', '--output-watch-events', '-o', 'json',
  ], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '/dev/null', HOME: work } });
  children.push(child);
  child.displayName = name;
  child.stderrText = '';
  child.stderr.on('data', (b) => (child.stderrText += b));
  child.on('exit', (code) => {
    if (!stopping) {
      failed = true;
      console.error(`real_clients: ${name} ended early (${code}): ${child.stderrText}`);
    }
  });
  // One event per line: {"type":"ADDED","object":{...}}.
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line);
    const meta = event.object.metadata;
    if (event.type === 'DELETED') cache.delete(key(meta));
    else cache.set(key(meta), meta.resourceVersion);
  });
  return child;
}

await Promise.all([
  clientNodeInformer('client-node', undefined),
  clientNodeInformer('client-node -l track=canary', 'track=canary'),
  clientNodeInformer('client-node, per-namespace informers', undefined, perNamespaceApi),
]).catch((e) => die(`client-node informer: ${e}`));
kinformerWatch('kinformer-watch --watch-timeout 1, per-namespace informers', ['--watch-timeout', '1'],
  perNamespaceApi);
kinformerWatch('kinformer-watch --metadata-only', ['--metadata-only']);
kinformerWatch('kinformer-watch -l track=canary --watch-timeout 1', ['-l', 'track=canary', '--watch-timeout', '1']);
const haveKubectl = await new Promise((resolve) => {
  const probe = spawn('kubectl', ['version', '--client'], { stdio: 'ignore' });
  probe.on('error', () => resolve(false));
  probe.on('exit', (code) => resolve(code === 0));
});
if (!haveKubectl) {
  log('kubectl is not on PATH: deploy/install-deps.sh installs it');
  process.exit(1);
}
kubectlWatch('kubectl get -w -l track=canary', 'track=canary');
goPeer('client-go', 'kube-informer', ['--watch-list=false']);
goPeer('client-go --protobuf', 'kube-informer', ['--protobuf', '--watch-list=false']);
goPeer('client-go --watch-list', 'kube-informer', ['--watch-list=true']);
goPeer('client-go -l track=canary', 'kube-informer', ['-l', 'track=canary']);
goPeer('client-go --metadata-only', 'kube-informer', ['--metadata-only']);
goPeer('client-go --watch-list, per-namespace informers', 'kube-informer', ['--watch-list=true'],
  perNamespaceApi);
goPeer('controller-runtime', 'cr-cache', []);
goPeer('controller-runtime -l track=canary', 'cr-cache', ['-l', 'track=canary']);
log(`clients started: ${Object.keys(caches).join(', ')}`);

// ---- churn with faults -----------------------------------------------------------------------
const faults = [
  '/sim/faults/drop-watches',
  '/sim/faults/fail-watches?count=2',
  '/sim/faults/fail-lists?count=1&code=500',
  '/sim/faults/compact',
  '/sim/faults/drop-watches',
  '/sim/faults/stall-watches',
  '/sim/faults/resume-watches',
];
await post(`${simUrl}/sim/churn?rate=150`);
const step = (churnSeconds * 1000) / (faults.length + 1);
for (const fault of faults) {
  await new Promise((r) => setTimeout(r, step));
  await post(`${simUrl}${fault}`);
}
await new Promise((r) => setTimeout(r, step));
const churn = await post(`${simUrl}/sim/churn?rate=0`);
log(`churn stopped: ${JSON.stringify(churn)}`);

// ---- convergence -----------------------------------------------------------------------------
const list = await getJson(`${simUrl}/api/v1/pods`);
const truthAll = new Map(list.items.map((p) => [key(p.metadata), p.metadata.resourceVersion]));
const truthCanary = new Map(
  list.items.filter((p) => isCanary(p.metadata)).map((p) => [key(p.metadata), p.metadata.resourceVersion]),
);
log(`truth: ${truthAll.size} pods, ${truthCanary.size} with track=canary, resourceVersion ${list.metadata.resourceVersion}`);
const expected = (name) => (name.includes('canary') ? truthCanary : truthAll);

function differences(name) {
  const have = caches[name]();
  const want = expected(name);
  const out = [];
  for (const [k, rv] of want) if (have.get(k) !== rv) out.push(`${k}: ${have.get(k) ?? 'missing'} (want ${rv})`);
  for (const k of have.keys()) if (!want.has(k)) out.push(`${k}: stale (not in the truth)`);
  return out;
}

const deadline = Date.now() + 60000;
let pending = Object.keys(caches);
while (pending.length > 0 && Date.now() < deadline && !failed) {
  pending = pending.filter((name) => differences(name).length > 0);
  if (pending.length > 0) await new Promise((r) => setTimeout(r, 100));
}
stopping = true;
for (const name of Object.keys(caches)) {
  const diff = differences(name);
  if (diff.length === 0) log(`${name}: converged (${caches[name]().size} objects)`);
  else {
    failed = true;
    console.error(`real_clients: ${name}: ${diff.length} differences, e.g.\n  ${diff.slice(0, 10).join('\n  ')}`);
  }
}
if (truthCanary.size === 0 || truthCanary.size === truthAll.size) {
  failed = true;
  console.error('real_clients: the canary selection must be a strict, non-empty subset');
}
stopAll();
process.exit(failed ? 1 : 0);
