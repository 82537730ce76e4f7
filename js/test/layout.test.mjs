// The reader: every known-answer vector of the repository
// (vectors/vectors.json, which the Rust core's tests read too), the
// presets against the ones the real `snowmint` binary lists, round trips
// for every preset, IDs at and above 2^53 and 2^63, every error against
// the message the binary gives for the same input, and IDs made or read by
// well-kept npm packages (@sapphire/snowflake, ulid, uuid, bson,
// @atproto/common-web).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { TID } from "@atproto/common-web";
import { DiscordSnowflake, TwitterSnowflake } from "@sapphire/snowflake";
import { ObjectId } from "bson";
import { decodeTime, ulid } from "ulid";
import * as uuid from "uuid";

import {
  PRESETS,
  PRESET_NAMES,
  SnowmintError,
  TEXT_FAMILY_NAMES,
  decode,
  decodeText,
  encode,
  formatId,
  layout,
  parseIdText,
  range,
} from "../dist/esm/index.js";
import { binary } from "./support.mjs";

const VECTORS = JSON.parse(readFileSync(new URL("../../vectors/vectors.json", import.meta.url), "utf8"));
const P53 = 2n ** 53n;
const P63 = 2n ** 63n;
const P64 = 2n ** 64n;

/** A small seeded generator (xorshift64*), so that every run draws the same values. */
function seeded(seed) {
  let state = BigInt(seed) || 1n;
  const next = () => {
    state ^= state >> 12n;
    state ^= (state << 25n) & (P64 - 1n);
    state ^= state >> 27n;
    return (state * 0x2545f4914f6cdd1dn) & (P64 - 1n);
  };
  /** A BigInt in 0..=max. */
  return (max) => (max === 0n ? 0n : next() % (max + 1n));
}

/** Runs the real binary; its stdout, or its first error line. */
function cli(args) {
  const out = spawnSync(binary(), args, { encoding: "utf8" });
  if (out.status === 0) return { ok: out.stdout };
  const line = out.stderr.split("\n").find((l) => l.startsWith("error: "));
  assert.ok(line, `no error line from snowmint ${args.join(" ")}: ${out.stderr}`);
  return { error: line.slice("error: ".length) };
}

/** What the package answers for a vector, in the vector's terms. */
function reading(vector) {
  if (PRESET_NAMES.includes(vector.family) && /^[0-9]+$/.test(vector.input)) {
    const decoded = decode(vector.input, vector.family);
    return { family: vector.family, time: decoded.time, fields: { id: decoded.id.toString(), ...decoded.fields } };
  }
  const read = decodeText(vector.input, vector.family);
  return { family: read.family, time: read.time, fields: read.fields };
}

test("every known-answer vector reads as the file says", () => {
  assert.equal(VECTORS.format, "snowmint-vectors");
  assert.equal(VECTORS.version, 1);
  const families = new Set();
  for (const vector of VECTORS.vectors) {
    const got = reading(vector);
    const where = `${vector.family} ${vector.input} (${vector.source})`;
    assert.equal(got.family, vector.family, where);
    assert.equal(got.time, vector.time, where);
    for (const [name, value] of Object.entries(vector.fields)) {
      assert.strictEqual(got.fields[name], value, `${where}: field ${name}`);
    }
    families.add(vector.family);
  }
  // Every preset and every text family has vectors.
  for (const name of PRESET_NAMES) assert.ok(families.has(name), `no vector of ${name}`);
  for (const name of TEXT_FAMILY_NAMES) {
    assert.ok([...families].some((f) => f === name || f.startsWith(`${name}-`)), `no vector of ${name}`);
  }
  assert.equal(VECTORS.vectors.length, Object.values(VECTORS.counts).reduce((a, b) => a + b, 0));
});

test("the presets are the binary's, field by field", () => {
  const listed = JSON.parse(cli(["layout", "--list", "--format", "json"]).ok);
  assert.deepEqual(
    PRESETS.map((p) => p.name),
    listed.map((l) => l.layout),
  );
  for (const [i, preset] of PRESETS.entries()) {
    const theirs = listed[i];
    assert.equal(preset.family, theirs.family);
    assert.equal(preset.spec, theirs.spec);
    assert.equal(preset.epochMs, theirs.epoch_ms);
    assert.equal(preset.unit, theirs.unit);
    assert.equal(preset.unitMs * 1000, theirs.unit_us);
    assert.equal(preset.bits, theirs.bits);
    assert.equal(preset.maxId, BigInt(theirs.max_id));
    assert.equal(preset.lastInstantMs, theirs.last_instant_ms);
    assert.equal(preset.jsSafe, theirs.js_safe);
    assert.equal(preset.mintable, theirs.mintable);
    assert.deepEqual(
      preset.fields.map((f) => [f.role === "time" ? "timestamp" : f.name, f.role, f.width, f.shift, f.max]),
      theirs.fields.map((f) => [f.name, f.role, f.bits, f.shift, f.max]),
    );
    assert.equal(layout(preset.name.toUpperCase()), preset);
  }
});

test("the binary decodes what the package decodes, for every preset", () => {
  const draw = seeded(7);
  for (const preset of PRESETS) {
    const ids = [0n, preset.maxId, ...Array.from({ length: 6 }, () => draw(preset.maxId))];
    const lines = cli(["decode", "--layout", preset.name, "--format", "json", ...ids.map(String)]).ok.trim().split("\n");
    assert.equal(lines.length, ids.length);
    for (const [i, id] of ids.entries()) {
      const theirs = JSON.parse(lines[i]);
      const ours = decode(id, preset.name);
      assert.equal(ours.id, id);
      assert.equal(theirs.id, id.toString());
      assert.equal(ours.time, theirs.time, `${preset.name} ${id}`);
      assert.equal(ours.timestampMs, theirs.timestamp_ms, `${preset.name} ${id}`);
      for (const field of preset.fields.filter((f) => f.role !== "time")) {
        assert.equal(ours.fields[field.name], theirs[field.name], `${preset.name} ${id} ${field.name}`);
      }
    }
  }
});

test("round trips for every preset: encode then decode gives the time and fields back", () => {
  const draw = seeded(42);
  for (const preset of PRESETS) {
    const others = preset.fields.filter((f) => f.role !== "time");
    const span = BigInt(preset.lastInstantMs - preset.epochMs);
    const times = [preset.epochMs, preset.lastInstantMs, ...Array.from({ length: 200 }, () => preset.epochMs + Number(draw(span)))];
    for (const time of times) {
      const values = Object.fromEntries(others.map((f) => [f.name, Number(draw(BigInt(f.max)))]));
      const id = encode(time, values, preset.name);
      assert.equal(typeof id, "bigint");
      assert.ok(id >= 0n && id <= preset.maxId);
      const decoded = decode(id, preset.name);
      // The time comes back as the start of its tick.
      const tickStart = preset.epochMs + Math.floor((time - preset.epochMs) / preset.unitMs) * preset.unitMs;
      assert.equal(decoded.timestampMs, tickStart, `${preset.name} at ${time}`);
      assert.deepEqual({ ...decoded.fields }, values);
      // And through every encoding of the ID's text.
      for (const encoding of ["decimal", "hex", "base32", "base58"]) {
        assert.equal(parseIdText(formatId(id, encoding), encoding, preset.name), id);
        assert.equal(decode(formatId(id, encoding), preset.name, { encoding }).id, id);
      }
    }
    // The largest ID holds every field's largest value at the last tick.
    const last = decode(preset.maxId, preset.name);
    assert.equal(last.timestampMs, preset.lastInstantMs - (preset.unitMs - 1));
    for (const f of others) assert.equal(last.fields[f.name], f.max);
    assert.equal(encode(preset.lastInstantMs, Object.fromEntries(others.map((f) => [f.name, f.max])), preset.name), preset.maxId);
    assert.equal(encode(preset.epochMs, {}, preset.name), 0n);
  }
});

test("IDs at and above 2^53 and 2^63 stay exact, and no field is a rounded number", () => {
  for (const id of [P53 - 1n, P53, P53 + 1n, P63 - 1n]) {
    for (const name of ["twitter", "discord", "leaf", "baidu", "tiktok", "linkedin"]) {
      const decoded = decode(id, name);
      assert.equal(decoded.id, id);
      assert.equal(decode(id.toString(), name).id, id);
      for (const value of Object.values(decoded.fields)) assert.ok(Number.isSafeInteger(value));
      assert.ok(Number.isSafeInteger(decoded.timestampMs));
      assert.equal(encode(decoded.timestampMs, decoded.fields, name), id);
      assert.equal(decoded.toJSON().id, id.toString());
    }
  }
  // Discord and Mastodon use all 64 bits: 2^63 and 2^64-1 are theirs.
  for (const id of [P63, P63 + 1n, P64 - 1n]) {
    for (const name of ["discord", "mastodon", "tsid", "instagram"]) {
      const decoded = decode(id, name);
      assert.equal(decoded.id, id);
      assert.equal(encode(decoded.timestampMs, decoded.fields, name), id);
    }
    // 63-bit layouts refuse them.
    assert.throws(() => decode(id, "twitter"), refused("OutOfRange", "id"));
  }
  const d = decode(P64 - 1n, "discord");
  assert.equal(d.time, "2154-05-15T07:35:11.103Z");
  assert.deepEqual({ ...d.fields }, { worker: 31, process: 31, increment: 4095 });
  // A safe number is read; one past 2^53 is refused, not rounded.
  assert.equal(decode(Number(P53 - 1n), "discord").id, P53 - 1n);
  assert.throws(() => decode(2 ** 53 + 2, "discord"), refused("OutOfRange", "id", /not a safe integer/));
  assert.throws(() => decode(1.5, "discord"), refused("InvalidText", "id", /not a safe integer/));
  // A range's bounds are BigInt.
  const r = range("2084-09-01T00:00:00Z", "2084-12-31T23:59:59.999Z", "discord");
  assert.ok(r.min < P63 && r.max > P63);
  assert.equal(typeof r.min, "bigint");
});

/** An error a test expects: a SnowmintError of `kind` about `subject`, whose message matches. */
function refused(kind, subject, message) {
  return (error) => {
    assert.ok(error instanceof SnowmintError, `${error}`);
    assert.equal(error.kind, kind, error.message);
    if (subject !== undefined) assert.equal(error.subject, subject, error.message);
    if (message instanceof RegExp) assert.match(error.message, message);
    else if (message !== undefined) assert.equal(error.message, message);
    return true;
  };
}

/** The package's error for `run`, checked against the binary's message for the same input. */
function sameError(run, args, kind, subject) {
  const theirs = cli(args).error;
  assert.ok(theirs, `snowmint ${args.join(" ")} did not fail`);
  let ours;
  assert.throws(run, (error) => {
    ours = error;
    return refused(kind, subject)(error);
  });
  // The binary may add a hint after the core's message.
  assert.ok(
    theirs === ours.message || theirs.startsWith(`${ours.message};`),
    `snowmint ${args.join(" ")}:\n  binary:  ${theirs}\n  package: ${ours.message}`,
  );
}

test("every error of decode is the core's, as the binary words it", () => {
  const cases = [
    [["twitter", "12a"], "InvalidText"],
    [["discord", "9223372036854775808x"], "InvalidText"],
    [["twitter", "9223372036854775808"], "OutOfRange"],
    [["discord", "18446744073709551616"], "OutOfRange"],
    [["discord", "99999999999999999999999999999"], "OutOfRange"],
    [["twitter", "-5"], "OutOfRange"],
    [["twitter", "-0"], "InvalidText"],
    [["twitter", " 1"], "InvalidText"],
    [["twitter", "1é"], "InvalidText"],
    [["safe-js-10ms", "9007199254740992"], "OutOfRange"],
    [["cosid-safe-js", "9007199254740991"], null],
    [["twitter", "0xzz", "hex"], "InvalidText"],
    [["twitter", "0x", "hex"], "InvalidText"],
    [["twitter", "8000000000000000", "hex"], "OutOfRange"],
    [["discord", "0", "base58"], "InvalidText"],
    [["twitter", "8000000000000", "base32"], "OutOfRange"],
    [["discord", "G000000000000", "base32"], "OutOfRange"],
    [["twitter", "U", "base32"], "InvalidText"],
    // Long text is echoed cut, as the core cuts it.
    [["twitter", "x".repeat(100)], "InvalidText"],
    [["twitter", '"'.repeat(30) + "x".repeat(30)], "InvalidText"],
  ];
  for (const [[name, text, encoding = "decimal"], kind] of cases) {
    const args = ["decode", "--layout", name, "--input", encoding, "--format", "json", "--", text];
    if (kind === null) {
      assert.equal(decode(text, name, { encoding }).id.toString(), JSON.parse(cli(args).ok).id);
      continue;
    }
    sameError(() => decode(text, name, { encoding }), args, kind, "id");
  }
  const empty = ["decode", "--layout", "twitter", "--", ""];
  sameError(() => decode("", "twitter"), empty, "InvalidText", "id");
  // A BigInt above the layout's largest ID.
  assert.throws(
    () => decode(P63, "twitter"),
    refused("OutOfRange", "id", "ID 9223372036854775808 is out of range for layout twitter (0..=9223372036854775807)"),
  );
  assert.throws(() => decode(-1n, "twitter"), refused("OutOfRange", "id"));
  // A layout that is no preset, as the binary words it.
  sameError(() => decode(1n, "snowflake9000"), ["decode", "--layout", "snowflake9000", "1"], "InvalidLayout", "layout");
  assert.throws(() => decode(1n, "twitter", { encoding: "base64" }), refused("UnknownName", "encoding", /unknown encoding "base64"/));
});

test("every error of encode and range is the core's, as the binary words it", () => {
  const encodes = [
    [["discord", "2014-01-01T00:00:00Z", {}], "OutOfRange", "timestamp"],
    [["twitter", "4000000000000", {}], "OutOfRange", "timestamp"],
    [["baidu", "2030-01-01T00:00:00Z", {}], "OutOfRange", "timestamp"],
    [["sonyflake", "1409529599999", {}], "OutOfRange", "timestamp"],
    [["discord", "2020-01-01T00:00:00Z", { worker: 32 }], "OutOfRange", "worker"],
    [["instagram", "2020-01-01T00:00:00Z", { shard: 8192 }], "OutOfRange", "shard"],
    [["discord", "2020-01-01T00:00:00Z", { shard: 1 }], "UnknownName", "field"],
    [["discord", "2020-01-01T00:00:00Z", { worker: "x" }], "InvalidText", "worker"],
    [["twitter", "2020-13-01T00:00:00Z", {}], "InvalidText", "timestamp"],
    [["twitter", "2021-02-29T00:00:00Z", {}], "InvalidText", "timestamp"],
    [["twitter", "2020-01-01", {}], "InvalidText", "timestamp"],
    [["twitter", "2020-01-01T00:00:00", {}], "InvalidText", "timestamp"],
    [["twitter", "2020-01-01T00:00:00+24:00", {}], "InvalidText", "timestamp"],
    [["twitter", "99999999999999999999", {}], "InvalidText", "timestamp"],
    [["twitter", "", {}], "InvalidText", "timestamp"],
  ];
  for (const [[name, time, fields], kind, subject] of encodes) {
    const args = ["encode", "--layout", name, `--timestamp=${time}`];
    for (const [field, value] of Object.entries(fields)) args.push("--field", `${field}=${value}`);
    sameError(() => encode(time, fields, name), args, kind, subject);
  }
  const ranges = [
    [["twitter", "2020-01-02T00:00:00Z", "2020-01-01T00:00:00Z"], "EmptyWindow", "from"],
    [["discord", "2014-01-01T00:00:00Z", "2020-01-01T00:00:00Z"], "OutOfRange", "timestamp"],
    [["discord", "2020-01-01T00:00:00Z", "2200-01-01T00:00:00Z"], "OutOfRange", "timestamp"],
    [["twitter", "yesterday", "2020-01-01T00:00:00Z"], "InvalidText", "from"],
  ];
  for (const [[name, from, to], kind, subject] of ranges) {
    sameError(() => range(from, to, name), ["range", "--layout", name, `--from=${from}`, `--to=${to}`], kind, subject);
  }
  // And a window the binary answers, the same.
  for (const name of ["twitter", "discord", "sonyflake", "baidu", "tiktok"]) {
    const from = "2024-11-14T22:13:20.123Z";
    const to = "2024-11-14T22:13:21.456-01:00";
    const theirs = JSON.parse(cli(["range", "--layout", name, "--format", "json", `--from=${from}`, `--to=${to}`]).ok);
    const ours = range(from, to, name);
    assert.deepEqual(
      [ours.min.toString(), ours.max.toString(), ours.from, ours.to, ours.fromMs, ours.toMs],
      [theirs.min, theirs.max, theirs.from, theirs.to, theirs.from_ms, theirs.to_ms],
      name,
    );
  }
});

test("every error of the text families names the family, the value and what was expected", () => {
  const cases = [
    ["ulid", "01ARZ3NDEKTSV4RRFFQ69G5FA", "InvalidText", 'ULID "01ARZ3NDEKTSV4RRFFQ69G5FA" is not valid: it has 25 characters (expected 26)'],
    ["ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAU", "InvalidText", /'U' at position 25 \(expected a Crockford base32 digit/],
    ["ulid", "80000000000000000000000000", "OutOfRange", /is out of range \(00000000000000000000000000\.\.=7ZZZZZZZZZZZZZZZZZZZZZZZZZ\)/],
    ["uuid", "017f22e2-79b0-7cc3-98c4-dc0c0c07398", "InvalidText", /it has 35 characters \(expected 36 \(8-4-4-4-12\) or 32\)/],
    ["uuid", "017f22e2+79b0-7cc3-98c4-dc0c0c07398f", "InvalidText", /'\+' at position 8 \(expected '-'\)/],
    ["uuid", "017f22e2-79b0-7cc3-98c4-dc0c0c07398g", "InvalidText", /'g' at position 35 \(expected a hex digit\)/],
    ["objectid", "507f1f77bcf86cd79943901", "InvalidText", /expected 24/],
    ["ksuid", "zzzzzzzzzzzzzzzzzzzzzzzzzzz", "OutOfRange", /KSUID "z+" is out of range/],
    ["ksuid", "0ujtsYcgvSTl8PAuAdqWYSMnLO_", "InvalidText", /'_' at position 26 \(expected a base62 digit/],
    ["tid", "3JZFCIJPJ2Z2A", "InvalidText", /TID "3JZFCIJPJ2Z2A" is not valid: 'J' at position 1 \(expected a base32-sortable digit: 2-7 or a-z, lower case\)/],
    ["tid", "zzzzzzzzzzzzz", "OutOfRange", /TID "zzzzzzzzzzzzz" is out of range \(2222222222222\.\.=jzzzzzzzzzzzz\)/],
    ["misskey-aid", "856Z2DUS5L", "InvalidText", /Misskey aid "856Z2DUS5L" is not valid: 'Z'/],
    ["misskey-aidx", "7q1t0l3sumwvxrk", "InvalidText", /Misskey aidx .* it has 15 characters \(expected 16\)/],
    ["tsid", "G000000000000", "OutOfRange", /TSID "G000000000000" is out of range \(0000000000000\.\.=FZZZZZZZZZZZZ\)/],
    ["tsid", "01226N0640J7U", "InvalidText", /'U' at position 12/],
  ];
  for (const [family, text, kind, message] of cases) {
    assert.throws(() => decodeText(text, family), refused(kind, undefined, message), `${family} ${text}`);
  }
  assert.throws(() => decodeText("x", "snowflake"), refused("UnknownName", "family", /unknown text family "snowflake"/));
  // Long text is cut in the message, never echoed whole.
  assert.throws(() => decodeText("x".repeat(100_000), "ulid"), (error) => error.message.length < 200);
});

test("IDs made by @sapphire/snowflake read the same here, and ours read the same there", () => {
  const draw = seeded(1);
  for (const [snowflake, name, worker, process] of [
    [DiscordSnowflake, "discord", "worker", "process"],
    [TwitterSnowflake, "twitter", "datacenter", "machine"],
  ]) {
    const preset = layout(name);
    for (let i = 0; i < 300; i++) {
      const timestamp = BigInt(preset.epochMs) + draw(BigInt(Math.min(preset.lastInstantMs, 4_102_444_800_000) - preset.epochMs));
      const fields = { [worker]: Number(draw(31n)), [process]: Number(draw(31n)), [preset.fields[3].name]: Number(draw(4095n)) };
      const theirs = snowflake.generate({
        timestamp,
        workerId: BigInt(fields[worker]),
        processId: BigInt(fields[process]),
        increment: BigInt(fields[preset.fields[3].name]),
      });
      const ours = encode(timestamp, fields, name);
      assert.equal(ours, theirs);
      const decoded = decode(theirs, name);
      const parts = snowflake.deconstruct(ours);
      assert.equal(BigInt(decoded.timestampMs), parts.timestamp);
      assert.equal(BigInt(decoded.fields[worker]), parts.workerId);
      assert.equal(BigInt(decoded.fields[process]), parts.processId);
      assert.equal(BigInt(decoded.fields[preset.fields[3].name]), parts.increment);
      assert.equal(decoded.time, new Date(Number(parts.timestamp)).toISOString());
    }
  }
  // Discord's IDs from 2084-09 on are at or above 2^63.
  const late = DiscordSnowflake.generate({ timestamp: 3_700_000_000_000n, workerId: 3n, processId: 4n, increment: 5n });
  assert.ok(late >= P63);
  assert.deepEqual({ ...decode(late, "discord").fields }, { worker: 3, process: 4, increment: 5 });
});

test("ULIDs, UUIDs, ObjectIds and TIDs made by their own packages read the same here", () => {
  const draw = seeded(99);
  for (let i = 0; i < 200; i++) {
    const ms = Number(draw(4_102_444_800_000n));
    const id = ulid(ms);
    const read = decodeText(id, "ulid");
    assert.equal(read.timestampMs, decodeTime(id));
    assert.equal(read.time, new Date(ms).toISOString());
    assert.equal(decodeText(id.toLowerCase(), "ulid").time, read.time);

    const nsecs = Number(draw(9999n));
    const node = Uint8Array.from({ length: 6 }, () => Number(draw(255n)));
    const clockseq = Number(draw(0x3fffn));
    const v1 = uuid.v1({ msecs: ms, nsecs, node, clockseq });
    const v6 = uuid.v6({ msecs: ms, nsecs, node, clockseq });
    const v7 = uuid.v7({ msecs: ms });
    const fraction = `${String(ms % 1000).padStart(3, "0")}${String(nsecs).padStart(4, "0")}`;
    for (const [text, family] of [
      [v1, "uuid-v1"],
      [v6, "uuid-v6"],
    ]) {
      const r = decodeText(text, "uuid");
      assert.equal(r.family, family);
      assert.equal(r.time, `${new Date(ms).toISOString().slice(0, 19)}.${fraction}Z`);
      assert.equal(r.fields.clock_seq, clockseq);
      assert.equal(r.fields.node, Buffer.from(node).toString("hex"));
      assert.equal(decodeText(text.replaceAll("-", ""), "uuid").time, r.time);
    }
    assert.equal(uuid.v6ToV1(v6), v1);
    const r7 = decodeText(v7, "uuid");
    assert.equal(r7.family, "uuid-v7");
    assert.equal(r7.time, new Date(ms).toISOString());
    assert.equal(decodeText(uuid.v4(), "uuid").time, null);

    const seconds = Math.floor(ms / 1000);
    const oid = ObjectId.createFromTime(seconds).toHexString();
    const ro = decodeText(new ObjectId(oid).toHexString(), "objectid");
    assert.equal(ro.timestampMs, new ObjectId(oid).getTimestamp().getTime());

    // From 2010 on: @atproto/common-web writes TIDs before 2005-09 in fewer than 13 characters.
    const us = (1_262_304_000_000 + (ms % 2_800_000_000_000)) * 1000 + Number(draw(999n));
    const clock = Number(draw(1023n));
    const tid = TID.fromTime(us, clock);
    const rt = decodeText(tid.toString(), "tid");
    assert.equal(rt.unixNs, BigInt(tid.timestamp()) * 1000n);
    assert.equal(rt.fields.clock_id, tid.clockid());
  }
});

test("layout text: the binary's reading of presets with an epoch or unit, widths and named fields, and its errors", () => {
  const texts = [
    "DISCORD", "discord@2020-01-01T00:00:00Z", "discord@1420070400000", "sonyflake-v2,1ms", "42/0/10/11",
    "42/0/10/11@1600000000000", "time:39/sequence:8/machine:16@2014-09-01T00:00:00Z,10ms",
    "time:32/shard:16:node/counter:16:sequence@0,1s", "time:41/seq:12:seq@2024-01-01T00:00:00+02:00,250us",
    "twitter@2015-01-01T00:00:00Z,1us", "worker:5:node/time:41/sequence:12",
    // Errors, each worded as the binary words it.
    "41/5/5/13", "0/21/21/21", "snowflake9000", "a/b", "time:41/x:5", "time:41/Bad:5:node", "time:41/x:5:nope",
    "time:65", "time:41:time/t:2:time", "time:41,0ms", "time:41,2s", "time:41,10", "time:41,99999999999ms",
    "time:41@-5", "time:41@yesterday", "time:41/s:0:sequence", "time:41/time:2", "x", "time:41/sequence:10/x",
    ",1ms", "time:41/a:1:node/a:2:node", "time:41/a:1:node/b:1:node/c:1:node/d:1:node/e:1:node/f:1:node/g:1:node/h:1:node",
  ];
  for (const text of texts) {
    const out = cli(["layout", "--format", "json", "--layout", text]);
    if (out.error !== undefined) {
      assert.throws(() => layout(text), refused("InvalidLayout", "layout", out.error), text);
      continue;
    }
    const theirs = JSON.parse(out.ok);
    const ours = layout(text);
    assert.deepEqual(
      [ours.name, ours.spec, ours.family, ours.epochMs, ours.unit, ours.unitUs, ours.bits, ours.lastInstantMs, ours.maxId.toString(), ours.jsSafe, ours.mintable],
      [theirs.layout, theirs.spec, theirs.family ?? null, theirs.epoch_ms, theirs.unit, theirs.unit_us, theirs.bits, theirs.last_instant_ms, theirs.max_id, theirs.js_safe, theirs.mintable],
      text,
    );
    // Decoding with it is the binary's too, at the layout's precision.
    const draw = seeded(text.length);
    const ids = [0n, ours.maxId, ...Array.from({ length: 4 }, () => draw(ours.maxId))];
    const lines = cli(["decode", "--layout", text, "--format", "json", ...ids.map(String)]).ok.trim().split("\n");
    for (const [i, id] of ids.entries()) {
      const decoded = decode(id, text);
      const line = JSON.parse(lines[i]);
      assert.equal(decoded.time, line.time, `${text} ${id}`);
      assert.equal(decoded.timestampMs, line.timestamp_ms, `${text} ${id}`);
      // Encoding takes milliseconds: the ID comes back whole where a tick is a whole number of them.
      if (ours.unitUs % 1000 === 0) assert.equal(encode(decoded.timestampMs, decoded.fields, text), id, `${text} ${id}`);
    }
  }
  // Beyond the core's rules: fields wider than 53 bits are refused here, by name.
  assert.ok(cli(["layout", "--layout", "time:54/s:10:sequence@0,1us"]).ok);
  assert.throws(() => layout("time:54/s:10:sequence@0,1us"), refused("InvalidLayout", "layout", /field time is 54 bits wide; this package reads fields of at most 53 bits/));
});
