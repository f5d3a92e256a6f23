// The soak's webhook receiver. kinformerd POSTs batches of deltas here
// ([{"type","key","resourceVersion","object"}, ...]); they are folded into key -> resourceVersion,
// as a consumer's cache would be. GET /state answers that map, GET /stats the counts.
// Prints "listening on URL" first.
import http from 'node:http';

const state = new Map();
let posts = 0;
let deltas = 0;
let rejected = 0;

function fold(batch) {
  for (const d of batch) {
    if (String(d.type).toLowerCase() === 'deleted') state.delete(d.key);
    else state.set(d.key, d.resourceVersion);
    ++deltas;
  }
}

function answer(res, code, body) {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  if (req.method === 'POST') {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let batch;
      try {
        batch = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (e) {
        ++rejected;
        return answer(res, 400, { error: `not JSON: ${e.message}` });
      }
      if (!Array.isArray(batch)) {
        ++rejected;
        return answer(res, 400, { error: 'not an array of deltas' });
      }
      fold(batch);
      ++posts;
      answer(res, 200, {});
    });
    return;
  }
  if (req.url === '/state') return answer(res, 200, Object.fromEntries(state));
  if (req.url === '/stats') return answer(res, 200, { posts, deltas, rejected, objects: state.size });
  answer(res, 404, {});
});

server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
