// Compares what each consumer of the soak holds with kubesim's truth, as key -> resourceVersion:
//   --sim URL              kubesim (the truth: /sim/truth, with the view's label selector)
//   --cache URL            kinformerd's read API: its cache, listed whole
//   --webhook URL          the webhook sink's folded state (/state)
//   --watch FILE[@SELECTOR]  a kinformer-watch delta log folded (its selector's truth)
// Prints one JSON object: {"views":[{"name","objects","truth","lost","stale","extra",
// "examples"}],"ok":bool}. lost: in the truth, missing; stale: at another resourceVersion;
// extra: not in the truth.
import fs from 'node:fs';
import readline from 'node:readline';

const args = process.argv.slice(2);
const views = [];
let sim;
for (let i = 0; i < args.length; i += 2) {
  const [flag, value] = [args[i], args[i + 1]];
  if (value === undefined) throw new Error(`${flag} needs a value`);
  if (flag === '--sim') sim = value;
  else if (flag === '--cache') views.push({ kind: 'cache', name: 'kinformerd cache (read API list)', source: value });
  else if (flag === '--webhook') views.push({ kind: 'webhook', name: 'webhook receiver', source: value });
  else if (flag === '--watch') {
    const [file, selector = ''] = value.split('@');
    views.push({ kind: 'watch', name: `read-API watcher${selector ? ` (${selector})` : ''}`, source: file, selector });
  } else throw new Error(`unknown flag ${flag}`);
}
if (!sim) throw new Error('--sim URL is required');

async function getJson(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return res.json();
}

function fromList(list) {
  const out = new Map();
  for (const item of list.items) {
    const m = item.metadata;
    out.set(m.namespace ? `${m.namespace}/${m.name}` : m.name, m.resourceVersion);
  }
  return out;
}

// kubesim's control route: no armed fault fails it.
async function truthFor(selector) {
  const all = await getJson(`${sim}/sim/truth?resource=pods&labelSelector=${encodeURIComponent(selector)}`);
  return new Map(all.map((v) => [v.key, String(v.resourceVersion)]));
}

async function foldWatchLog(file) {
  const state = new Map();
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.startsWith('{')) continue;
    let d;
    try {
      d = JSON.parse(line);
    } catch {
      continue; // the last line may be half written
    }
    if (!d.key) continue; // {"type":"SYNCED"}
    if (d.type === 'DELETED') state.delete(d.key);
    else state.set(d.key, d.resourceVersion);
  }
  return state;
}

async function held(view) {
  if (view.kind === 'cache') return fromList(await getJson(`${view.source}/api/v1/pods`));
  if (view.kind === 'webhook') return new Map(Object.entries(await getJson(`${view.source}/state`)));
  return foldWatchLog(view.source);
}

const truths = new Map();
const report = { views: [], ok: true };
for (const view of views) {
  const selector = view.selector ?? '';
  if (!truths.has(selector)) truths.set(selector, await truthFor(selector));
  const truth = truths.get(selector);
  const got = await held(view);
  const r = { name: view.name, objects: got.size, truth: truth.size, lost: 0, stale: 0, extra: 0, examples: [] };
  const example = (text) => r.examples.length < 5 && r.examples.push(text);
  for (const [key, rv] of truth) {
    if (!got.has(key)) ++r.lost, example(`lost ${key}@${rv}`);
    else if (got.get(key) !== rv) ++r.stale, example(`stale ${key}@${got.get(key)} (truth ${rv})`);
  }
  for (const [key, rv] of got) if (!truth.has(key)) ++r.extra, example(`extra ${key}@${rv}`);
  report.ok &&= r.lost === 0 && r.stale === 0 && r.extra === 0;
  report.views.push(r);
}
console.log(JSON.stringify(report));
