// BigInt decode of 1,000,000 Discord IDs: the package's `decode` against
// @sapphire/snowflake's `DiscordSnowflake.deconstruct`, in one run. Rounds
// alternate the contenders (the order flips every round), so that a change
// in the machine's load touches all alike; the median round of each is
// reported, with its ratio to deconstruct's.
//
// Both read the same IDs, drawn with a seeded generator over Discord's
// whole 64 bits (so almost all above 2^53, half at or above 2^63), from the
// same input: decimal text (what a JSON payload carries) or BigInt. Each
// contender's answers are summed into a checksum the run prints, so that
// no work is optimized away and both are seen to read the same values.
//
// Usage: node js/bench/decode.mjs [ROUNDS] [IDS]
//        (after `cd js && npm ci --ignore-scripts && node build.mjs`)

import { DiscordSnowflake } from "@sapphire/snowflake";

import { decode } from "../dist/esm/index.js";

const rounds = Number(process.argv[2] ?? 7);
const count = Number(process.argv[3] ?? 1_000_000);

// xorshift64*, seeded: the same IDs every run.
let state = 0x9e3779b97f4a7c15n;
const mask = (1n << 64n) - 1n;
function next() {
  state ^= state >> 12n;
  state ^= (state << 25n) & mask;
  state ^= state >> 27n;
  return (state * 0x2545f4914f6cdd1dn) & mask;
}
const bigints = Array.from({ length: count }, () => next());
const texts = bigints.map(String);

const contenders = [
  [
    "snowmint decode",
    (ids) => {
      let sum = 0;
      for (const id of ids) {
        const d = decode(id, "discord");
        sum += d.timestampMs + d.fields.worker + d.fields.process + d.fields.increment;
      }
      return sum;
    },
  ],
  [
    "snowmint decode + RFC 3339 time",
    (ids) => {
      let sum = 0;
      for (const id of ids) {
        const d = decode(id, "discord");
        sum += d.timestampMs + d.fields.worker + d.fields.process + d.fields.increment + d.time.length;
      }
      return sum;
    },
  ],
  [
    "@sapphire/snowflake deconstruct",
    (ids) => {
      let sum = 0;
      for (const id of ids) {
        const d = DiscordSnowflake.deconstruct(id);
        sum += Number(d.timestamp) + Number(d.workerId) + Number(d.processId) + Number(d.increment);
      }
      return sum;
    },
  ],
];

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`node ${process.version}, ${count} Discord IDs, ${rounds} rounds (median), ${new Date().toISOString()}`);
console.log("");
console.log("| input | contender | IDs per second | vs deconstruct |");
console.log("|---|---|---:|---:|");
for (const [input, ids] of [
  ["decimal text", texts],
  ["BigInt", bigints],
]) {
  const times = contenders.map(() => []);
  const sums = contenders.map(() => new Set());
  // One warm-up pass each.
  for (const [, run] of contenders) run(ids.slice(0, 100_000));
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const start = performance.now();
      sums[i].add(contenders[i][1](ids));
      times[i].push(performance.now() - start);
    }
  }
  const base = median(times[contenders.length - 1]);
  for (const [i, [name]] of contenders.entries()) {
    const ms = median(times[i]);
    const rate = Math.round(count / (ms / 1000));
    console.log(`| ${input} | ${name} | ${rate.toLocaleString("en-US")} | ${(base / ms).toFixed(2)}× |`);
  }
  // Both read the same time and fields (the time string adds its length).
  const [ours, , theirs] = sums.map((s) => [...s]);
  if (ours.length !== 1 || theirs.length !== 1 || ours[0] !== theirs[0]) {
    console.error(`checksums differ: ${ours} vs ${theirs}`);
    process.exit(1);
  }
}
