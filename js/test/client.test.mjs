// The client against real `snowmint serve` nodes started here: IDs exact
// and distinct, failover when a node dies, stops answering or is fenced
// (its refusal handed on with its code), a refused token, and prefetched
// IDs past their staleness limit never handed out.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import {
  Client,
  ConfigError,
  InvalidArgumentError,
  NodeError,
  RefusedError,
  UnauthenticatedError,
  UnavailableError,
} from "../dist/esm/index.js";
import { etcd, eventually, getJson, nodeOf, serve, staticNode, tempDir, timestampOf, tokenFile } from "./support.mjs";

const key = ({ datacenter, machine }) => `${datacenter}/${machine}`;

/**
 * Checks IDs as each node made them: every one distinct, from one of
 * `nodes`, and, within a run of one node, increasing, each ID of the same
 * millisecond exactly one more than the one before (the sequence, the low
 * bits that a double above 2^53 cannot hold).
 */
function assertExact(ids, nodes, seen = new Set()) {
  const allowed = new Set(nodes.map(key));
  let previous;
  let consecutive = 0;
  for (const id of ids) {
    assert.equal(typeof id, "bigint");
    assert.ok(id > 2n ** 53n, `${id} is an ID of today, above 2^53`);
    assert.ok(allowed.has(key(nodeOf(id))), `${id} comes from ${key(nodeOf(id))}, not one of ${[...allowed]}`);
    assert.ok(!seen.has(id), `${id} was handed out twice`);
    seen.add(id);
    if (previous !== undefined && key(nodeOf(previous)) === key(nodeOf(id)) && timestampOf(previous) === timestampOf(id)) {
      if (id > previous) {
        assert.equal(id - previous, 1n, `${previous} then ${id}: one sequence step apart`);
        consecutive++;
      }
    }
    previous = id;
  }
  return consecutive;
}

test("100,000 IDs from two nodes, with and without the buffer: distinct and exact", async (t) => {
  const [a, b] = await Promise.all([staticNode(t, 1, 2), staticNode(t, 1, 3)]);
  const nodes = [{ datacenter: 1, machine: 2 }, { datacenter: 1, machine: 3 }];
  const seen = new Set();
  let consecutive = 0;

  const direct = new Client({ nodes: [a.url, b.url], token: null });
  for (let i = 0; i < 24; i++) consecutive += assertExact(await direct.nextIds(2000), nodes, seen);
  const single = [];
  for (let i = 0; i < 2000; i++) single.push(await direct.nextId());
  consecutive += assertExact(single, nodes, seen);
  assert.equal(direct.stats().roundTrips, 24 + 2000);

  const buffered = new Client({ nodes: [a.url, b.url], token: null, prefetch: { batch: 4096, maxAgeMs: 60_000 } });
  const fromBuffer = [];
  for (let i = 0; i < 20_000; i++) fromBuffer.push(await buffered.nextId());
  consecutive += assertExact(fromBuffer, nodes, seen);
  for (let i = 0; i < 5; i++) consecutive += assertExact(await buffered.nextIds(4000), nodes, seen);
  consecutive += assertExact(await buffered.nextIds(10_000), nodes, seen);
  const stats = buffered.stats();
  assert.ok(stats.bufferHits > 20_000, JSON.stringify(stats));
  assert.equal(stats.staleDropped, 0);

  assert.equal(seen.size, 100_000);
  // Most neighbours share a millisecond: the exactness check above ran.
  assert.ok(consecutive > 50_000, `${consecutive} neighbours checked one sequence step apart`);
  const fromEach = new Map();
  for (const id of seen) fromEach.set(key(nodeOf(id)), (fromEach.get(key(nodeOf(id))) ?? 0) + 1);
  assert.equal(fromEach.size, 2, "both nodes served");
});

test("a node killed mid-run: every call still served, by the other node", async (t) => {
  const [a, b] = await Promise.all([staticNode(t, 2, 1), staticNode(t, 2, 2)]);
  for (const prefetch of [false, { batch: 500, maxAgeMs: 10_000 }]) {
    const client = new Client({ nodes: [a.url, b.url], token: null, prefetch });
    const seen = new Set();
    const ids = [];
    for (let i = 0; i < 400; i++) {
      if (i === 150 && prefetch === false) {
        const exited = new Promise((resolve) => a.child.once("exit", resolve));
        a.child.kill("SIGKILL");
        await exited;
      }
      const got = i % 2 === 0 ? [await client.nextId()] : await client.nextIds(97);
      ids.push(...got);
    }
    assertExact(ids, [{ datacenter: 2, machine: 1 }, { datacenter: 2, machine: 2 }], seen);
    assert.equal(seen.size, 200 + 200 * 97);
  }
  // The dead node's connections are refused: it is skipped, with backoff.
  const client = new Client({ nodes: [a.url, b.url], token: null });
  for (let i = 0; i < 20; i++) assertExact(await client.nextIds(10), [{ datacenter: 2, machine: 2 }]);
  assert.ok(client.stats().failovers >= 1, JSON.stringify(client.stats()));
  const alone = new Client({ nodes: [a.url], token: null, deadlineMs: 300 });
  const error = await alone.nextId().then(() => assert.fail("a dead node served"), (e) => e);
  assert.ok(error instanceof UnavailableError, String(error));
  assert.ok(error.attempts.length >= 1);
  for (const attempt of error.attempts) {
    assert.ok(attempt instanceof NodeError);
    assert.equal(attempt.code, "unreachable", attempt.message);
    assert.equal(attempt.node, a.url);
  }
});

test("a node that stops answering (SIGSTOP) is skipped after the per-call timeout", async (t) => {
  const [a, b] = await Promise.all([staticNode(t, 3, 1), staticNode(t, 3, 2)]);
  const client = new Client({ nodes: [a.url, b.url], token: null, callTimeoutMs: 200 });
  await client.nextIds(10);
  a.child.kill("SIGSTOP");
  t.after(() => a.child.kill("SIGCONT"));
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push(...(await client.nextIds(50)));
  assertExact(ids, [{ datacenter: 3, machine: 2 }]);
  assert.ok(client.stats().failovers >= 1, JSON.stringify(client.stats()));

  const alone = new Client({ nodes: [a.url], token: null, callTimeoutMs: 100, deadlineMs: 400 });
  const error = await alone.nextId().then(() => assert.fail("a stopped node served"), (e) => e);
  assert.ok(error instanceof UnavailableError, String(error));
  assert.ok(error.attempts.length >= 1);
  assert.ok(error.attempts.every((attempt) => attempt.code === "no_answer"), error.message);
  assert.match(error.message, /no answer within \d+ ms/);

  // With the buffer, a refill stuck on the stopped node does not hold the
  // caller: it asks the other node itself.
  const buffered = new Client({ nodes: [a.url, b.url], token: null, callTimeoutMs: 300, prefetch: { batch: 20, maxAgeMs: 10_000 } });
  const more = [];
  for (let i = 0; i < 200; i++) more.push(await buffered.nextId());
  assertExact(more, [{ datacenter: 3, machine: 2 }]);
});

test("a token the node does not accept ends the call at once, quoting no token", async (t) => {
  const dir = tempDir(t, "tokens");
  const good = "good-token-0123456789abcdef";
  const wrong = "wrong-token-0123456789abcdef";
  const path = tokenFile(dir, [good]);
  const [a, b] = await Promise.all([
    staticNode(t, 4, 1, ["--auth-token-file", path]),
    staticNode(t, 4, 2, ["--auth-token-file", path]),
  ]);
  for (const token of [wrong, null]) {
    const client = new Client({ nodes: [a.url, b.url], token });
    const error = await client.nextId().then(() => assert.fail("served without a good token"), (e) => e);
    assert.ok(error instanceof UnauthenticatedError, String(error));
    assert.equal(error.code, "unauthenticated");
    assert.equal(error.status, 401);
    assert.ok([a.url, b.url].includes(error.node));
    assert.ok(!error.message.includes(wrong) && !error.message.includes(good), error.message);
    assert.equal(client.stats().failovers, 0, "not retried on the other node");
  }
  const given = new Client({ nodes: [a.url, b.url], token: good });
  assertExact(await given.nextIds(100), [{ datacenter: 4, machine: 1 }, { datacenter: 4, machine: 2 }]);

  // From the environment when none is given.
  process.env.SNOWMINT_TOKEN = good;
  t.after(() => delete process.env.SNOWMINT_TOKEN);
  const fromEnv = new Client({ nodes: [a.url, b.url] });
  assertExact(await fromEnv.nextIds(100), [{ datacenter: 4, machine: 1 }, { datacenter: 4, machine: 2 }]);
  assert.ok(!String(fromEnv).includes(good), String(fromEnv));
  process.env.SNOWMINT_TOKEN = "short";
  assert.throws(() => new Client({ nodes: [a.url] }), (e) => e instanceof ConfigError && /SNOWMINT_TOKEN/.test(e.message) && !e.message.includes("short"));
  assert.throws(() => new Client({ nodes: [a.url], token: `${good} ` }), (e) => e instanceof ConfigError && !e.message.includes(good));
});

test("a fenced node's refusal is handed on with its code and retry-after; the other node serves", async (t) => {
  const coordinator = await etcd(t);
  const fenced = await serve(t, ["--coordinator", coordinator.url, "--fleet", "js", "--slots", "0-0", "--claim-ttl", "2s"]);
  const fine = await staticNode(t, 5, 5);
  await eventually("the coordinated node to hold its slot", 60_000, async () => {
    const [status] = await getJson(`${fenced.url}/readyz`);
    return status === 200 ? true : undefined;
  });
  const [, node] = await getJson(`${fenced.url}/v1/node`);
  const held = { datacenter: node.datacenter, machine: node.machine };
  assertExact(await new Client({ nodes: [fenced.url], token: null }).nextIds(10), [held]);

  // The coordinator stops answering: the node cannot renew its claim and
  // fences itself before the TTL ends.
  coordinator.child.kill("SIGSTOP");
  t.after(() => coordinator.child.kill("SIGCONT"));
  await eventually("the node to fence itself", 60_000, async () => {
    const [status] = await getJson(`${fenced.url}/readyz`);
    return status === 503 ? true : undefined;
  });

  // A deadline shorter than the node's Retry-After (at least 1 s).
  const alone = new Client({ nodes: [fenced.url], token: null, deadlineMs: 900 });
  const error = await alone.nextIds(5).then(() => assert.fail("a fenced node served"), (e) => e);
  assert.ok(error instanceof UnavailableError, String(error));
  assert.equal(error.code, "unavailable");
  const refusal = error.refusal;
  assert.ok(refusal instanceof RefusedError, error.message);
  assert.equal(refusal.code, "no_claim");
  assert.equal(refusal.status, 503);
  assert.equal(refusal.node, fenced.url);
  assert.ok(refusal.retryAfterMs >= 1000, `retry after ${refusal.retryAfterMs} ms`);
  assert.equal(error.retryAfterMs, refusal.retryAfterMs);
  assert.match(error.message, /no_claim: this node holds no slot/);
  // Retry-After is believed (within the backoff cap): the node is not
  // asked again before it.
  assert.equal(error.attempts.length, 1, error.message);

  const both = new Client({ nodes: [fenced.url, fine.url], token: null });
  const ids = [];
  for (let i = 0; i < 10; i++) ids.push(...(await both.nextIds(100)));
  assertExact(ids, [{ datacenter: 5, machine: 5 }]);
  assert.ok(both.stats().failovers >= 1, JSON.stringify(both.stats()));
});

test("prefetched IDs past their staleness limit are dropped, never handed out", async (t) => {
  const a = await staticNode(t, 6, 1);
  // A clock moved by hand: the buffer's view of time.
  let now = 1_000_000;
  const client = new Client({ nodes: [a.url], token: null, prefetch: { batch: 100, maxAgeMs: 50 }, now: () => now });
  const first = await client.nextId();
  const early = [first];
  for (let i = 0; i < 10; i++) early.push(await client.nextId());
  assert.equal(client.buffered, 89);
  assert.deepEqual(client.stats(), { bufferHits: 10, refills: 1, staleDropped: 0, failovers: 0, roundTrips: 1 });
  now += 50; // exactly the limit: still fresh
  early.push(await client.nextId());
  now += 1; // past it
  const later = await client.nextId();
  const stats = client.stats();
  assert.equal(stats.staleDropped, 88, JSON.stringify(stats));
  assert.equal(stats.roundTrips, 2);
  assert.ok(later > early[early.length - 1], "a new batch, made after the first");
  const lastOfFirstBatch = early[0] + 99n;
  assert.ok(later > lastOfFirstBatch, `${later} is not one of the first batch (up to ${lastOfFirstBatch})`);

  // On the real clock: every ID handed out was made at most maxAgeMs
  // before the call that got it (by its timestamp, on this machine's
  // clock, in whole milliseconds).
  const maxAgeMs = 20;
  const real = new Client({ nodes: [a.url], token: null, prefetch: { batch: 4096, maxAgeMs } });
  for (let round = 0; round < 30; round++) {
    const asked = Date.now();
    const id = round % 3 === 0 ? (await real.nextIds(3))[2] : await real.nextId();
    assert.ok(timestampOf(id) >= asked - maxAgeMs - 1, `ID made at ${timestampOf(id)}, asked at ${asked}`);
    if (round % 5 === 4) await new Promise((resolve) => setTimeout(resolve, maxAgeMs * 2));
  }
  assert.ok(real.stats().staleDropped > 0, JSON.stringify(real.stats()));
});

test("discovery: the nodes come from the application's lookup, and follow it", async (t) => {
  const [a, b] = await Promise.all([staticNode(t, 7, 1), staticNode(t, 7, 2)]);
  let found = [a.url];
  let lookups = 0;
  const client = new Client({
    discover: async () => {
      lookups++;
      return found;
    },
    discoverEveryMs: 20,
    token: null,
  });
  t.after(() => client.close());
  assertExact(await client.nextIds(10), [{ datacenter: 7, machine: 1 }]);
  found = [b.url];
  await eventually("discovery to find the second node", 10_000, () => (client.nodes.includes(b.url) && !client.nodes.includes(a.url) ? true : undefined));
  assertExact(await client.nextIds(10), [{ datacenter: 7, machine: 2 }]);
  assert.ok(lookups >= 2);
  client.close();
  await assert.rejects(client.nextId(), ConfigError);
});

/** An HTTP server on loopback that answers every request with `answer(request, response)`; closed when `t` ends. */
async function fakeNode(t, answer) {
  const server = createServer(answer);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sockets = new Set();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${server.address().port}`;
}

test("a node that answers something other than the API's answer is failed over, and said so", async (t) => {
  const real = await staticNode(t, 8, 1);
  const answers = [
    ["not JSON", "bad_answer", /answered 200 with a body that is not JSON/, (res) => res.end("<html>")],
    ["too few IDs", "bad_answer", /answered 200 with 1 IDs for 5 asked/, (res) => res.end('{"ids":["1"]}')],
    ["a number above 2^53", "bad_answer", /ID 4 that is neither a decimal string nor a safe integer/, (res) => res.end('{"ids":[1,2,3,4,9007199254740993]}')],
    ["a fraction", "bad_answer", /ID 0 that is neither/, (res) => res.end('{"ids":[1.5,2,3,4,5]}')],
    ["out of order", "bad_answer", /ID 1 out of order/, (res) => res.end('{"ids":["5","4","6","7","8"]}')],
    ["above 2^64-1", "bad_answer", /ID 4 out of order or out of range/, (res) => res.end('{"ids":["1","2","3","4","18446744073709551616"]}')],
    ["a body of 2 MiB", "bad_answer", /a body of more than 1048576 bytes/, (res) => res.end(`{"ids":[${'"1",'.repeat(500_000)}"2"]}`)],
    ["a streamed body of 2 MiB", "bad_answer", /a body of more than 1048576 bytes/, (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      for (let i = 0; i < 64; i++) res.write("x".repeat(32 * 1024));
      res.end();
    }],
    ["404 from something else", "http_404", /HTTP 404 http_404: answered HTTP 404/, (res) => res.writeHead(404).end("no")],
    ["a 500 with the API's body", "internal", /HTTP 500 internal: broken/, (res) => res.writeHead(500).end('{"error":{"code":"internal","message":"broken"}}')],
  ];
  for (const [what, code, message, answer] of answers) {
    const fake = await fakeNode(t, (req, res) => {
      assert.equal(req.url, "/v1/ids?count=5");
      answer(res);
    });
    const alone = new Client({ nodes: [fake], token: null, deadlineMs: 200 });
    const error = await alone.nextIds(5).then(() => assert.fail(`${what}: served`), (e) => e);
    assert.ok(error instanceof UnavailableError, `${what}: ${error}`);
    const [first] = error.attempts;
    assert.ok(first instanceof NodeError && !(first instanceof RefusedError), `${what}: ${first}`);
    assert.equal(first.code, code, `${what}: ${first.message}`);
    assert.match(first.message, message, what);
    assert.equal(first.node, fake);
    const both = new Client({ nodes: [fake, real.url], token: null });
    for (let i = 0; i < 4; i++) assertExact(await both.nextIds(5), [{ datacenter: 8, machine: 1 }]);
    assert.ok(both.stats().failovers >= 1, what);
  }
  // IDs as JSON numbers, which a node whose IDs all lie below 2^53 may send.
  const small = await fakeNode(t, (req, res) => res.end('{"ids":[1,2,9007199254740991]}'));
  assert.deepEqual(await new Client({ nodes: [small], token: null }).nextIds(3), [1n, 2n, 9007199254740991n]);

  // A refusal from something that is not a node keeps its status and Retry-After.
  const busy = await fakeNode(t, (req, res) => res.writeHead(503, { "retry-after": "7" }).end("busy"));
  const error = await new Client({ nodes: [busy], token: null, deadlineMs: 200 }).nextId().then(assert.fail, (e) => e);
  assert.ok(error.refusal instanceof RefusedError, error.message);
  assert.equal(error.refusal.code, "http_503");
  assert.equal(error.refusal.retryAfterMs, 7000);
});

test("with the buffer, a caller waiting on a refill stuck on a silent node asks another node itself", async (t) => {
  const fine = await staticNode(t, 8, 2);
  // Takes requests and never answers them.
  const silent = await fakeNode(t, () => {});
  const client = new Client({ nodes: [silent, fine.url], token: null, callTimeoutMs: 3000, prefetch: { batch: 100, maxAgeMs: 60_000 } });
  // The first call's own refill goes to the silent node (nodes are taken
  // in turn, from the first) and waits there for the per-call timeout.
  let firstDone = false;
  const first = client.nextId().then((id) => {
    firstDone = true;
    return id;
  });
  // The second waits on that refill for a quarter of the timeout, then
  // asks the next node itself, before the first call's timeout has failed
  // anything over.
  const second = await client.nextIds(5);
  assert.equal(firstDone, false, "the second call did not wait for the first one's timeout");
  assert.equal(client.stats().failovers, 0);
  assertExact(second, [{ datacenter: 8, machine: 2 }]);
  const id = await first;
  assertExact([id, ...second].sort((a, b) => (a < b ? -1 : 1)), [{ datacenter: 8, machine: 2 }]);
  assert.equal(client.stats().failovers, 1, "the first call's refill failed over after its timeout");
});

test("bad options and arguments: clear errors naming the value and the range", async () => {
  const nodes = ["http://127.0.0.1:1"];
  const config = (options, pattern) =>
    assert.throws(() => new Client({ token: null, ...options }), (e) => e instanceof ConfigError && e.code === "config" && pattern.test(e.message));
  config({ nodes: [] }, /no nodes/);
  config({ nodes: ["10.0.0.1:8080"] }, /not an http:\/\/ or https:\/\/ URL|not a URL/);
  config({ nodes: ["ftp://10.0.0.1"] }, /not an http:\/\/ or https:\/\/ URL/);
  config({ nodes: ["http://user:secret@10.0.0.1"] }, /credentials in the URL/);
  config({ nodes, prefetch: { batch: 0 } }, /prefetch.batch 0 is out of range \(1..=4096\)/);
  config({ nodes, prefetch: { batch: 4097 } }, /prefetch.batch 4097 is out of range \(1..=4096\)/);
  config({ nodes, prefetch: { maxAgeMs: 0 } }, /prefetch.maxAgeMs 0 is out of range/);
  config({ nodes, callTimeoutMs: 0.5 }, /callTimeoutMs 0.5 is out of range/);
  const client = new Client({ nodes: "http://127.0.0.1:1/, http://127.0.0.1:2/prefix/", token: null });
  assert.deepEqual(client.nodes, ["http://127.0.0.1:1", "http://127.0.0.1:2/prefix"]);
  for (const n of [0, -1, 1.5, Number.NaN, "3"]) {
    await assert.rejects(client.nextIds(n), (e) => e instanceof InvalidArgumentError && e.field === "n" && e.message.startsWith(`n ${n} is out of range`));
  }
});
