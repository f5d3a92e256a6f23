// What client_node_informer.mjs and kinformer_watch_probe.mjs share: option parsing, the progress
// file run.sh paces the churn by, the count of events after sync and its figures, and the way
// both fail. One process measures one client, so the state lives here, at module level.

import { renameSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

// Milliseconds (performance.now() differences) to the seconds every figure is given in.
export const seconds = (ms) => ms / 1000;

// The events counted after sync: how many, and performance.now() of the first and the latest.
export const count = { events: 0, first: 0, last: 0 };

// The --progress file and what was last written to it (state stays '' without a file).
export const progress = { file: '', state: '', events: -1 };

let scriptName = '';
let onFail = () => {};

// Names the script in its messages; cleanup runs before fail() exits (the probe kills its child).
export function setScript(name, cleanup = () => {}) {
  scriptName = name;
  onFail = cleanup;
}

// Parses "--name value" pairs over a copy of defaults, as a number where the default is one;
// --help prints usage. Checks of the values themselves are the caller's.
export function parseOptions(argv, defaults, usage) {
  const opts = { ...defaults };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(usage);
      process.exit(0);
    }
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    if (!(name in opts)) fail(2, `unknown option ${arg}\n${usage}`);
    if (i + 1 >= argv.length) fail(2, `${arg} needs a value`);
    const value = argv[++i];
    if (typeof opts[name] === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n) || n < 0) fail(2, `${arg} needs a non-negative number, not "${value}"`);
      opts[name] = n;
    } else {
      opts[name] = value;
    }
  }
  return opts;
}

// Wall-clock microseconds of the latest event, 0 before any: run.sh's drain timing compares it
// with its own clock (EPOCHREALTIME).
const lastEventWallUs = () => (count.last > 0 ? Math.round((performance.timeOrigin + count.last) * 1000) : 0);

// Writes "STATE EVENTS LAST_EVENT_WALL_US" to the progress file when it changed; by rename, so
// the driver never reads half a line.
export function writeProgress(state, events) {
  if (!progress.file || (state === progress.state && events === progress.events)) return;
  progress.state = state;
  progress.events = events;
  const tmp = `${progress.file}.tmp`;
  writeFileSync(tmp, `${state} ${events} ${lastEventWallUs()}\n`);
  renameSync(tmp, progress.file);
}

// Tells the driver (state failed) and stderr, and exits with code.
export function fail(code, message) {
  try {
    writeProgress('failed', progress.events < 0 ? 0 : progress.events);
  } catch {
    // the progress file is a courtesy; the exit code and message are what count
  }
  onFail();
  process.stderr.write(`${scriptName}: ${message}\n`);
  process.exit(code);
}

// Fails with code 3 after timeout seconds; what() says what was still awaited.
export function failAfter(timeout, what) {
  return setTimeout(() => fail(3, `timeout after ${timeout} s waiting for ${what()}`), timeout * 1000);
}

// Counts one event at now; true once wanted (> 0) events arrived.
export function countEvent(now, wanted) {
  count.events += 1;
  if (count.events === 1) count.first = now;
  count.last = now;
  return wanted > 0 && count.events >= wanted;
}

// Whether the count is whole: every wanted event arrived, or none was wanted.
export const countComplete = (wanted) => wanted === 0 || count.events >= wanted;

// The result's event figures, only when events were wanted.
export function eventFigures(wanted) {
  if (!(wanted > 0)) return {};
  const span = seconds(count.last - count.first);
  return {
    events: count.events,
    events_complete: countComplete(wanted),
    events_seconds: span,
    // N events span N-1 intervals: first to N-th.
    events_per_second: count.events > 1 && span > 0 ? (count.events - 1) / span : null,
  };
}

// Prints the result, the one JSON line on stdout, then exits: 4 when the count is not complete.
export function printResult(result, complete) {
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(complete ? 0 : 4));
}

// run.sh ends the count with SIGUSR2 once it has written every change and the stream is quiet.
export function finishOnSignal(finish) {
  process.on('SIGUSR2', () => {
    if (progress.state === 'ready') finish();
  });
}

// Every 50 ms while counting(): keeps the progress file current for the driver's pacing, and
// ends the count when no event arrived for opts.idle seconds.
export function pollCount(opts, counting, finish) {
  setInterval(() => {
    if (!counting()) return;
    writeProgress('ready', count.events);
    if (count.events > 0 && performance.now() - count.last > opts.idle * 1000) {
      process.stderr.write(`${scriptName}: no event for ${opts.idle} s after ${count.events} of ${opts.events}\n`);
      finish();
    }
  }, 50);
}
