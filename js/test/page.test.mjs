// The calculator page's own answers (crates/snowmint-server/assets/
// local.js, on the package's reader) against a real `snowmint serve`: the
// page works them out in the browser and asks a node only for new IDs, so
// each request it sends must get the JSON, and the error body, the node
// would give. Also: the committed page bundle is built from its sources.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { writeFileSync } from "node:fs";
import { build } from "esbuild";
import { staticNode, tempDir } from "./support.mjs";

const js = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(js, "..");
const vectors = JSON.parse(readFileSync(join(repo, "vectors/vectors.json"), "utf8"));
/** A fixed now for inspect, so that both judge times alike. */
const NOW = "2025-06-15T00:00:00Z";

test("the committed page bundle is built from its sources (else: node js/build-page.mjs)", () => {
  execFileSync(process.execPath, [join(js, "build-page.mjs"), "--check"], { stdio: "inherit" });
});

/** local.js and the package, as one ESM module this test imports. */
async function localAnswers(t) {
  const dir = tempDir(t, "local");
  const result = await build({
    entryPoints: [join(repo, "crates/snowmint-server/assets/local.js")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: ["es2022"],
    write: false,
    logLevel: "warning",
  });
  const file = join(dir, "local.mjs");
  writeFileSync(file, result.outputFiles[0].text);
  return import(pathToFileURL(file).href);
}

/** Every request of the comparison: [path, params, body?]. */
function requests(presets) {
  const list = [];
  const families = new Set(presets.map((p) => p.name));
  for (const preset of presets) {
    const layout = preset.name;
    list.push(["/v1/layout", { layout }]);
    const ids = vectors.vectors.filter((v) => v.family === layout).map((v) => v.input);
    for (const id of ids.slice(0, 6)) list.push([`/v1/ids/${id}`, { layout }]);
    const id = ids[0];
    if (id !== undefined) {
      const big = BigInt(id);
      for (const [encoding, text] of [
        ["hex", big.toString(16)],
        ["base32", null],
        ["base58", null],
      ]) {
        if (text) list.push([`/v1/ids/${text}`, { layout, encoding }]);
        else list.push(["decoded", { layout, id, encoding }]);
      }
      list.push([`/v1/ids/${big.toString(16)}zz`, { layout }]);
      list.push(["encoded", { layout, id }]);
    }
    list.push([`/v1/ids/${preset.maxId + 1n}`, { layout }]);
    list.push([`/v1/ids/${preset.maxId}`, { layout }]);
    list.push(["/v1/ids/18446744073709551616", { layout }]);
    list.push(["/v1/range", { layout, from: String(preset.epochMs), to: String(preset.epochMs + 86_400_000) }]);
    list.push(["/v1/range", { layout, from: "2024-01-01T00:00:00Z", to: "2024-01-01T23:59:59.999Z" }]);
    list.push(["/v1/range", { layout, from: String(preset.epochMs - 1), to: String(preset.epochMs) }]);
    list.push(["/v1/range", { layout, from: "2024-01-02T00:00:00Z", to: "2024-01-01T00:00:00Z" }]);
    list.push(["/v1/range", { layout, from: "yesterday", to: "2024-01-01T00:00:00Z" }]);
    list.push(["/v1/range", { layout, to: "2024-01-01T00:00:00Z" }]);
    for (const [name, value] of [["datacenter", "abc"], ["machine", "-1"], ["sequence", "99999999"], ["datacenter", "1"], ["machine", "1"]]) {
      list.push(["/v1/encode", { layout, timestamp: "1700000000000", datacenter: "0", machine: "0", sequence: "0", [name]: value }]);
    }
    list.push(["/v1/encode", { layout, datacenter: "0", machine: "0", sequence: "0" }]);
    list.push(["/v1/encode", { layout, timestamp: "1700000000000", machine: "0", sequence: "0" }]);
    list.push(["/v1/encode", { layout, timestamp: String(preset.epochMs - 1), datacenter: "0", machine: "0", sequence: "0" }]);
    list.push(["/v1/encode", { layout, timestamp: "2023-11-14T22:13:20.123Z", datacenter: "0", machine: "0", sequence: "0" }]);
  }
  assert.ok(families.has("twitter") && families.has("discord"));
  list.push(["/v1/ids/1724551110457221119", {}]);
  list.push(["/v1/ids/17eed6190fcedfff", { layout: "twitter" }]);
  list.push(["/v1/ids/1FVPP347WXQZZ", { layout: "twitter" }]);
  list.push(["/v1/ids/51BRJMCGQge", { layout: "twitter" }]);
  list.push(["/v1/ids/51BRJMCGQge", { layout: "twitter", encoding: "base58" }]);
  list.push(["/v1/ids/abc", { layout: "twitter", encoding: "octal" }]);
  list.push(["/v1/ids/-1", { layout: "twitter" }]);
  list.push(["/v1/layout", { layout: "nosuch" }]);
  list.push(["/v1/layout", { layout: "41/5/5/12@2020-01-01T00:00:00Z" }]);
  list.push(["/v1/layout", { layout: "41/5/5/13" }]);
  list.push(["/v1/encode", { layout: "discord", timestamp: "1462015105796", worker: "1", process: "0", increment: "7" }]);
  list.push(["/v1/encode", { layout: "discord", timestamp: "1462015105796", worker: "1", process: "0", sequence: "7" }]);
  for (const { text } of vectors.texts) {
    list.push(["/v1/inspect", { now: NOW }, text]);
    list.push(["/v1/inspect", { now: NOW, top: "1" }, text]);
  }
  list.push(["/v1/inspect", { now: NOW, layout: "discord" }, "<@175928847299117063> 1724551110457221119"]);
  list.push(["/v1/inspect", { now: NOW, top: "0" }, "1724551110457221119"]);
  list.push(["/v1/inspect", { now: "soon" }, "1724551110457221119"]);
  list.push(["/v1/inspect", { now: NOW }, ""]);
  list.push(["/v1/inspect", { now: NOW, top: "abc" }, "1724551110457221119"]);
  list.push(["/v1/inspect", { now: NOW, layout: "nosuch" }, "1724551110457221119"]);
  list.push(["/v1/inspect", { now: NOW }, "1724551110457221119 ".repeat(10_001)]);
  list.push(["/v1/ids/1724551110457221119", { layout: "nosuch" }]);
  list.push(["/v1/ids/1724551110457221119", { layout: "sonyflake,10ms" }]);
  list.push(["/v1/range", { layout: "nosuch", from: "0", to: "1" }]);
  list.push(["/v1/encode", { layout: "nosuch", timestamp: "0" }]);
  list.push(["/v1/encode", { layout: "twitter", timestamp: "", datacenter: "0", machine: "0", sequence: "0" }]);
  list.push(["/v1/encode", { layout: "twitter", timestamp: "1700000000000", datacenter: "", machine: "0", sequence: "0" }]);
  list.push(["/v1/encode", { layout: "twitter", timestamp: "1700000000000", datacenter: " 1", machine: "0", sequence: "0" }]);
  list.push(["/v1/encode", { layout: "twitter", timestamp: "1700000000000", datacenter: "+1", machine: "0", sequence: "0" }]);
  list.push(["/v1/encode", { layout: "twitter", timestamp: "1700000000000", datacenter: "x".repeat(100), machine: "0", sequence: "0" }]);
  list.push(["/v1/encode", { layout: "twitter", timestamp: "1700000000000", datacenter: "99999999999999999999999999999999999999999", machine: "0", sequence: "0" }]);
  list.push(["/v1/encode", { layout: "twitter", timestamp: "17e11", datacenter: "0", machine: "0", sequence: "0" }]);
  list.push(["/v1/range", { layout: "twitter", from: "2023-11-14T22:13:20.5Z", to: "2023-11-14 22:13:21Z" }]);
  return list;
}

test("the page's local answers are a node's, request for request", async (t) => {
  const local = await localAnswers(t);
  const { PRESETS, formatId } = await import(pathToFileURL(join(js, "dist/esm/index.js")).href);
  const node = await staticNode(t, 3, 7);
  const ask = async (path, params, body) => {
    // The page leaves an empty value out of a request, and so does `answer`.
    const query = new URLSearchParams(Object.entries(params).filter(([, value]) => value !== "")).toString();
    const url = `${node.url}${path.split("/").map(encodeURIComponent).join("/")}${query ? `?${query}` : ""}`;
    const response = await fetch(url, body === undefined ? {} : { method: "POST", body, headers: { "Content-Type": "text/plain; charset=utf-8" } });
    return [response.status, await response.json()];
  };
  const mine = (path, params, body) => {
    try {
      return [200, local.answer(path, params, body)];
    } catch (error) {
      if (!(error instanceof local.LocalError)) throw error;
      return [400, { error: error.detail }];
    }
  };
  let compared = 0;
  for (let [path, params, body] of requests(PRESETS)) {
    if (path === "decoded") {
      path = `/v1/ids/${formatId(BigInt(params.id), params.encoding)}`;
      params = { layout: params.layout, encoding: params.encoding };
    } else if (path === "encoded") {
      // The fields the node decodes, built back.
      const [, decoded] = await ask(`/v1/ids/${params.id}`, { layout: params.layout });
      params = {
        layout: params.layout,
        timestamp: String(decoded.timestamp_ms),
        datacenter: String(decoded.datacenter),
        machine: String(decoded.machine),
        sequence: String(decoded.sequence),
      };
      path = "/v1/encode";
    }
    const what = `${path} ${JSON.stringify(params)}${body === undefined ? "" : ` ${JSON.stringify(body.slice(0, 60))}`}`;
    const [status, expected] = await ask(path, params, body);
    const [mineStatus, got] = mine(path, params, body);
    if (path === "/v1/layout" && status === 200) {
      // Years left depend on when each was asked.
      assert.ok(Math.abs(got.years_left - expected.years_left) <= 0.01, what);
      got.years_left = expected.years_left;
    }
    assert.equal(mineStatus === 200, status === 200, `${what}: the node answered ${status} ${JSON.stringify(expected)}, the page ${JSON.stringify(got)}`);
    assert.deepEqual(got, expected, what);
    compared += 1;
  }
  assert.ok(compared > 400, `${compared} requests compared`);
  t.diagnostic(`${compared} requests compared`);
});
