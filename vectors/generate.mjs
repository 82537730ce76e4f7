#!/usr/bin/env node
// Writes snowmint's known-answer vectors (vectors/vectors.json), or with
// --check compares them with the file and fails on any difference.
//
//   node generate.mjs [--check] PATH/TO/vectors.json
//
// Run it where the packages of vectors/package.json are installed:
// crates/snowmint/tests/vectors_sources.rs copies this script and the
// package files into target/ and runs `npm ci` there. Nothing here reads
// snowmint's code or output. Each vector comes from one of three kinds of
// source, named in its "source":
//
// - "published:...": an example printed in a specification or a vendor's
//   documentation, copied with its answer;
// - "layout:...": computed here, with BigInt, from the family's published
//   layout (its epoch, widths and alphabet, written out below);
// - "npm:...": made or read by a well-kept implementation, and checked
//   against the layout computation (the two must agree, or this fails).
//
// The inputs are drawn from a seeded generator, so the file is the same on
// every run.

import { readFileSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

import { TID } from "@atproto/common-web";
import { DiscordSnowflake, TwitterSnowflake } from "@sapphire/snowflake";
import { ObjectId } from "bson";
import KSUID from "ksuid";
import { decodeTime } from "ulid";
import * as uuid from "uuid";

const VERSION = 1;
// The end of the window random times are drawn from (2025-06-15T15:06:40Z):
// fixed, so that the file does not change with the day it is made.
const UNTIL_MS = 1_750_000_000_000n;

// ---------------------------------------------------------------- sources

const sources = {
  "published:discord-docs": {
    kind: "published",
    title: "Discord Developer Documentation, Reference, Snowflakes: the example ID",
    url: "https://discord.com/developers/docs/reference#snowflakes",
  },
  "published:twitter-docs": {
    kind: "published",
    title: "X (Twitter) developer documentation, Tweet object and v2 example payloads",
    url: "https://developer.x.com/en/docs/twitter-api/v1/data-dictionary/object-model/tweet",
  },
  "published:ulid-spec": {
    kind: "published",
    title: "ULID specification and its JavaScript reference implementation's README",
    url: "https://github.com/ulid/spec",
  },
  "published:rfc9562": {
    kind: "published",
    title: "RFC 9562, Universally Unique IDentifiers, Appendix A (test vectors)",
    url: "https://www.rfc-editor.org/rfc/rfc9562#appendix-A",
  },
  "published:mongodb-manual": {
    kind: "published",
    title: "MongoDB manual, ObjectId",
    url: "https://www.mongodb.com/docs/manual/reference/method/ObjectId/",
  },
  "published:ksuid-readme": {
    kind: "published",
    title: "segmentio/ksuid README (ksuid -f inspect)",
    url: "https://github.com/segmentio/ksuid",
  },
  "published:atproto-tid": {
    kind: "published",
    title: "AT Protocol specification, Timestamp Identifiers (TID)",
    url: "https://atproto.com/specs/tid",
  },
  "published:tsid-creator": {
    kind: "published",
    title: "f4b6a3/tsid-creator README",
    url: "https://github.com/f4b6a3/tsid-creator",
  },
  "layout:twitter": {
    kind: "layout",
    title: "Twitter Snowflake: 41 bits of ms since 1288834974657, 5 datacenter, 5 machine, 12 sequence",
    url: "https://github.com/twitter-archive/snowflake/tree/snowflake-2010",
  },
  "layout:discord": {
    kind: "layout",
    title: "Discord: 42 bits of ms since 1420070400000, 5 worker, 5 process, 12 increment",
    url: "https://discord.com/developers/docs/reference#snowflakes",
  },
  "layout:ulid": {
    kind: "layout",
    title: "ULID: 48 bits of Unix ms, 80 random bits, 26 Crockford base32 characters",
    url: "https://github.com/ulid/spec",
  },
  "layout:misskey": {
    kind: "layout",
    title: "Misskey aid (8 base36 of ms since 2000-01-01, 2 noise) and aidx (8 + 4 node + 4 counter)",
    url: "https://github.com/misskey-dev/misskey/tree/develop/packages/backend/src/misc/id",
  },
  "layout:tsid": {
    kind: "layout",
    title: "TSID: 42 bits of ms since 2020-01-01, 22 bits of node (10 by default) and counter (12), 13 Crockford base32 or a 64-bit integer",
    url: "https://github.com/f4b6a3/tsid-creator",
  },
  "layout:instagram": {
    kind: "layout",
    title: "Instagram: 41 bits of ms since 1314220021721, 13 shard, 10 sequence (the engineering post's PL/pgSQL function)",
    url: "https://instagram-engineering.com/sharding-ids-at-instagram-1cf5a71e5a5c",
  },
  "layout:mastodon": {
    kind: "layout",
    title: "Mastodon: 48 bits of Unix ms, 16 bits of sequence data (lib/mastodon/snowflake.rb)",
    url: "https://github.com/mastodon/mastodon/blob/main/lib/mastodon/snowflake.rb",
  },
  "layout:sonyflake": {
    kind: "layout",
    title: "Sonyflake v1: 39 bits of 10 ms since 2014-09-01, 8 sequence, 16 machine",
    url: "https://github.com/sony/sonyflake",
  },
  "layout:sonyflake-v2": {
    kind: "layout",
    title: "Sonyflake v2 defaults: 39 bits of 10 ms since 2025-01-01, 8 sequence, 16 machine",
    url: "https://github.com/sony/sonyflake/tree/master/v2",
  },
  "layout:baidu": {
    kind: "layout",
    title: "Baidu uid-generator DefaultUidGenerator: sign bit, 28 bits of seconds since 2016-05-20 (UTC+8), 22 worker, 13 sequence",
    url: "https://github.com/baidu/uid-generator",
  },
  "layout:hazelcast": {
    kind: "layout",
    title: "Hazelcast Flake ID generator defaults: 41 bits of ms since 2018-01-01, 6 sequence, 16 node id",
    url: "https://docs.hazelcast.com/hazelcast/latest/data-structures/flake-id-generator",
  },
  "layout:yitter": {
    kind: "layout",
    title: "yitter/IdGenerator defaults: ms since 1582136402000 above 6 worker and 6 sequence bits, 63 bits in all",
    url: "https://github.com/yitter/IdGenerator",
  },
  "layout:cosid": {
    kind: "layout",
    title: "CosId MillisecondSnowflakeId: 41 bits of ms since 1577203200000, 10 machine, 12 sequence; SafeJavaScriptSnowflakeId: 41 / 3 / 9",
    url: "https://github.com/Ahoo-Wang/CosId",
  },
  "layout:leaf": {
    kind: "layout",
    title: "Meituan Leaf, snowflake mode: 41 bits of ms since 1288834974657, 10 worker, 12 sequence",
    url: "https://github.com/Meituan-Dianping/Leaf",
  },
  "layout:linkedin": {
    kind: "layout",
    title: "LinkedIn post and activity IDs: the top 41 of 63 bits are Unix ms (as unfurl reads them)",
    url: "https://github.com/Ollie-Boyd/Linkedin-post-timestamp-extractor",
  },
  "layout:tiktok": {
    kind: "layout",
    title: "TikTok video IDs: the top 31 of 63 bits are Unix seconds (as unfurl reads them)",
    url: "https://github.com/obsidianforensics/unfurl",
  },
  "layout:safe-js-10ms": {
    kind: "layout",
    title: "snowmint's JavaScript-safe layout as documented: 39 bits of 10 ms since 2025-01-01, 6 machine, 8 sequence, 53 bits in all",
    url: "https://github.com/snowmint/snowmint/blob/main/docs/families.md",
  },
  "layout:uuid": {
    kind: "layout",
    title: "RFC 9562's field layouts (versions without a time)",
    url: "https://www.rfc-editor.org/rfc/rfc9562",
  },
};
const npm = (name) => {
  const key = `npm:${name}`;
  if (!sources[key]) {
    const version = JSON.parse(
      readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url)),
    ).version;
    sources[key] = { kind: "implementation", package: name, version };
  }
  return key;
};

// ----------------------------------------------------------------- helpers

/** A seeded 64-bit generator (splitmix64), so that every run draws alike. */
function splitmix(seed) {
  let state = BigInt.asUintN(64, seed);
  return () => {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  };
}
const next64 = splitmix(0x736e6f776d696e74n); // "snowmint"
const below = (n) => next64() % n;
const bits = (n) => {
  let value = 0n;
  for (let have = 0n; have < n; have += 64n) value = (value << 64n) | next64();
  return value & ((1n << n) - 1n);
};
const between = (lo, hi) => lo + below(hi - lo + 1n);

const SECOND_NS = 1_000_000_000n;
/** RFC 3339 in UTC with the fractional digits the unit needs. */
function rfc3339(unixNs, unitNs) {
  let second = unixNs / SECOND_NS;
  let fraction = unixNs % SECOND_NS;
  if (fraction < 0n) {
    second -= 1n;
    fraction += SECOND_NS;
  }
  const iso = new Date(Number(second) * 1000).toISOString();
  const whole = iso.slice(0, iso.lastIndexOf("."));
  let digits = 9;
  for (let unit = unitNs; digits > 0 && unit % 10n === 0n; unit /= 10n) digits -= 1;
  if (digits === 0) return `${whole}Z`;
  const shown = (fraction / 10n ** BigInt(9 - digits)).toString().padStart(digits, "0");
  return `${whole}.${shown}Z`;
}
const MS = 1_000_000n;
const msTime = (ms) => rfc3339(ms * MS, MS);
const secondTime = (s) => rfc3339(s * SECOND_NS, SECOND_NS);

/** A field value as readings write it: numbers below 2^53, else text. */
const num = (n) => (n < 2n ** 53n ? Number(n) : n.toString());
const hex = (n, digits) => n.toString(16).padStart(digits, "0");

function encode(value, alphabet, length) {
  const radix = BigInt(alphabet.length);
  let text = "";
  for (let i = 0; i < length; i++) {
    text = alphabet[Number(value % radix)] + text;
    value /= radix;
  }
  return text;
}
function decode(text, alphabet) {
  const radix = BigInt(alphabet.length);
  let value = 0n;
  for (const c of text) {
    const digit = alphabet.indexOf(c);
    if (digit < 0) throw new Error(`${c} not in ${alphabet}`);
    value = value * radix + BigInt(digit);
  }
  return value;
}
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SORTABLE = "234567abcdefghijklmnopqrstuvwxyz";

function agree(what, ours, theirs) {
  if (!isDeepStrictEqual(ours, theirs)) {
    throw new Error(`${what}: the layout says ${JSON.stringify(ours)}, the implementation ${JSON.stringify(theirs, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`);
  }
}

const vectors = [];
function vector(family, input, time, fields, source, tags = []) {
  const entry = { family, input, time, fields, source };
  if (tags.length) entry.tags = tags;
  vectors.push(entry);
}

// ------------------------------------------------- Twitter and Discord

const TWITTER = { name: "twitter", epoch: 1288834974657n, timeBits: 41n, names: ["datacenter", "machine", "sequence"] };
const DISCORD = { name: "discord", epoch: 1420070400000n, timeBits: 42n, names: ["worker", "process", "increment"] };
// Both: time above 5 + 5 + 12 bits.
function snowflake(layout, id) {
  const ms = (id >> 22n) + layout.epoch;
  const [high, low, seq] = layout.names;
  return {
    time: msTime(ms),
    fields: { id: id.toString(), [high]: num((id >> 17n) & 31n), [low]: num((id >> 12n) & 31n), [seq]: num(id & 4095n) },
    ms,
  };
}
function checkSapphire(layout, id, read) {
  const sapphire = layout === TWITTER ? TwitterSnowflake : DiscordSnowflake;
  const parts = sapphire.deconstruct(id);
  const [high, low, seq] = layout.names;
  agree(`${layout.name} ${id}`, [read.ms, BigInt(read.fields[high]), BigInt(read.fields[low]), BigInt(read.fields[seq])], [parts.timestamp, parts.workerId, parts.processId, parts.increment]);
}
function snowflakeVector(layout, id, source, tags = []) {
  const read = snowflake(layout, id);
  if (source.startsWith("npm:")) checkSapphire(layout, id, read);
  vector(layout.name, id.toString(), read.time, read.fields, source, tags);
}

function snowflakes(layout, count) {
  const sapphire = npm("@sapphire/snowflake");
  for (let i = 0; i < count; i++) {
    const ms = between(layout.epoch, UNTIL_MS) - layout.epoch;
    const id = (ms << 22n) | bits(22n);
    snowflakeVector(layout, id, sapphire);
  }
  // The traps: around 2^53 (where JavaScript numbers stop being exact),
  // and the largest ID a signed 64-bit integer holds, at the layout's last
  // instant for Twitter.
  for (const id of [2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n]) {
    snowflakeVector(layout, id, sapphire, ["2^53"]);
  }
  snowflakeVector(layout, 2n ** 63n - 1n, sapphire, layout === TWITTER ? ["last-instant", "2^63-1"] : ["2^63-1"]);
  // Discord's IDs are unsigned 64-bit: at and above 2^63 (from 2084-09)
  // they are still IDs, up to the layout's last instant.
  if (layout === DISCORD) {
    snowflakeVector(layout, 2n ** 63n, sapphire, ["2^63"]);
    snowflakeVector(layout, 2n ** 63n + bits(22n), sapphire, ["2^63"]);
    snowflakeVector(layout, 2n ** 64n - 1n, sapphire, ["last-instant", "2^64-1"]);
  }
  // IDs that a tool dividing a floating-point ID by 2^22 reads 1 ms late:
  // the double nearest the ID lies in the next millisecond.
  let found = 0;
  while (found < 4) {
    const ms = between(layout.epoch, UNTIL_MS) - layout.epoch;
    const id = (ms << 22n) | ((1n << 22n) - 1n - below(64n));
    if (BigInt(Math.floor(Number(id) / 2 ** 22)) === ms + 1n) {
      snowflakeVector(layout, id, sapphire, ["float-1ms-late"]);
      found++;
    }
  }
}

// Discord's documentation: 175928847299117063 is 2016-04-30T11:18:25.796Z,
// worker 1, process 0, increment 7.
vector("discord", "175928847299117063", "2016-04-30T11:18:25.796Z", { id: "175928847299117063", worker: 1, process: 0, increment: 7 }, "published:discord-docs");
agree("discord docs", snowflake(DISCORD, 175928847299117063n).time, "2016-04-30T11:18:25.796Z");
// Twitter's documentation gives these tweets' created_at to the second.
for (const [id, second] of [
  [1050118621198921728n, "2018-10-10T20:19:24"],
  [1307025659294674945n, "2020-09-18T18:36:15"],
]) {
  const read = snowflake(TWITTER, id);
  agree(`twitter docs ${id}`, read.time.slice(0, 19), second);
  vector("twitter", id.toString(), read.time, read.fields, "published:twitter-docs");
}
snowflakes(TWITTER, 40);
snowflakes(DISCORD, 40);

// ------------------------------------ the other families of integer IDs

// Each as its source publishes it: the epoch (Unix ms), the time unit (ns),
// and the fields below the time, top first, with their widths. The time
// field takes the bits the others leave of `bits`.
const SECOND = 1_000n;
const FAMILIES = [
  { name: "instagram", epoch: 1314220021721n, unit: MS, bits: 64n, fields: [["shard", 13n], ["sequence", 10n]], from: 1314220021721n },
  { name: "mastodon", epoch: 0n, unit: MS, bits: 64n, fields: [["sequence_data", 16n]], from: 1_458_086_400_000n },
  { name: "sonyflake", epoch: 1_409_529_600_000n, unit: 10n * MS, bits: 63n, fields: [["sequence", 8n], ["machine", 16n]], from: 1_409_529_600_000n },
  { name: "sonyflake-v2", epoch: 1_735_689_600_000n, unit: 10n * MS, bits: 63n, fields: [["sequence", 8n], ["machine", 16n]], from: 1_735_689_600_000n },
  { name: "baidu", epoch: 1_463_673_600_000n, unit: SECOND * MS, bits: 63n, fields: [["worker_id", 22n], ["sequence", 13n]], from: 1_463_673_600_000n },
  { name: "hazelcast", epoch: 1_514_764_800_000n, unit: MS, bits: 63n, fields: [["sequence", 6n], ["node_id", 16n]], from: 1_514_764_800_000n },
  { name: "tsid", epoch: 1_577_836_800_000n, unit: MS, bits: 64n, fields: [["node", 10n], ["counter", 12n]], from: 1_577_836_800_000n },
  { name: "yitter", epoch: 1_582_136_402_000n, unit: MS, bits: 63n, fields: [["worker_id", 6n], ["sequence", 6n]], from: 1_582_136_402_000n },
  { name: "cosid", epoch: 1_577_203_200_000n, unit: MS, bits: 63n, fields: [["machine", 10n], ["sequence", 12n]], from: 1_577_203_200_000n },
  { name: "cosid-safe-js", epoch: 1_577_203_200_000n, unit: MS, bits: 53n, fields: [["machine", 3n], ["sequence", 9n]], from: 1_577_203_200_000n },
  { name: "leaf", epoch: 1288834974657n, unit: MS, bits: 63n, fields: [["worker_id", 10n], ["sequence", 12n]], from: 1_483_228_800_000n },
  { name: "linkedin", epoch: 0n, unit: MS, bits: 63n, fields: [["rest", 22n]], from: 1_051_142_400_000n },
  { name: "tiktok", epoch: 0n, unit: SECOND * MS, bits: 63n, fields: [["rest", 32n]], from: 1_472_688_000_000n },
  { name: "safe-js-10ms", epoch: 1_735_689_600_000n, unit: 10n * MS, bits: 53n, fields: [["machine", 6n], ["sequence", 8n]], from: 1_735_689_600_000n },
];
const lowBits = (family) => family.fields.reduce((sum, [, width]) => sum + width, 0n);
/** Reads `id` in `family`: its time (RFC 3339 at the unit) and fields. */
function readFamily(family, id) {
  const low = lowBits(family);
  const units = id >> low;
  const fields = { id: id.toString() };
  let shift = low;
  for (const [name, width] of family.fields) {
    shift -= width;
    fields[name] = num((id >> shift) & ((1n << width) - 1n));
  }
  return { time: rfc3339(family.epoch * MS + units * family.unit, family.unit), fields, units };
}
function familyVector(family, id, tags = []) {
  const read = readFamily(family, id);
  vector(family.name, id.toString(), read.time, read.fields, `layout:${family.name === "cosid-safe-js" ? "cosid" : family.name}`, tags);
}
for (const family of FAMILIES) {
  const low = lowBits(family);
  const maxUnits = (1n << (family.bits - low)) - 1n;
  const maxId = (1n << family.bits) - 1n;
  const unitsAt = (ms) => ((ms - family.epoch) * MS) / family.unit;
  const lastUnits = unitsAt(UNTIL_MS) < maxUnits ? unitsAt(UNTIL_MS) : maxUnits;
  // Times drawn from when the family began to 2025 (or its last instant).
  for (let i = 0; i < 14; i++) {
    const units = between(unitsAt(family.from), lastUnits);
    familyVector(family, (units << low) | bits(low));
  }
  // Its first and last instants.
  familyVector(family, (unitsAt(family.from) << low) | 1n, unitsAt(family.from) === 0n ? ["first-instant"] : []);
  familyVector(family, (maxUnits << low) | bits(low), ["last-instant"]);
  familyVector(family, maxId, ["last-instant", family.bits === 64n ? "2^64-1" : family.bits === 63n ? "2^63-1" : "2^53-1"]);
  // Around 2^53, where JavaScript numbers stop being exact.
  for (const id of [2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n]) {
    if (id <= maxId && id >> low >= unitsAt(family.from)) familyVector(family, id, ["2^53"]);
  }
  // At and above 2^63 for the families of 64 bits.
  if (family.bits === 64n) familyVector(family, 2n ** 63n + bits(low), ["2^63"]);
  // IDs that a tool dividing a floating-point ID by 2^low reads one unit
  // late, where the family's IDs are past 2^53 by then.
  if (family.unit === MS && (lastUnits << low) > 2n ** 55n) {
    let found = 0;
    while (found < 2) {
      const units = between(unitsAt(family.from), lastUnits);
      const id = (units << low) | ((1n << low) - 1n - below(8n));
      if (BigInt(Math.floor(Number(id) / 2 ** Number(low))) === units + 1n) {
        familyVector(family, id, ["float-1ms-late"]);
        found++;
      }
    }
  }
}
// Instagram's media 2384288897814875714 was posted 2020-08-26T13:43:27Z.
agree("instagram media", readFamily(FAMILIES[0], 2384288897814875714n).time.slice(0, 19), "2020-08-26T13:43:27");
familyVector(FAMILIES[0], 2384288897814875714n);
// Gargron's post of 2022-11-04 (mastodon.social/@Gargron/109287326541397004).
agree("mastodon post", readFamily(FAMILIES[1], 109287326541397004n).time.slice(0, 10), "2022-11-04");
familyVector(FAMILIES[1], 109287326541397004n);

// ------------------------------------------------------------------ ULID

function ulidVector(text, source, tags = []) {
  const value = decode(text.toUpperCase(), CROCKFORD);
  const ms = value >> 80n;
  if (source !== "published:ulid-spec") agree(`ulid ${text}`, ms, BigInt(decodeTime(text)));
  vector("ulid", text, msTime(ms), { randomness: hex(value & ((1n << 80n) - 1n), 20) }, source, tags);
}
// The spec's example, and the README's decodeTime example (1469918176385).
ulidVector("01ARZ3NDEKTSV4RRFFQ69G5FAV", "published:ulid-spec");
ulidVector("01ARYZ6S41TSV4RRFFQ69G5FAV", "published:ulid-spec");
agree("ulid readme", decode("01ARYZ6S41TSV4RRFFQ69G5FAV", CROCKFORD) >> 80n, 1469918176385n);
for (let i = 0; i < 20; i++) {
  const ms = between(1_451_606_400_000n, UNTIL_MS);
  let text = encode((ms << 80n) | bits(80n), CROCKFORD, 26);
  if (i % 4 === 3) text = text.toLowerCase();
  ulidVector(text, npm("ulid"), i % 4 === 3 ? ["lower-case"] : []);
}
ulidVector("7ZZZZZZZZZZZZZZZZZZZZZZZZZ", npm("ulid"), ["last-instant"]);
ulidVector("00000000000000000000000000", npm("ulid"), ["first-instant"]);

// ----------------------------------------------------------------- UUID

// 100 ns intervals from 1582-10-15 to 1970-01-01.
const GREGORIAN = 0x01b21dd213814000n;
const uuidValue = (text) => BigInt(`0x${text.replaceAll("-", "")}`);
function uuidFields(value) {
  const version = (value >> 76n) & 15n;
  const fields = { version: Number(version), variant: "rfc9562" };
  if (version === 1n || version === 6n) {
    fields.clock_seq = Number((value >> 48n) & 0x3fffn);
    fields.node = hex(value & 0xffffffffffffn, 12);
  } else if (version === 7n) {
    fields.rand_a = Number((value >> 64n) & 0xfffn);
    fields.rand_b = hex(value & ((1n << 62n) - 1n), 16);
  }
  return fields;
}
function uuidTime(value) {
  const version = (value >> 76n) & 15n;
  const low = value >> 96n;
  const mid = (value >> 80n) & 0xffffn;
  const twelve = (value >> 64n) & 0xfffn;
  if (version === 1n) return rfc3339(((twelve << 48n) | (mid << 32n) | low) * 100n - GREGORIAN * 100n, 100n);
  if (version === 6n) return rfc3339(((low << 28n) | (mid << 12n) | twelve) * 100n - GREGORIAN * 100n, 100n);
  if (version === 7n) return msTime(value >> 80n);
  return null;
}
function uuidVector(text, source, expectTime, tags = []) {
  const value = uuidValue(text);
  const time = uuidTime(value);
  if (expectTime !== undefined) agree(`uuid ${text}`, time, expectTime);
  vector(`uuid-v${(value >> 76n) & 15n}`, text, time, uuidFields(value), source, tags);
}
// RFC 9562, appendix A: one instant, 2022-02-22T19:22:22Z, as v1, v6, v7.
uuidVector("C232AB00-9414-11EC-B3C8-9F6BDECED846", "published:rfc9562", "2022-02-22T19:22:22.0000000Z", ["upper-case"]);
uuidVector("1EC9414C-232A-6B00-B3C8-9F6BDECED846", "published:rfc9562", "2022-02-22T19:22:22.0000000Z", ["upper-case"]);
uuidVector("017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "published:rfc9562", "2022-02-22T19:22:22.000Z", ["upper-case"]);
const randomBytes = (n) => Uint8Array.from({ length: n }, () => Number(below(256n)));
for (let i = 0; i < 12; i++) {
  const msecs = Number(between(946_684_800_000n, UNTIL_MS));
  const nsecs = Number(below(10_000n));
  const options = { msecs, nsecs, clockseq: Number(below(0x4000n)), node: randomBytes(6) };
  const expect = rfc3339(BigInt(msecs) * MS + BigInt(nsecs) * 100n, 100n);
  uuidVector(uuid.v1(options), npm("uuid"), expect);
  uuidVector(uuid.v6(options), npm("uuid"), expect);
  const v7 = uuid.v7({ msecs, random: randomBytes(16) });
  uuidVector(v7, npm("uuid"), msTime(BigInt(msecs)));
}
// Times before the Unix epoch (v1 and v6 count from 1582-10-15): the
// first instant, and instants of the 1900s.
function timeUuid(version, ticks, clockSeq, node) {
  const low = version === 1n
    ? ((ticks & 0xffffffffn) << 96n) | (((ticks >> 32n) & 0xffffn) << 80n) | ((ticks >> 48n) << 64n)
    : ((ticks >> 28n) << 96n) | (((ticks >> 12n) & 0xffffn) << 80n) | ((ticks & 0xfffn) << 64n);
  const value = low | (version << 76n) | (2n << 62n) | (clockSeq << 48n) | node;
  const text = hex(value, 32);
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}
for (const [ticks, tags] of [[0n, ["first-instant", "pre-unix-epoch"]], ...Array.from({ length: 3 }, () => [between(0n, GREGORIAN - 1n), ["pre-unix-epoch"]])]) {
  const expect = rfc3339((ticks - GREGORIAN) * 100n, 100n);
  for (const version of [1n, 6n]) uuidVector(timeUuid(version, ticks, below(0x4000n), bits(48n)), "layout:uuid", expect, tags);
}
// Versions without a time.
for (let i = 0; i < 3; i++) {
  const v4 = uuid.v4({ random: randomBytes(16) });
  agree(`uuid ${v4}`, uuid.version(v4), 4);
  uuidVector(v4, npm("uuid"), null);
}
uuidVector(uuid.v5("snowmint", uuid.v5.URL), npm("uuid"), null);

// -------------------------------------------------------------- ObjectId

function objectIdVector(text, source) {
  const value = BigInt(`0x${text}`);
  const seconds = value >> 64n;
  if (source.startsWith("npm:")) agree(`objectid ${text}`, seconds * 1000n, BigInt(new ObjectId(text).getTimestamp().getTime()));
  vector("objectid", text, secondTime(seconds), { random: hex((value >> 24n) & 0xffffffffffn, 10), counter: Number(value & 0xffffffn) }, source);
}
objectIdVector("507f1f77bcf86cd799439011", "published:mongodb-manual");
for (let i = 0; i < 15; i++) {
  const seconds = between(1_230_768_000n, UNTIL_MS / 1000n);
  objectIdVector(hex((seconds << 64n) | bits(64n), 24), npm("bson"));
}
objectIdVector("ffffffffffffffffffffffff", npm("bson"));

// ------------------------------------------------------------------ KSUID

function ksuidVector(text, source, tags = []) {
  const value = decode(text, BASE62);
  const seconds = (value >> 128n) + 1_400_000_000n;
  const payload = hex(value & ((1n << 128n) - 1n), 32);
  if (source.startsWith("npm:")) {
    const parsed = KSUID.parse(text);
    agree(`ksuid ${text}`, [seconds * 1000n, payload], [BigInt(parsed.date.getTime()), parsed.payload.toString("hex")]);
  }
  vector("ksuid", text, secondTime(seconds), { payload }, source, tags);
}
// Segment's README: 0ujtsYcgvSTl8PAuAdqWYSMnLOv, timestamp 107608047.
ksuidVector("0ujtsYcgvSTl8PAuAdqWYSMnLOv", "published:ksuid-readme");
for (let i = 0; i < 15; i++) {
  const seconds = between(1_483_228_800n, UNTIL_MS / 1000n) - 1_400_000_000n;
  ksuidVector(encode((seconds << 128n) | bits(128n), BASE62, 27), npm("ksuid"));
}
ksuidVector(KSUID.MAX_STRING_ENCODED, npm("ksuid"), ["last-instant"]);

// -------------------------------------------------------------------- TID

function tidVector(text, source) {
  const value = decode(text, SORTABLE);
  const us = value >> 10n;
  const clockId = value & 1023n;
  if (source.startsWith("npm:")) {
    const tid = TID.fromStr(text);
    agree(`tid ${text}`, [Number(us), Number(clockId)], [tid.timestamp(), tid.clockid()]);
  }
  vector("tid", text, rfc3339(us * 1000n, 1000n), { clock_id: Number(clockId) }, source);
}
tidVector("3jzfcijpj2z2a", "published:atproto-tid");
for (let i = 0; i < 15; i++) {
  const us = Number(between(1_640_995_200_000_000n, UNTIL_MS * 1000n));
  tidVector(TID.fromTime(us, Number(below(1024n))).toString(), npm("@atproto/common-web"));
}

// ------------------------------------------------------- Misskey aid, aidx

const TIME2000 = 946_684_800_000n;
for (let i = 0; i < 10; i++) {
  const ms = between(1_546_300_800_000n, UNTIL_MS);
  const noise = encode(below(36n ** 2n), BASE36, 2);
  // A digit in the text, as running text needs (and the time part always
  // has some in these years).
  const text = encode(ms - TIME2000, BASE36, 8) + noise;
  vector("misskey-aid", text, msTime(ms), { noise }, "layout:misskey");
}
for (let i = 0; i < 10; i++) {
  const ms = between(1_546_300_800_000n, UNTIL_MS);
  const node = encode(below(36n ** 4n), BASE36, 4);
  const counter = below(36n ** 4n);
  const text = encode(ms - TIME2000, BASE36, 8) + node + encode(counter, BASE36, 4);
  vector("misskey-aidx", text, msTime(ms), { node, counter: Number(counter) }, "layout:misskey");
}

// ------------------------------------------------------------------- TSID

const TSID_EPOCH = 1_577_836_800_000n;
function tsidVector(text, source) {
  const value = decode(text.toUpperCase(), CROCKFORD);
  vector("tsid", text, msTime((value >> 22n) + TSID_EPOCH), { random: Number(value & 0x3fffffn) }, source);
}
tsidVector("01226N0640J7Q", "published:tsid-creator");
for (let i = 0; i < 10; i++) {
  const ms = between(TSID_EPOCH, UNTIL_MS) - TSID_EPOCH;
  tsidVector(encode((ms << 22n) | bits(22n), CROCKFORD, 13), "layout:tsid");
}

// ------------------------------------------------------------------ texts

// What a pasted text reads as: each token's input and top reading. These
// are the inspector's contract (a link's host pins its family, markup
// pins Discord), written by hand; each time is a vector's above.
const timeOf = (family, input) => {
  const found = vectors.find((v) => v.family === family && v.input === input);
  if (!found) throw new Error(`no vector ${family} ${input}`);
  return found.time;
};
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const shortcode = (id) => {
  let length = 1;
  while (64n ** BigInt(length) <= id) length++;
  return encode(id, BASE64URL, length);
};
// Bitcoin's base58 alphabet (no 0, O, I or l), as snowmint's `base58`
// writes an integer: its digits, most significant first, no padding.
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const base58 = (id) => {
  let length = 1;
  while (58n ** BigInt(length) <= id) length++;
  return encode(id, BASE58, length);
};
// Crockford base32 in 13 characters, as snowmint's `base32` (and TSID's
// text) writes a 64-bit integer.
const base32 = (id) => encode(id, CROCKFORD, 13);
const discordDocs = timeOf("discord", "175928847299117063");
const texts = [
  ["<@175928847299117063>", [["175928847299117063", "discord", discordDocs]]],
  ["<@!175928847299117063> <#175928847299117063>", [["175928847299117063", "discord", discordDocs], ["175928847299117063", "discord", discordDocs]]],
  ["<@&175928847299117063> <:snow:175928847299117063> <a:snow:175928847299117063>", Array(3).fill(["175928847299117063", "discord", discordDocs])],
  ["</ping:175928847299117063>", [["175928847299117063", "discord", discordDocs]]],
  ["<t:1462015105:R>", [["<t:1462015105:R>", "discord-timestamp", "2016-04-30T11:18:25Z"]]],
  ["https://discord.com/channels/@me/175928847299117063/175928847299117063", Array(2).fill(["175928847299117063", "discord", discordDocs])],
  ["https://cdn.discordapp.com/emojis/175928847299117063.png", [["175928847299117063", "discord", discordDocs]]],
  ["https://cdn.discordapp.com/attachments/175928847299117063/175928847299117063/cat.png?ex=1", Array(2).fill(["175928847299117063", "discord", discordDocs])],
  // An integer in hex, read as its value: Twitter's reading of the tweet.
  [`id=0x${(1307025659294674945n).toString(16)}`, [[`0x${(1307025659294674945n).toString(16)}`, "twitter", timeOf("twitter", "1307025659294674945")]]],
  ["https://x.com/XDevelopers/status/1050118621198921728", [["1050118621198921728", "twitter", timeOf("twitter", "1050118621198921728")]]],
  ["https://twitter.com/i/web/status/1307025659294674945?s=20", [["1307025659294674945", "twitter", timeOf("twitter", "1307025659294674945")]]],
  ["https://twitter.com/jack/status/20", [["20", "twitter", null]]],
  ["https://bsky.app/profile/atproto.com/post/3jzfcijpj2z2a", [["3jzfcijpj2z2a", "tid", timeOf("tid", "3jzfcijpj2z2a")]]],
  ["at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3jzfcijpj2z2a", [["3jzfcijpj2z2a", "tid", timeOf("tid", "3jzfcijpj2z2a")]]],
  ["log line: request 01ARZ3NDEKTSV4RRFFQ69G5FAV done", [["01ARZ3NDEKTSV4RRFFQ69G5FAV", "ulid", timeOf("ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAV")]]],
  ["{\"_id\": {\"$oid\": \"507f1f77bcf86cd799439011\"}}", [["507f1f77bcf86cd799439011", "objectid", timeOf("objectid", "507f1f77bcf86cd799439011")]]],
  ["urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", [["017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "uuid-v7", "2022-02-22T19:22:22.000Z"]]],
  ["0ujtsYcgvSTl8PAuAdqWYSMnLOv", [["0ujtsYcgvSTl8PAuAdqWYSMnLOv", "ksuid", timeOf("ksuid", "0ujtsYcgvSTl8PAuAdqWYSMnLOv")]]],
  ["01226N0640J7Q", [["01226N0640J7Q", "tsid", timeOf("tsid", "01226N0640J7Q")]]],
  ["https://mastodon.social/@Gargron/109287326541397004", [["109287326541397004", "mastodon", timeOf("mastodon", "109287326541397004")]]],
  ["https://mastodon.social/web/statuses/109287326541397004", [["109287326541397004", "mastodon", timeOf("mastodon", "109287326541397004")]]],
  // An Instagram link's shortcode is the media ID in base64 (A-Z a-z 0-9 - _).
  [`https://www.instagram.com/p/${shortcode(2384288897814875714n)}/`, [[shortcode(2384288897814875714n), "instagram", timeOf("instagram", "2384288897814875714")]]],
  [`https://www.instagram.com/reel/${shortcode(2384288897814875714n)}/?igsh=x`, [[shortcode(2384288897814875714n), "instagram", timeOf("instagram", "2384288897814875714")]]],
  // Twitter's reading of a 2023 tweet comes first; Discord's would be in
  // 2028, in the future.
  ["\"1307025659294674945\"", [["1307025659294674945", "twitter", timeOf("twitter", "1307025659294674945")]]],
  // The same integers in Crockford base32 and base58, alone or quoted in
  // running text (where an alphabet that spells words needs a digit).
  // Read as a TSID, the base32 text's time would be in 2027 or 2029, in
  // the future: Twitter's reading of the integer comes first.
  [`'0x${(1050118621198921728n).toString(16)}'`, [[`0x${(1050118621198921728n).toString(16)}`, "twitter", timeOf("twitter", "1050118621198921728")]]],
  [base32(1307025659294674945n), [[base32(1307025659294674945n), "twitter", timeOf("twitter", "1307025659294674945")]]],
  [`order "${base32(1050118621198921728n)}" shipped`, [[base32(1050118621198921728n), "twitter", timeOf("twitter", "1050118621198921728")]]],
  [base58(1050118621198921728n), [[base58(1050118621198921728n), "twitter", timeOf("twitter", "1050118621198921728")]]],
  [`{"id": "${base58(1307025659294674945n)}", "n": 12}`, [[base58(1307025659294674945n), "twitter", timeOf("twitter", "1307025659294674945")]]],
];

// ------------------------------------------------------------------- file

for (const v of vectors) {
  if (!sources[v.source]) throw new Error(`${v.family} ${v.input}: no source ${v.source}`);
}
const counts = {};
for (const v of vectors) counts[v.family] = (counts[v.family] ?? 0) + 1;
const file = {
  format: "snowmint-vectors",
  version: VERSION,
  about:
    "Known answers for reading IDs, shared by every front end's tests. Written by vectors/generate.mjs; see vectors/README.md for the format.",
  sources: Object.fromEntries(Object.entries(sources).sort(([a], [b]) => a.localeCompare(b))),
  counts,
  vectors,
  texts: texts.map(([text, tokens]) => ({
    text,
    tokens: tokens.map(([input, family, time]) => ({ input, family, time })),
  })),
};
const json = `${JSON.stringify(file, null, 2)}\n`;

const args = process.argv.slice(2);
const check = args[0] === "--check";
const path = args[check ? 1 : 0];
if (!path) {
  console.error("usage: node generate.mjs [--check] PATH/TO/vectors.json");
  process.exit(2);
}
if (check) {
  const committed = JSON.parse(readFileSync(path, "utf8"));
  if (!isDeepStrictEqual(committed, JSON.parse(json))) {
    const made = JSON.parse(json);
    for (const key of Object.keys(made)) {
      if (!isDeepStrictEqual(committed[key], made[key])) {
        const list = Array.isArray(made[key]) ? made[key] : null;
        const at = list ? list.findIndex((item, i) => !isDeepStrictEqual(item, committed[key]?.[i])) : -1;
        console.error(`${path}: "${key}" differs from what the sources say${at >= 0 ? ` (first at index ${at}: ${JSON.stringify(list[at])} against ${JSON.stringify(committed[key]?.[at])})` : ""}`);
      }
    }
    console.error("regenerate with: node generate.mjs PATH (see crates/snowmint/tests/vectors_sources.rs)");
    process.exit(1);
  }
  console.log(`${path}: ${vectors.length} vectors and ${texts.length} texts agree with their sources`);
} else {
  writeFileSync(path, json);
  console.log(`wrote ${vectors.length} vectors and ${texts.length} texts to ${path}`);
}
