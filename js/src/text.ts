// The text families the core's inspector reads
// (crates/snowmint/src/inspect/strings/): ULID, UUID (v1, v6 and v7 hold a
// time), MongoDB's ObjectId, KSUID, the AT Protocol's TID, Misskey's aid
// and aidx, and TSID's 13-character text, each read as the core reads it,
// with the same family names, fields and errors.

import { SnowmintError, type ErrorKind } from "./errors.js";
import { debugChar, quote } from "./rust.js";
import { dateMs, formatNs } from "./time.js";

/** A field of a reading: a number below 2^53, or text (hex, base36, or a larger number). */
export type FieldValue = number | string;

/** What an ID of a text family says. */
export interface TextReading {
  /** The family, as the core names it (`ulid`, `uuid-v7`, `objectid`, `tid`...). */
  readonly family: string;
  /** Its time, RFC 3339 in UTC at the family's precision, or null when it holds none. */
  readonly time: string | null;
  /** Its time in Unix nanoseconds, or null. */
  readonly unixNs: bigint | null;
  /** Its time in Unix milliseconds (towards the past), or null. */
  readonly timestampMs: number | null;
  /** Its other fields, by the family's names. */
  readonly fields: Readonly<Record<string, FieldValue>>;
}

/** When a family began, for the inspector's judgement. */
export interface Since {
  readonly unixMs: number;
  readonly what: string;
}

/** One text family's reading, with what the inspector needs. */
export interface TextId extends TextReading {
  readonly since: Since;
  /** Why it holds no time, when it holds none. */
  readonly timeless: string;
}

const SECOND = 1_000_000_000n;
const MILLISECOND = 1_000_000n;
const MICROSECOND = 1_000n;

function timed(unixNs: bigint, unitNs: bigint): Pick<TextReading, "time" | "unixNs" | "timestampMs"> {
  const ms = unixNs >= 0n ? unixNs / MILLISECOND : -((-unixNs + MILLISECOND - 1n) / MILLISECOND);
  return { time: formatNs(unixNs, unitNs), unixNs, timestampMs: Number(ms) };
}

// ---------------------------------------------------------------- errors

type Problem =
  | { kind: "length"; found: number; expected: string }
  | { kind: "character"; character: string; position: number; expected: string }
  | { kind: "range"; range: string };

function parseError(family: string, input: string, problem: Problem): SnowmintError {
  const shown = quote(input);
  let message: string;
  let kind: ErrorKind = "InvalidText";
  switch (problem.kind) {
    case "length":
      message = `${family} ${shown} is not valid: it has ${problem.found} characters (expected ${problem.expected})`;
      break;
    case "character":
      message = `${family} ${shown} is not valid: ${debugChar(problem.character)} at position ${problem.position} (expected ${problem.expected})`;
      break;
    case "range":
      message = `${family} ${shown} is out of range (${problem.range})`;
      kind = "OutOfRange";
      break;
  }
  return new SnowmintError(kind, message, { subject: family, value: input.slice(0, 64) });
}

// ------------------------------------------------------------- alphabets

interface Alphabet {
  readonly digits: Int8Array;
  readonly radix: bigint;
  readonly what: string;
}

function alphabet(letters: string, foldCase: boolean, what: string): Alphabet {
  const digits = new Int8Array(128).fill(-1);
  for (let i = 0; i < letters.length; i++) {
    const c = letters[i]!;
    digits[c.charCodeAt(0)] = i;
    if (foldCase) {
      digits[c.toLowerCase().charCodeAt(0)] = i;
      digits[c.toUpperCase().charCodeAt(0)] = i;
    }
  }
  return { digits, radix: BigInt(letters.length), what };
}

const HEX = alphabet("0123456789abcdef", true, "a hex digit");
const CROCKFORD_LETTERS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CROCKFORD = alphabet(CROCKFORD_LETTERS, true, "a Crockford base32 digit: 0-9 or A-Z without I, L, O, U");
const SORTABLE = alphabet("234567abcdefghijklmnopqrstuvwxyz", false, "a base32-sortable digit: 2-7 or a-z, lower case");
const BASE36_LETTERS = "0123456789abcdefghijklmnopqrstuvwxyz";
const BASE36 = alphabet(BASE36_LETTERS, false, "a base36 digit: 0-9 or a-z, lower case");
const BASE62 = alphabet(
  "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
  false,
  "a base62 digit: 0-9, A-Z, a-z",
);

function digitOf(a: Alphabet, c: string): number {
  const code = c.charCodeAt(0);
  return c.length === 1 && code < 128 ? a.digits[code]! : -1;
}

/** Counts code points, as Rust's `chars().count()`. */
function charCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

interface Format {
  readonly name: string;
  readonly len: number;
  readonly alphabet: Alphabet;
  readonly bits: number;
  readonly range: string;
}

function readFormat(format: Format, text: string): bigint {
  const found = charCount(text);
  if (found !== format.len) {
    throw parseError(format.name, text, { kind: "length", found, expected: String(format.len) });
  }
  let value = 0n;
  let position = 0;
  for (const c of text) {
    const digit = digitOf(format.alphabet, c);
    if (digit < 0) {
      throw parseError(format.name, text, { kind: "character", character: c, position, expected: format.alphabet.what });
    }
    value = value * format.alphabet.radix + BigInt(digit);
    position += 1;
  }
  if (value >> BigInt(format.bits) !== 0n) {
    throw parseError(format.name, text, { kind: "range", range: format.range });
  }
  return value;
}

function hex(value: bigint, digits: number): string {
  return value.toString(16).padStart(digits, "0");
}

/** A number field as the core's `Field::number`: text from 2^53 on. */
function numberField(value: bigint): FieldValue {
  return value < 1n << 53n ? Number(value) : value.toString();
}

// -------------------------------------------------------------- families

function ulid(text: string): TextId {
  const value = readFormat(
    { name: "ULID", len: 26, alphabet: CROCKFORD, bits: 128, range: "00000000000000000000000000..=7ZZZZZZZZZZZZZZZZZZZZZZZZZ" },
    text,
  );
  return {
    family: "ulid",
    ...timed((value >> 80n) * MILLISECOND, MILLISECOND),
    fields: { randomness: hex(value & ((1n << 80n) - 1n), 20) },
    since: { unixMs: dateMs(2016, 1, 1), what: "2016, when the spec was published" },
    timeless: "it holds no time",
  };
}

const GREGORIAN_TO_UNIX = 0x01b2_1dd2_1381_4000n;

function uuidValue(text: string): bigint {
  // The core counts bytes of UTF-8 here.
  const bytes = /^[\x00-\x7f]*$/.test(text) ? text.length : new TextEncoder().encode(text).length;
  let dashed: boolean;
  if (bytes === 36) dashed = true;
  else if (bytes === 32) dashed = false;
  else {
    throw parseError("UUID", text, { kind: "length", found: charCount(text), expected: "36 (8-4-4-4-12) or 32" });
  }
  let value = 0n;
  for (let at = 0; at < text.length; at++) {
    const c = text[at]!;
    // Up to the first character outside ASCII (an error), bytes and
    // UTF-16 units are counted alike.
    if (dashed && (at === 8 || at === 13 || at === 18 || at === 23)) {
      if (c !== "-") {
        const whole = String.fromCodePoint(text.codePointAt(at) ?? 0xfffd);
        throw parseError("UUID", text, { kind: "character", character: whole, position: at, expected: "'-'" });
      }
      continue;
    }
    const digit = digitOf(HEX, c);
    if (digit < 0) {
      const whole = String.fromCodePoint(text.codePointAt(at) ?? 0xfffd);
      throw parseError("UUID", text, { kind: "character", character: whole, position: at, expected: HEX.what });
    }
    value = (value << 4n) | BigInt(digit);
  }
  return value;
}

function uuidVariant(value: bigint): "ncs" | "rfc9562" | "microsoft" | "future" {
  const bits = Number((value >> 61n) & 7n);
  if ((bits & 4) === 0) return "ncs";
  if ((bits & 2) === 0) return "rfc9562";
  if ((bits & 1) === 0) return "microsoft";
  return "future";
}

/** The UUID `text` if it is an RFC 9562 UUID of versions 1 to 8 (for 32 digits without dashes). */
export function uuidKnownVersion(text: string): boolean {
  const value = uuidValue(text);
  const version = Number((value >> 76n) & 15n);
  return uuidVariant(value) === "rfc9562" && version >= 1 && version <= 8;
}

function uuid(text: string): TextId {
  const value = uuidValue(text);
  const version = Number((value >> 76n) & 15n);
  const variant = uuidVariant(value);
  const rfc = variant === "rfc9562";
  const is = (v: number): boolean => rfc && version === v;
  let family: string;
  if (value === 0n) family = "uuid-nil";
  else if (value === (1n << 128n) - 1n) family = "uuid-max";
  else if (rfc && version >= 1 && version <= 8) family = `uuid-v${version}`;
  else family = "uuid";
  const high = (value >> 96n) & 0xffff_ffffn;
  const mid = (value >> 80n) & 0xffffn;
  const twelve = (value >> 64n) & 0xfffn;
  let time: Pick<TextReading, "time" | "unixNs" | "timestampMs"> = { time: null, unixNs: null, timestampMs: null };
  let ticks: bigint | undefined;
  if (is(1)) ticks = (twelve << 48n) | (mid << 32n) | high;
  else if (is(6)) ticks = (high << 28n) | (mid << 12n) | twelve;
  if (ticks !== undefined) time = timed((ticks - GREGORIAN_TO_UNIX) * 100n, 100n);
  else if (is(7)) time = timed((value >> 80n) * MILLISECOND, MILLISECOND);
  const fields: Record<string, FieldValue> = { version, variant };
  if (is(1) || is(6)) {
    fields.clock_seq = Number((value >> 48n) & 0x3fffn);
    fields.node = hex(value & 0xffff_ffff_ffffn, 12);
  } else if (is(7)) {
    fields.rand_a = Number((value >> 64n) & 0xfffn);
    fields.rand_b = hex(value & ((1n << 62n) - 1n), 16);
  }
  let timeless: string;
  if (value === 0n) timeless = "the nil UUID holds no time";
  else if (value === (1n << 128n) - 1n) timeless = "the max UUID holds no time";
  else if (!rfc) timeless = "only RFC 9562's variant has time fields";
  else if (version === 2) timeless = "a version 2 (DCE security) UUID overwrites its time with a local id";
  else if (version === 3 || version === 5) timeless = "a version 3 or 5 UUID is a hash of a name, with no time";
  else if (version === 4) timeless = "a version 4 UUID is random, with no time";
  else if (version === 8) timeless = "a version 8 UUID's bits are its maker's own";
  else timeless = "this version has no time field";
  return {
    family,
    ...time,
    fields,
    since: is(1)
      ? { unixMs: dateMs(1990, 1, 1), what: "1990, OSF DCE's time-based UUIDs, which RFC 4122 took up" }
      : { unixMs: dateMs(2020, 1, 1), what: "2020, the first draft of versions 6 and 7" },
    timeless,
  };
}

function objectId(text: string): TextId {
  const value = readFormat(
    { name: "ObjectId", len: 24, alphabet: HEX, bits: 96, range: "000000000000000000000000..=ffffffffffffffffffffffff" },
    text,
  );
  return {
    family: "objectid",
    ...timed(((value >> 64n) & 0xffff_ffffn) * SECOND, SECOND),
    fields: { random: hex((value >> 24n) & 0xff_ffff_ffffn, 10), counter: Number(value & 0xff_ffffn) },
    since: { unixMs: dateMs(2009, 1, 1), what: "2009, MongoDB's first release" },
    timeless: "it holds no time",
  };
}

const KSUID_EPOCH_SECONDS = 1_400_000_000n;

function ksuid(text: string): TextId {
  const found = charCount(text);
  if (found !== 27) throw parseError("KSUID", text, { kind: "length", found, expected: "27" });
  let value = 0n;
  let position = 0;
  for (const c of text) {
    const digit = digitOf(BASE62, c);
    if (digit < 0) throw parseError("KSUID", text, { kind: "character", character: c, position, expected: BASE62.what });
    value = value * 62n + BigInt(digit);
    position += 1;
  }
  if (value >> 160n !== 0n) {
    throw parseError("KSUID", text, { kind: "range", range: "000000000000000000000000000..=aWgEPTl1tmebfsQzFP4bxwgy80V" });
  }
  return {
    family: "ksuid",
    ...timed(((value >> 128n) + KSUID_EPOCH_SECONDS) * SECOND, SECOND),
    fields: { payload: hex(value & ((1n << 128n) - 1n), 32) },
    since: { unixMs: dateMs(2017, 1, 1), what: "2017, when Segment published it" },
    timeless: "it holds no time",
  };
}

function tid(text: string): TextId {
  const value = readFormat({ name: "TID", len: 13, alphabet: SORTABLE, bits: 63, range: "2222222222222..=jzzzzzzzzzzzz" }, text);
  return {
    family: "tid",
    ...timed((value >> 10n) * MICROSECOND, MICROSECOND),
    fields: { clock_id: Number(value & 0x3ffn) },
    since: { unixMs: dateMs(2022, 1, 1), what: "2022, the AT Protocol's first code" },
    timeless: "it holds no time",
  };
}

const TIME2000_MS = 946_684_800_000n;

function misskeyTime(text: string): bigint {
  let value = 0n;
  for (const c of text.slice(0, 8)) value = value * 36n + BigInt(digitOf(BASE36, c));
  return value;
}

function misskeyAid(text: string): TextId {
  readFormat({ name: "Misskey aid", len: 10, alphabet: BASE36, bits: 128, range: "0000000000..=zzzzzzzzzz" }, text);
  return {
    family: "misskey-aid",
    ...timed((TIME2000_MS + misskeyTime(text)) * MILLISECOND, MILLISECOND),
    fields: { noise: text.slice(8, 10) },
    since: { unixMs: dateMs(2019, 1, 1), what: "2019, when Misskey took it up" },
    timeless: "it holds no time",
  };
}

function misskeyAidx(text: string): TextId {
  const value = readFormat(
    { name: "Misskey aidx", len: 16, alphabet: BASE36, bits: 128, range: "0000000000000000..=zzzzzzzzzzzzzzzz" },
    text,
  );
  return {
    family: "misskey-aidx",
    ...timed((TIME2000_MS + misskeyTime(text)) * MILLISECOND, MILLISECOND),
    fields: { node: text.slice(8, 12), counter: Number(value % 36n ** 4n) },
    since: { unixMs: dateMs(2019, 1, 1), what: "2019, when Misskey took up its aid" },
    timeless: "it holds no time",
  };
}

const TSID_EPOCH_MS = 1_577_836_800_000n;

/** The 64-bit value of TSID text (snowmint's base32 of an ID is the same text). */
export function tsidValue(text: string): bigint {
  return readFormat({ name: "TSID", len: 13, alphabet: CROCKFORD, bits: 64, range: "0000000000000..=FZZZZZZZZZZZZ" }, text);
}

function tsid(text: string): TextId {
  const value = tsidValue(text);
  return {
    family: "tsid",
    ...timed((TSID_EPOCH_MS + (value >> 22n)) * MILLISECOND, MILLISECOND),
    fields: { random: Number(value & 0x3f_ffffn) },
    since: { unixMs: dateMs(2020, 1, 1), what: "2020-01-01, its epoch" },
    timeless: "it holds no time",
  };
}

/** The text families by the name a caller gives. */
export const TEXT_FAMILIES: Readonly<Record<string, (text: string) => TextId>> = Object.freeze({
  ulid,
  uuid,
  objectid: objectId,
  ksuid,
  tid,
  "misskey-aid": misskeyAid,
  "misskey-aidx": misskeyAidx,
  tsid,
});

/** The names {@link decodeText} reads. */
export const TEXT_FAMILY_NAMES: readonly string[] = Object.freeze(Object.keys(TEXT_FAMILIES));

/** Reads `text` as `family` with what the inspector needs. @internal */
export function readText(family: string, text: string): TextId {
  const name = family.toLowerCase();
  const reader = TEXT_FAMILIES[name.startsWith("uuid") ? "uuid" : name];
  if (!reader) {
    throw new SnowmintError(
      "UnknownName",
      `unknown text family ${quote(family)} (expected ${TEXT_FAMILY_NAMES.join(", ")})`,
      { subject: "family", value: family.slice(0, 64) },
    );
  }
  if (typeof text !== "string") {
    throw new SnowmintError("InvalidText", `${family} ${quote(String(text))} is not text`, { subject: family });
  }
  return reader(text);
}

/**
 * Reads an ID of a text family: `ulid`, `uuid` (any version; `uuid-v7`
 * and the like read the same), `objectid`, `ksuid`, `tid` (the AT
 * Protocol's), `misskey-aid`, `misskey-aidx` or `tsid` (its 13-character
 * text), as the core's inspector reads it. The answer names the family
 * found (`uuid-v7`), its time at the family's precision (null when it
 * holds none: UUID v4, v5...) and its other fields.
 *
 * @throws {SnowmintError} `InvalidText` (a length or a character that is
 *   not the family's), `OutOfRange` (a value too large for the family),
 *   `UnknownName` (a family this does not read).
 */
export function decodeText(text: string, family: string): TextReading {
  const { family: found, time, unixNs, timestampMs, fields } = readText(family, text);
  return { family: found, time, unixNs, timestampMs, fields };
}
