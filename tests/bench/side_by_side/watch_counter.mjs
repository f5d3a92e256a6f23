// Counts the events of one raw watch stream, without parsing them: the reader the read-API
// workload puts on kinformerd and on kubesim side by side, so the figure is the server's rate
// (a JSON.parse per line would make the reader the bottleneck).
//
//   node watch_counter.mjs --url URL [--events N] [--timeout S] [--idle S] [--progress FILE]
//
// URL is a complete watch request (...?watch=1&resourceVersion=RV). Lines of BOOKMARK events are
// not counted. Progress for run.sh: "STATE EVENTS LAST_EVENT_WALL_US" in --progress FILE
// (connecting, ready, done, failed); SIGUSR2 in state ready ends the count. The result is one
// JSON line on stdout.

import http from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  count,
  countEvent,
  eventFigures,
  fail,
  failAfter,
  finishOnSignal,
  parseOptions,
  pollCount,
  printResult,
  progress,
  setScript,
  writeProgress,
} from './bench_cli.mjs';

setScript('watch_counter');
const usage = `usage: node watch_counter.mjs --url URL [--events N] [--timeout S] [--idle S] [--progress FILE]
  --url URL        a watch request: http://host:port/api/v1/pods?watch=1&resourceVersion=RV
  --events N       stop after N events (0: until SIGUSR2 or --idle quiet seconds)
  --timeout S      fail when the stream is not open after S seconds (600)
  --idle S         end the count after S seconds without an event (10)
  --progress FILE  write "STATE EVENTS LAST_EVENT_WALL_US" to FILE for the driver
`;
const opts = parseOptions(process.argv.slice(2), { url: '', events: 0, timeout: 600, idle: 10, progress: '' }, usage);
if (!opts.url) fail(2, `--url is required\n${usage}`);
progress.file = opts.progress;
writeProgress('connecting', 0);

let finished = false;
let bookmarks = 0;
let bytes = 0;
let partial = ''; // a line split across chunks: only its first bytes matter (the type)

function finish() {
  if (finished) return;
  finished = true;
  writeProgress('done', count.events);
  printResult({ url: opts.url, bytes, bookmarks, ...eventFigures(opts.events || count.events) }, true);
}

const bookmark = '{"type":"BOOKMARK"';
// Counts the complete lines in chunk; a line is an event unless it starts as a bookmark.
function countLines(chunk) {
  bytes += chunk.length;
  const now = performance.now();
  let start = 0;
  for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
    const head = partial + chunk.toString('latin1', start, Math.min(nl, start + bookmark.length));
    partial = '';
    if (head.startsWith(bookmark)) ++bookmarks;
    else if (head.length > 0 && countEvent(now, opts.events)) finish();
    start = nl + 1;
  }
  if (start < chunk.length && partial.length < bookmark.length)
    partial += chunk.toString('latin1', start, Math.min(chunk.length, start + bookmark.length - partial.length));
}

const openTimer = failAfter(opts.timeout, () => 'the watch response');
const request = http.get(opts.url, { agent: false }, (response) => {
  clearTimeout(openTimer);
  if (response.statusCode !== 200) fail(1, `${opts.url}: HTTP ${response.statusCode}`);
  writeProgress('ready', 0);
  response.on('data', (chunk) => {
    if (!finished) countLines(chunk);
  });
  response.on('end', () => {
    if (!finished) fail(1, `the server ended the watch after ${count.events} events`);
  });
  response.on('error', (error) => {
    if (!finished) fail(1, `watch stream: ${error.message}`);
  });
});
request.on('error', (error) => fail(1, `${opts.url}: ${error.message}`));
finishOnSignal(finish);
pollCount(opts, () => !finished && progress.state === 'ready', finish);
