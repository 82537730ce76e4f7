// The lead of issue 36 for JavaScript peers that borrow future time, at
// full load: how far the timestamp of each ID runs ahead of the wall clock
// read right after the ID came back. Contenders, from the npm registry:
//
// - simple-flakeid (yitter's IdGenerator `SnowflakeIdv1`, its "drift"
//   algorithm, packaged from yitter's TypeScript), with its defaults:
//   6 worker bits, 6 sequence bits of which 0-4 are reserved (59 IDs per
//   millisecond), and up to 2000 milliseconds "overcost" (borrowed ahead)
//   before it waits for the clock;
// - tsid-ts (TSID, the algorithm of tsid-creator): 10 node bits, a
//   12-bit counter that starts at a random value each millisecond and,
//   when it overflows, moves the time on by one millisecond;
// - @sapphire/snowflake, which reads the clock on every call and never
//   borrows (its increment wraps instead), for reference.
//
// Each runs alone in this one thread, asked for IDs as fast as it answers,
// for S seconds per round; after every Nth ID the clock is read once
// (Date.now()) and the ID's millisecond compared with it. Date.now() is a
// whole millisecond (rounded down), so a lead of L ms is one of more than
// L - 1 and at most L; a lead above 0 is found exactly (a millisecond that
// starts after the reading rounded down starts after the reading).
//
// Usage: node js/bench/lead.mjs [SECONDS] [ROUNDS] [EVERY]
//        (after `cd js && npm ci --ignore-scripts`)

import fs from "node:fs";
import os from "node:os";

import { Snowflake } from "@sapphire/snowflake";
import { SnowflakeIdv1 } from "simple-flakeid";
import { TSIDGenerator } from "tsid-ts";

/** The version of an installed package, from its package.json. */
const versionOf = (name) =>
  JSON.parse(fs.readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url)))
    .version;
/** Argument `index` as a number in `low..=high` (whole unless `fraction`). */
function argument(index, name, fallback, low, high, fraction = false) {
  const text = process.argv[index];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!(value >= low && value <= high) || (!fraction && !Number.isInteger(value))) {
    console.error(`error: ${name} ${text} is out of range (${low}..=${high})`);
    process.exit(2);
  }
  return value;
}
const seconds = argument(2, "SECONDS", 5, 0.1, 60, true);
const rounds = argument(3, "ROUNDS", 3, 1, 20);
const every = argument(4, "EVERY", 16, 1, 65536);

const EPOCH_2020 = 1577836800000n; // yitter's and TSID's default epoch
const TWITTER_EPOCH = 1288834974657n;

const contenders = [
  {
    name: "yitter `SnowflakeIdv1` (simple-flakeid)",
    version: versionOf("simple-flakeid"),
    ceiling: 59_000, // sequence 5..=63 per millisecond
    make() {
      const generator = new SnowflakeIdv1({ workerId: 1 });
      return () => generator.NextBigId();
    },
    // Timestamp above 6 worker and 6 sequence bits, ms since 2020.
    unitStart: (id) => Number((id >> 12n) + EPOCH_2020),
  },
  {
    name: "TSID `TSIDGenerator` (tsid-ts)",
    version: versionOf("tsid-ts"),
    ceiling: 4_096_000, // 12 counter bits per millisecond
    make() {
      const generator = new TSIDGenerator(1);
      return () => generator.create().number;
    },
    unitStart: (id) => Number((BigInt(id) >> 22n) + EPOCH_2020),
  },
  {
    name: "@sapphire/snowflake `Snowflake`",
    version: versionOf("@sapphire/snowflake"),
    ceiling: 4_096_000,
    make() {
      const generator = new Snowflake(TWITTER_EPOCH);
      return () => generator.generate();
    },
    unitStart: (id) => Number((id >> 22n) + TWITTER_EPOCH),
  },
];

/** One round: IDs for `seconds`, the lead of every `every`-th. */
function round(contender) {
  const next = contender.make();
  const leads = [];
  let made = 0;
  const began = performance.now();
  const end = began + seconds * 1000;
  let now = began;
  while (now < end) {
    for (let i = 1; i < every; i++) next();
    const id = next();
    const clock = Date.now();
    made += every;
    leads.push(Math.max(0, contender.unitStart(id) - clock));
    now = performance.now();
  }
  return { made, wall: (performance.now() - began) / 1000, leads };
}

function quantile(sorted, q) {
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

const thousands = (n) => Math.round(n).toLocaleString("en-US");
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");

const loadBefore = load();
const results = [];
for (let r = 1; r <= rounds; r++) {
  // Round by round, so that load from elsewhere falls on all alike.
  for (const contender of contenders) {
    console.error(`round ${r}: ${contender.name}`);
    const result = round(contender);
    let entry = results.find((e) => e.contender === contender);
    if (!entry) results.push((entry = { contender, made: 0, wall: 0, leads: [], rates: [] }));
    entry.made += result.made;
    entry.wall += result.wall;
    entry.rates.push(result.made / result.wall);
    for (const lead of result.leads) entry.leads.push(lead);
  }
}

console.log(
  `Run of ${new Date().toISOString()} on ${os.cpus()[0]?.model ?? "?"}, ${os.availableParallelism?.() ?? os.cpus().length} cores available, Node ${process.versions.node}.`,
);
console.log(`Load average before: ${loadBefore}; after: ${load()}.`);
console.log(
  `${rounds} rounds of ${seconds} s per contender, one thread; the clock read after every ${every}th ID (Date.now(), whole ms).`,
);
console.log();
console.log(
  "| contender | version | IDs/s by the wall clock, median round (× its ceiling) | IDs sampled | share with a lead > 0 | p99 lead, ms | p99.9 lead, ms | max lead, ms |",
);
console.log("|---|---|--:|--:|--:|--:|--:|--:|");
for (const { contender, leads, rates } of results) {
  const sorted = Float64Array.from(leads).sort();
  const ahead = leads.filter((lead) => lead > 0).length;
  rates.sort((a, b) => a - b);
  const rate = rates[Math.floor(rates.length / 2)];
  console.log(
    `| ${contender.name} | ${contender.version} | ${thousands(rate)} (${(rate / contender.ceiling).toFixed(2)} ×) | ${thousands(leads.length)} | ${((ahead / leads.length) * 100).toFixed(2)} % | ${quantile(sorted, 0.99)} | ${quantile(sorted, 0.999)} | ${sorted[sorted.length - 1]} |`,
  );
}
