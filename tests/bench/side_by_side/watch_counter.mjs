// Counts the events of one raw watch stream, without parsing them: the reader the read-API
// workload puts on kinformerd and on kubesim side by side, so the figure is the server's rate
// (a JSON.parse per line would make the reader the bottleneck). It speaks HTTP/1.1 over a plain
// socket and undoes the chunked framing itself: Node's http client took twice as long as the
// server needed to send a burst (2,000 pods: ~110 ms against ~50 ms read by a bare socket).
//
//   node watch_counter.mjs --url URL [--events N] [--timeout S] [--idle S] [--progress FILE]
//
// URL is a complete watch request (...?watch=1&resourceVersion=RV). Lines of BOOKMARK events are
// not counted. Progress for run.sh: "STATE EVENTS LAST_EVENT_WALL_US" in --progress FILE
// (connecting, ready, done, failed); SIGUSR2 in state ready ends the count. The result is one
// JSON line on stdout.

import net from 'node:net';
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

// The response: headers, then chunks ("SIZE\r\nDATA\r\n"), whose data is the event lines.
const url = new URL(opts.url);
let head = Buffer.alloc(0); // until the blank line after the headers
let inBody = false;
let chunkLeft = 0; // data bytes left in the current chunk
let sizeLine = ''; // a chunk-size line split across reads
let skipCrlf = 0; // the CRLF after a chunk's data still to skip

function readBody(buffer) {
  let at = 0;
  while (at < buffer.length) {
    if (skipCrlf > 0) {
      const n = Math.min(skipCrlf, buffer.length - at);
      skipCrlf -= n;
      at += n;
      continue;
    }
    if (chunkLeft > 0) {
      const end = Math.min(buffer.length, at + chunkLeft);
      countLines(buffer.subarray(at, end));
      chunkLeft -= end - at;
      at = end;
      if (chunkLeft === 0) skipCrlf = 2;
      continue;
    }
    const nl = buffer.indexOf(10, at);
    if (nl === -1) {
      sizeLine += buffer.toString('latin1', at);
      return;
    }
    sizeLine += buffer.toString('latin1', at, nl);
    at = nl + 1;
    const size = parseInt(sizeLine.trim(), 16);
    sizeLine = '';
    if (!Number.isFinite(size)) fail(1, 'bad chunk framing in the watch response');
    if (size === 0) {
      if (!finished) fail(1, `the server ended the watch after ${count.events} events`);
      return;
    }
    chunkLeft = size;
  }
}

const openTimer = failAfter(opts.timeout, () => 'the watch response');
const socket = net.connect({ host: url.hostname, port: Number(url.port || 80) }, () => {
  socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json\r\n\r\n`);
});
socket.on('data', (data) => {
  if (finished) return;
  if (inBody) {
    readBody(data);
    return;
  }
  head = Buffer.concat([head, data]);
  const end = head.indexOf('\r\n\r\n');
  if (end === -1) return;
  const headers = head.toString('latin1', 0, end);
  const status = Number(headers.split(' ')[1]);
  if (status !== 200) fail(1, `${opts.url}: HTTP ${status}`);
  if (!/^transfer-encoding:\s*chunked/im.test(headers)) fail(1, `${opts.url}: the watch response is not chunked`);
  clearTimeout(openTimer);
  inBody = true;
  writeProgress('ready', 0);
  readBody(head.subarray(end + 4));
});
socket.on('end', () => {
  if (!finished) fail(1, `the server closed the connection after ${count.events} events`);
});
socket.on('error', (error) => {
  if (!finished) fail(1, `${opts.url}: ${error.message}`);
});
finishOnSignal(finish);
pollCount(opts, () => !finished && progress.state === 'ready', finish);
