// The client's nextId() rate against a local node, without and with the
// prefetch buffer, in one run: rounds alternate the two, so that a change
// in the machine's load touches both alike, and the median round of each
// is reported with the ratio between them.
//
// Usage: SNOWMINT_BIN=target/release/snowmint node js/bench/client.mjs [SECONDS_PER_ROUND] [ROUNDS]
//        (after `cd js && npm ci --ignore-scripts && node build.mjs`)

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Client } from "../dist/esm/index.js";

const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 5);
const bin = process.env.SNOWMINT_BIN;
if (!bin) {
  console.error("SNOWMINT_BIN is not set: build the node with `cargo build --release -p snowmint-cli` and set SNOWMINT_BIN=$PWD/target/release/snowmint");
  process.exit(2);
}

const home = mkdtempSync(join(tmpdir(), "snowmint-js-bench-"));
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SNOWMINT_")));
const node = spawn(bin, ["serve", "--listen", "127.0.0.1:0", "--datacenter", "0", "--machine", "1"], {
  env: { ...env, HOME: home },
  stdio: ["ignore", "pipe", "ignore"],
});
const url = await new Promise((resolve, reject) => {
  let out = "";
  node.stdout.on("data", (chunk) => {
    out += chunk;
    const found = /^listening on (http:\/\/\S+)$/m.exec(out);
    if (found) resolve(found[1]);
  });
  node.on("exit", (code) => reject(new Error(`snowmint serve exited (${code})`)));
});
node.stdout.resume();

/** `callers` loops of `nextId()` for `seconds`: IDs per second, and the client's counters. */
async function measure(options, callers) {
  const client = new Client({ nodes: [url], token: null, ...options });
  for (let i = 0; i < 2000; i++) await client.nextId();
  const end = performance.now() + seconds * 1000;
  let count = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        await client.nextId();
        count++;
      }
    }),
  );
  return { rate: count / ((performance.now() - start) / 1000), stats: client.stats() };
}

const modes = [
  ["no prefetch", {}],
  ["prefetch (batch 4096, maxAgeMs 100)", { prefetch: { batch: 4096, maxAgeMs: 100 } }],
];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
try {
  console.log(`node ${process.version}, ${seconds} s per round, ${rounds} rounds, ${url}`);
  for (const callers of [1, 16]) {
    const rates = modes.map(() => []);
    const last = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const m of order) {
        const { rate, stats } = await measure(modes[m][1], callers);
        rates[m].push(rate);
        last[m] = stats;
      }
    }
    const base = median(rates[0]);
    for (const [m, [name]] of modes.entries()) {
      const rate = median(rates[m]);
      console.log(
        `${callers} caller(s), ${name}: ${Math.round(rate).toLocaleString("en")} IDs/s (median; rounds ${rates[m].map(Math.round).join(", ")}), ${(rate / base).toFixed(1)}x; last round: ${JSON.stringify(last[m])}`,
      );
    }
  }
} finally {
  node.kill("SIGTERM");
  await new Promise((resolve) => node.once("exit", resolve));
  rmSync(home, { recursive: true, force: true });
}
