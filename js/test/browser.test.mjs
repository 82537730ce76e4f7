// The package in a real browser: headless Chromium (Debian's chromium and
// chromium-driver, driven over WebDriver) loads the ESM build into a page
// and, from there, reads and writes JSON with the helpers and gets IDs
// from a real node through the client. The node is the page's own origin,
// as the README says it must be: a small server here serves the page and
// the bundle, and passes /v1/ on to the node, as a reverse proxy would.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { eventually, freePort, staticNode, tempDir } from "./support.mjs";

const js = dirname(dirname(fileURLToPath(import.meta.url)));
const vectors = JSON.parse(readFileSync(join(js, "../vectors/vectors.json"), "utf8"));
const INSTALL = "apt-get install chromium chromium-driver (scripts/test does)";

/** The page, its bundle, and /v1/ passed on to `node`. */
async function origin(t, node) {
  const bundle = readFileSync(join(js, "dist/esm/index.js"));
  const server = createServer(async (request, response) => {
    if (request.url === "/") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end('<!doctype html><title>snowmint</title><script type="module">import * as s from "/snowmint.js"; window.snowmint = s;</script>');
    } else if (request.url === "/snowmint.js") {
      response.writeHead(200, { "content-type": "text/javascript" });
      response.end(bundle);
    } else if (request.url.startsWith("/v1/")) {
      const answer = await fetch(`${node}${request.url}`, { headers: { accept: request.headers.accept ?? "*/*" } });
      response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
      response.end(Buffer.from(await answer.arrayBuffer()));
    } else {
      response.writeHead(404).end();
    }
  });
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

/** A WebDriver session on headless Chromium; chromedriver (and Chromium with it) killed when `t` ends. */
async function browser(t) {
  const port = await freePort();
  const profile = tempDir(t, "chromium");
  const driver = spawn("chromedriver", [`--port=${port}`], { stdio: "ignore", detached: true });
  const failed = new Promise((_, reject) => driver.on("error", (e) => reject(new Error(`cannot run chromedriver (${e.code}): ${INSTALL}`))));
  failed.catch(() => {});
  t.after(() => {
    try {
      process.kill(-driver.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  });
  const base = `http://127.0.0.1:${port}`;
  const call = async (method, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`WebDriver ${method} ${path}: ${JSON.stringify(answer.value)}`);
    return answer.value;
  };
  await Promise.race([
    failed,
    eventually("chromedriver to listen", 30_000, async () => {
      try {
        return (await call("GET", "/status")).ready ? true : undefined;
      } catch {
        return undefined;
      }
    }),
  ]);
  const args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions", `--user-data-dir=${profile}`];
  const session = await call("POST", "/session", {
    capabilities: { alwaysMatch: { browserName: "chrome", "goog:chromeOptions": { binary: "/usr/bin/chromium", args } } },
  });
  const id = session.sessionId;
  return {
    goto: (url) => call("POST", `/session/${id}/url`, { url }),
    run: (script) => call("POST", `/session/${id}/execute/async`, { script, args: [] }),
  };
}

test("in headless Chromium: the ESM build reads JSON exactly, gets IDs from a node of the page's origin, and reads every vector", async (t) => {
  const node = await staticNode(t, 10, 3);
  const page = await origin(t, node.url);
  const chromium = await browser(t);
  await chromium.goto(`${page}/`);
  const result = await chromium.run(`
    const done = arguments[arguments.length - 1];
    (async () => {
      const s = await (async () => { while (!window.snowmint) await new Promise((r) => setTimeout(r, 10)); return window.snowmint; })();
      const text = '{"a": {"id": 18446744073709551615}, "ids": [9007199254740993, "1724551110457221119"], "n": 12345678901234567890}';
      const parsed = s.parseJSON(text);
      const revived = JSON.parse(text, s.idReviver({ as: "string" }));
      const client = new s.Client({ nodes: location.origin, prefetch: { batch: 200, maxAgeMs: 5000 } });
      const ids = [];
      for (let i = 0; i < 500; i++) ids.push(await client.nextId());
      ids.push(...(await client.nextIds(1000)));
      let refused;
      try { await new s.Client({ nodes: location.origin + "/nowhere", deadlineMs: 200 }).nextId(); } catch (e) { refused = [e.name, e instanceof s.UnavailableError, e.attempts[0].code]; }
      return {
        sourceAccess: s.hasSourceAccess(),
        parsed: [parsed.a.id.toString(), parsed.ids.map(String), typeof parsed.ids[0], parsed.n],
        revived: [revived.a.id, revived.ids],
        written: s.stringifyJSON({ id: 2n ** 63n }),
        ids: ids.map(String),
        types: [...new Set(ids.map((id) => typeof id))],
        refused,
        stats: client.stats(),
        // The reader, on the page's engine: every vector and text of the vectors file.
        vectors: VECTORS.vectors.map((v) => {
          try {
            if (s.PRESET_NAMES.includes(v.family) && /^[0-9]+$/.test(v.input)) {
              const d = s.decode(v.input, v.family);
              return [v.family, d.time, { id: d.id.toString(), ...d.fields }];
            }
            const r = s.decodeText(v.input, v.family);
            return [r.family, r.time, r.fields];
          } catch (e) {
            return [String(e)];
          }
        }),
        texts: VECTORS.texts.map(({ text }) =>
          s.inspect(text, { now: "2025-06-15T00:00:00Z" }).map((t) => [t.input, t.candidates[0].family, t.candidates[0].time])),
      };
    })().then(done, (e) => done({ error: String(e && e.stack || e) }));
  `.replaceAll("VECTORS", () => `(${JSON.stringify(vectors)})`));
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(result.parsed, ["18446744073709551615", ["9007199254740993", "1724551110457221119"], "bigint", 12345678901234567000]);
  assert.deepEqual(result.revived, ["18446744073709551615", ["9007199254740993", "1724551110457221119"]]);
  assert.equal(result.sourceAccess, true, "Chromium gives revivers the source text");
  assert.equal(result.written, '{"id":"9223372036854775808"}');
  assert.deepEqual(result.types, ["bigint"]);
  const ids = result.ids.map(BigInt);
  assert.equal(new Set(ids).size, 1500);
  for (const id of ids) {
    assert.equal((id >> 17n) & 31n, 10n, `${id} is datacenter 10's`);
    assert.equal((id >> 12n) & 31n, 3n, `${id} is machine 3's`);
  }
  assert.deepEqual(result.refused, ["UnavailableError", true, "http_404"]);
  assert.ok(result.stats.bufferHits > 0, JSON.stringify(result.stats));
  for (const [i, v] of vectors.vectors.entries()) {
    const [family, time, fields] = result.vectors[i];
    assert.equal(family, v.family, `${v.input}: ${family}`);
    assert.equal(time, v.time, v.input);
    for (const [name, value] of Object.entries(v.fields)) assert.strictEqual(fields[name], value, `${v.input} ${name}`);
  }
  assert.deepEqual(
    result.texts,
    vectors.texts.map(({ tokens }) => tokens.map((t) => [t.input, t.family, t.time])),
  );
});
