// The core's inspector (crates/snowmint/src/inspect/), in TypeScript: it
// finds the IDs in any text (bare words, links of the sites whose IDs it
// knows, Discord's markup) and reads each as every family it could be,
// most plausible first, saying why.
//
// The text is read as UTF-8 bytes, as the core reads it, so that tokens
// and spans are the core's; `start` and `end` are also given as indices
// of the JavaScript string. Work is linear in the text's length: every
// run of characters is looked at from its start only, a link at most
// 4096 characters long, markup at most 128, a word at most 36.

import { SnowmintError } from "./errors.js";
import { PRESETS, decode, layout as presetLayout, type Layout, type LayoutRef } from "./layout.js";
import { readText, tsidValue, uuidKnownVersion, type FieldValue, type Since, type TextId } from "./text.js";
import { dateMs, formatMs, formatNs, parseTime, type TimeInput } from "./time.js";

/** The longest text {@link inspect} reads, in UTF-8 bytes: 1 MiB. */
export const MAX_TEXT = 1 << 20;
/** The most tokens {@link inspect} gives for one text. */
export const MAX_TOKENS = 10_000;
/** How far in the future a time may be before it is implausible: a day, for clocks that are off. */
export const FUTURE_SLACK_MS = 86_400_000;
/** Twitter's first Snowflake ID; below it, IDs were sequential (TweetedAt's figure). */
export const TWITTER_FIRST_SNOWFLAKE = 29_700_859_247n;
/** The fewest digits a bare number needs in running text to be read as an ID. */
export const MIN_DIGITS = 12;
/** Discord's timestamp markup styles. */
export const TIMESTAMP_STYLES = "tTdDfFsSR";

const MAX_URL = 4096;
const MAX_WORD = 36;
const MAX_MARKUP = 128;
const MAX_U64 = (1n << 64n) - 1n;

/** How plausible a reading is, most first. */
export type Plausibility = "pinned" | "plausible" | "implausible";

const RANK: Record<Plausibility, number> = { pinned: 0, plausible: 1, implausible: 2 };

/** One way to read a token. */
export interface Reading {
  /** The family (`discord`, `ulid`, `uuid-v7`, `discord-timestamp`...). */
  readonly family: string;
  /** The time it holds, RFC 3339 at the family's precision, or null. */
  readonly time: string | null;
  /** Its fields, by the family's names; an integer's own value as `id`, a decimal string. */
  readonly fields: Readonly<Record<string, FieldValue>>;
  readonly plausibility: Plausibility;
  /** Why it was judged so, in words. */
  readonly why: string;
}

/** An ID found in a text, with its readings, most plausible first. */
export interface Token {
  /** The ID as written. */
  readonly input: string;
  /** Where it was found (`user mention`, `post in a Bluesky link`), or null for a bare word. */
  readonly context: string | null;
  /** Where it lies in the text, as indices of the JavaScript string. */
  readonly start: number;
  readonly end: number;
  /** Where it lies in the text's UTF-8 bytes, as the core's `start` and `end`. */
  readonly byteStart: number;
  readonly byteEnd: number;
  readonly candidates: readonly Reading[];
}

/** Options of {@link inspect}. */
export interface InspectOptions {
  /** When now is, for judging times in the future (default: the clock). */
  now?: TimeInput;
  /** The layouts integers are read as (default: every preset). */
  layouts?: readonly LayoutRef[];
  /** Keep each token's best `top` readings (default: all). */
  top?: number;
}

// ------------------------------------------------------------------ bytes

const isDigit = (b: number): boolean => b >= 48 && b <= 57;
const isAlpha = (b: number): boolean => (b >= 65 && b <= 90) || (b >= 97 && b <= 122);
const isAlnum = (b: number): boolean => isDigit(b) || isAlpha(b);
const isHex = (b: number): boolean => isDigit(b) || (b >= 65 && b <= 70) || (b >= 97 && b <= 102);
const isWordChar = (b: number): boolean => isAlnum(b) || b === 45 || b === 95;
const URL_PUNCTUATION = new Set(Array.from("-._~:/?#@!$&*+,;=%", (c) => c.charCodeAt(0)));
const isUrlChar = (b: number): boolean => isAlnum(b) || URL_PUNCTUATION.has(b);
const isSpace = (b: number): boolean => b === 32 || b === 9 || b === 10 || b === 12 || b === 13;

function ascii(bytes: Uint8Array, start: number, end: number): string {
  let out = "";
  for (let i = start; i < end; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, Math.min(end, i + 4096)));
  }
  return out;
}

function run(text: Uint8Array, at: number, kind: (b: number) => boolean): number {
  let end = at;
  while (end < text.length && kind(text[end]!)) end += 1;
  return end;
}

/** A u64 of text in a radix, as Rust's `from_str_radix` (a leading `+` allowed), or undefined. */
function parseRadix(text: string, radix: number): bigint | undefined {
  let digits = text;
  if (digits.startsWith("+") && digits.length > 1) digits = digits.slice(1);
  if (digits === "") return undefined;
  let value = 0n;
  const big = BigInt(radix);
  for (const c of digits) {
    const d = parseInt(c, radix);
    if (Number.isNaN(d)) return undefined;
    value = value * big + BigInt(d);
    if (value > MAX_U64) return undefined;
  }
  return value;
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function parseBase58(text: string): bigint | undefined {
  let value = 0n;
  for (const c of text) {
    const d = BASE58.indexOf(c);
    if (d < 0) return undefined;
    value = value * 58n + BigInt(d);
  }
  return value > MAX_U64 ? undefined : value;
}

// ----------------------------------------------------------------- shapes

type Written = "decimal" | "hex" | "base32" | "base58" | "an Instagram shortcode";

type Shape =
  | { kind: "integer"; value: bigint; written: Written }
  | { kind: "text"; id: TextId }
  | { kind: "discord-time"; unixSeconds: bigint; style: string | null };

interface Found {
  start: number;
  end: number;
  text: string;
  context: string | null;
  pin: string | null;
  shapes: Shape[];
}

function tryText(family: string, text: string): TextId | undefined {
  try {
    return readText(family, text);
  } catch {
    return undefined;
  }
}

/** What a word could be, as the core's `classify`. */
function classify(text: string, standalone: boolean): Shape[] {
  const shapes: Shape[] = [];
  const len = text.length;
  if (len === 0 || len > MAX_WORD) return shapes;
  let digits = 0;
  let allHex = true;
  let anyAlpha = false;
  for (let i = 0; i < len; i++) {
    const b = text.charCodeAt(i);
    if (isDigit(b)) digits += 1;
    if (!isHex(b)) allHex = false;
    if (isAlpha(b)) anyAlpha = true;
  }
  const allDigits = digits === len;
  // The alphabets that spell English words need a digit in running text.
  const wordyOk = digits > 0 || standalone;
  if (allDigits && (len >= MIN_DIGITS || standalone)) {
    const value = BigInt(text);
    if (value <= MAX_U64) shapes.push({ kind: "integer", value, written: "decimal" });
  }
  // A `0x` not followed by hex is no hex prefix: Crockford base32 of an
  // integer below 2^60 starts with `0` and may go on with `X`
  // (`0X4P5A9Y9BC00`), and is read as its other shapes, as the core does.
  if (text.startsWith("0x") || text.startsWith("0X")) {
    const hex = text.slice(2);
    const value = hex.length >= 1 && hex.length <= 16 ? parseRadix(hex, 16) : undefined;
    if (value !== undefined) {
      shapes.push({ kind: "integer", value, written: "hex" });
      return shapes;
    }
  }
  const push = (family: string): TextId | undefined => {
    const id = tryText(family, text);
    if (id) shapes.push({ kind: "text", id });
    return id;
  };
  switch (len) {
    case 36:
      push("uuid");
      break;
    case 32:
      // Without dashes, only an RFC 9562 UUID of a known version: 32 hex
      // digits are as often a hash.
      if (tryText("uuid", text) && uuidKnownVersion(text)) push("uuid");
      break;
    case 27:
      if (wordyOk) push("ksuid");
      break;
    case 26:
      push("ulid");
      break;
    case 24:
      if (allHex) push("objectid");
      break;
    case 16:
      if (!allDigits) {
        if (allHex) {
          const value = parseRadix(text, 16);
          if (value !== undefined) shapes.push({ kind: "integer", value, written: "hex" });
        }
        if (wordyOk) push("misskey-aidx");
      }
      break;
    case 13:
      if (!allDigits) {
        push("tid");
        if (wordyOk && push("tsid")) {
          // snowmint's own base32 is the same text.
          shapes.push({ kind: "integer", value: tsidValue(text), written: "base32" });
        }
      }
      break;
    case 10:
      if (!allDigits && wordyOk) push("misskey-aid");
      break;
  }
  const base58Len = standalone ? len >= 8 && len <= 11 : len >= 10 && len <= 11;
  if (!allDigits && base58Len && (digits > 0 || standalone) && anyAlpha) {
    const value = parseBase58(text);
    if (value !== undefined) shapes.push({ kind: "integer", value, written: "base58" });
  }
  return shapes;
}

// ----------------------------------------------------------------- markup

function markupDigits(text: Uint8Array, start: number, end: number): bigint | undefined {
  const len = end - start;
  if (len === 0 || len > 20) return undefined;
  for (let i = start; i < end; i++) if (!isDigit(text[i]!)) return undefined;
  const value = BigInt(ascii(text, start, end));
  return value <= MAX_U64 ? value : undefined;
}

/** Discord's markup at `at` (a `<`): the token and where the markup ends. */
function readMarkup(text: Uint8Array, at: number): [Found, number] | undefined {
  const windowEnd = Math.min(text.length, at + MAX_MARKUP);
  let close = -1;
  for (let i = at; i < windowEnd; i++) {
    if (text[i] === 62) {
      close = i - at;
      break;
    }
  }
  if (close < 0) return undefined;
  const innerStart = at + 1;
  const innerEnd = at + close;
  const end = at + close + 1;
  const b = (i: number): number | undefined => (innerStart + i < innerEnd ? text[innerStart + i] : undefined);
  /** After `NAME:`, where NAME is one or more of `kind`; or undefined. */
  const named = (from: number, kind: (b: number) => boolean): number | undefined => {
    let i = from;
    while (i < innerEnd && text[i] !== 58) i += 1;
    if (i >= innerEnd || i === from) return undefined;
    for (let j = from; j < i; j++) if (!kind(text[j]!)) return undefined;
    return i + 1;
  };
  const emoji = (c: number): boolean => isAlnum(c) || c === 95 || c === 126;
  const command = (c: number): boolean => isAlnum(c) || c === 45 || c === 95 || c === 32;
  let context: string | null;
  let restStart: number | undefined;
  if (b(0) === 64 && b(1) === 33) [context, restStart] = ["user mention", innerStart + 2];
  else if (b(0) === 64 && b(1) === 38) [context, restStart] = ["role mention", innerStart + 2];
  else if (b(0) === 64) [context, restStart] = ["user mention", innerStart + 1];
  else if (b(0) === 35) [context, restStart] = ["channel mention", innerStart + 1];
  else if (b(0) === 116 && b(1) === 58) [context, restStart] = [null, innerStart + 2];
  else if (b(0) === 97 && b(1) === 58) [context, restStart] = ["animated custom emoji", named(innerStart + 2, emoji)];
  else if (b(0) === 58) [context, restStart] = ["custom emoji", named(innerStart + 1, emoji)];
  else if (b(0) === 47) [context, restStart] = ["slash command mention", named(innerStart + 1, command)];
  else return undefined;
  if (restStart === undefined) return undefined;
  if (context !== null) {
    const value = markupDigits(text, restStart, innerEnd);
    if (value === undefined) return undefined;
    const found: Found = {
      text: ascii(text, restStart, innerEnd),
      start: restStart,
      end: innerEnd,
      context,
      pin: "discord",
      shapes: [{ kind: "integer", value, written: "decimal" }],
    };
    return [found, end];
  }
  // <t:SECONDS> or <t:SECONDS:STYLE>
  let numberEnd = innerEnd;
  let style: string | null = null;
  if (innerEnd - restStart >= 2 && text[innerEnd - 2] === 58) {
    style = String.fromCharCode(text[innerEnd - 1]!);
    numberEnd = innerEnd - 2;
    if (!TIMESTAMP_STYLES.includes(style)) return undefined;
  }
  const negative = text[restStart] === 45 && restStart < numberEnd;
  const magnitude = markupDigits(text, negative ? restStart + 1 : restStart, numberEnd);
  if (magnitude === undefined || magnitude > (1n << 63n) - 1n) return undefined;
  const found: Found = {
    text: ascii(text, at, end),
    start: at,
    end,
    context: "Discord timestamp markup",
    pin: null,
    shapes: [{ kind: "discord-time", unixSeconds: negative ? -magnitude : magnitude, style }],
  };
  return [found, end];
}

// ------------------------------------------------------------------ links

const SENTENCE_END = new Set(Array.from(".,;:!?'*", (c) => c.charCodeAt(0)));

/** The tokens of a link in text[start..end], or undefined when it is no link this knows. */
function readUrl(text: Uint8Array, start: number, runEnd: number): Found[] | undefined {
  let end = runEnd;
  // Punctuation that ends a sentence is not part of the link.
  while (end > start && SENTENCE_END.has(text[end - 1]!)) end -= 1;
  const link = newLink(text, start, end);
  if (!link) return undefined;
  const found: Found[] = [];
  link.tokens(found);
  return found.length > 0 ? found : undefined;
}

function startsWithCase(text: Uint8Array, start: number, end: number, prefix: string): boolean {
  if (end - start <= prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    const c = text[start + i]!;
    const lower = c >= 65 && c <= 90 ? c + 32 : c;
    if (lower !== prefix.charCodeAt(i)) return false;
  }
  return true;
}

function newLink(text: Uint8Array, spanStart: number, spanEnd: number) {
  let atUri = false;
  let skip = 0;
  if (startsWithCase(text, spanStart, spanEnd, "https://")) skip = 8;
  else if (startsWithCase(text, spanStart, spanEnd, "http://")) skip = 7;
  else if (startsWithCase(text, spanStart, spanEnd, "at://")) [atUri, skip] = [true, 5];
  const start = spanStart + skip;
  let slash = -1;
  for (let i = start; i < spanEnd; i++) {
    if (text[i] === 47) {
      slash = i;
      break;
    }
  }
  if (slash < 0) return undefined;
  const hostText = ascii(text, start, slash);
  if (!atUri) {
    // A domain: letters, digits, dots and dashes, with a dot and a port at most.
    const name = hostText.split(":")[0] ?? "";
    const domain = name !== "" && name.includes(".") && /^[A-Za-z0-9.-]+$/.test(name);
    if (!domain) return undefined;
  }
  let host = hostText.toLowerCase();
  const colon = host.indexOf(":");
  if (colon >= 0 && !atUri) host = host.slice(0, colon);
  for (const prefix of ["www.", "mobile.", "m."]) {
    if (host.startsWith(prefix)) host = host.slice(prefix.length);
  }
  // The path ends at the query or the fragment.
  let pathEnd = spanEnd;
  for (let i = slash; i < spanEnd; i++) {
    if (text[i] === 63 || text[i] === 35) {
      pathEnd = i;
      break;
    }
  }
  const segments: [number, number][] = [];
  let at = slash;
  while (at < pathEnd) {
    let end = pathEnd;
    for (let i = at + 1; i < pathEnd; i++) {
      if (text[i] === 47) {
        end = i;
        break;
      }
    }
    if (end > at + 1) segments.push([at + 1, end]);
    at = end;
  }
  const segment = (index: number): string | undefined => {
    const range = segments[index];
    return range ? ascii(text, range[0], range[1]) : undefined;
  };
  const is = (index: number, name: string): boolean => segment(index)?.toLowerCase() === name;
  const hostIs = (domains: string[]): boolean =>
    domains.some((domain) => host === domain || (host.endsWith(domain) && host.slice(0, -domain.length).endsWith(".")));

  const pushNumber = (s: number, e: number, family: string, context: string, found: Found[]): void => {
    const digits = ascii(text, s, e);
    if (!/^[0-9]*$/.test(digits) || digits === "") return;
    const value = BigInt(digits);
    if (value > MAX_U64) return;
    found.push({ text: digits, start: s, end: e, context, pin: family, shapes: [{ kind: "integer", value, written: "decimal" }] });
  };
  const number = (index: number, family: string, context: string, found: Found[]): void => {
    const range = segments[index];
    if (range) pushNumber(range[0], range[1], family, context, found);
  };
  const textToken = (index: number, family: string, context: string, found: Found[]): void => {
    const range = segments[index];
    if (!range) return;
    const word = ascii(text, range[0], range[1]);
    const shapes = classify(word, true);
    if (shapes.length > 0) found.push({ text: word, start: range[0], end: range[1], context, pin: family, shapes });
  };
  const shortcode = (index: number, found: Found[]): void => {
    const range = segments[index];
    if (!range) return;
    const code = ascii(text, range[0], range[1]);
    if (code === "" || code.length > 11) return;
    let value = 0n;
    for (const c of code) {
      const b = c.charCodeAt(0);
      let digit: number;
      if (b >= 65 && b <= 90) digit = b - 65;
      else if (b >= 97 && b <= 122) digit = b - 97 + 26;
      else if (isDigit(b)) digit = b - 48 + 52;
      else if (c === "-") digit = 62;
      else if (c === "_") digit = 63;
      else return;
      value = value * 64n + BigInt(digit);
      if (value > MAX_U64) return;
    }
    found.push({
      text: code,
      start: range[0],
      end: range[1],
      context: "post in an Instagram link",
      pin: "instagram",
      shapes: [{ kind: "integer", value, written: "an Instagram shortcode" }],
    });
  };
  const discordCdn = (found: Found[]): void => {
    const kind = (segment(0) ?? "").toLowerCase();
    for (let index = 1; index < segments.length; index++) {
      let context = "ID in a Discord CDN link";
      if ((kind === "attachments" || kind === "ephemeral-attachments") && index === 1) context = "channel in a Discord CDN link";
      else if ((kind === "attachments" || kind === "ephemeral-attachments") && index === 2) context = "attachment in a Discord CDN link";
      else if (kind === "emojis") context = "emoji in a Discord CDN link";
      else if (kind === "stickers") context = "sticker in a Discord CDN link";
      else if ((kind === "avatars" || kind === "users") && index === 1) context = "user in a Discord CDN link";
      else if (["icons", "splashes", "banners", "guilds"].includes(kind) && index === 1) context = "server or user in a Discord CDN link";
      // `/emojis/ID.png`: the ID is the name before the extension.
      const [s, e] = segments[index]!;
      let digits = 0;
      while (s + digits < e && isDigit(text[s + digits]!)) digits += 1;
      const restStart = s + digits;
      if (digits >= 15 && digits <= 20 && (restStart === e || text[restStart] === 46)) {
        pushNumber(s, s + digits, "discord", context, found);
      }
    }
  };
  const anyHost = (found: Found[]): void => {
    const user = (i: number): boolean => {
      const s = segment(i);
      return s !== undefined && s.startsWith("@") && s.length > 1;
    };
    let statusAt: number | undefined;
    if (user(0) && segments.length === 2) statusAt = 1;
    else if (is(0, "web") && (user(1) || is(1, "statuses"))) statusAt = 2;
    else if ((is(0, "users") || (is(0, "api") && is(1, "v1"))) && is(2, "statuses")) statusAt = 3;
    if (statusAt !== undefined) {
      number(statusAt, "mastodon", "post in a Mastodon link", found);
    } else if (is(0, "notes") && segments.length === 2) {
      const [s, e] = segments[1]!;
      const word = ascii(text, s, e);
      const pin = e - s === 10 ? "misskey-aid" : e - s === 16 ? "misskey-aidx" : undefined;
      if (!pin) return;
      const shapes = classify(word, true);
      if (shapes.length > 0) found.push({ text: word, start: s, end: e, context: "note in a Misskey link", pin, shapes });
    }
  };
  return {
    tokens(found: Found[]): void {
      if (atUri) {
        // at://AUTHORITY/COLLECTION/RKEY: the record key of most
        // collections (posts, likes, reposts) is a TID.
        if (segments.length >= 2) textToken(1, "tid", "record key of an at:// URI", found);
      } else if (hostIs(["x.com", "twitter.com", "fxtwitter.com", "vxtwitter.com", "fixupx.com", "fixvx.com", "nitter.net"])) {
        // `/USER/status/ID`, `/i/status/ID`, `/i/web/status/ID`.
        const at = is(0, "i") && is(1, "web") ? 2 : 1;
        if (is(at, "status") || is(at, "statuses")) number(at + 1, "twitter", "post in an X/Twitter link", found);
      } else if (hostIs(["discordapp.net", "cdn.discordapp.com", "cdn.discord.com"])) {
        discordCdn(found);
      } else if (hostIs(["discord.com", "discordapp.com"])) {
        if (is(0, "channels")) {
          if (!is(1, "@me")) number(1, "discord", "server in a Discord link", found);
          number(2, "discord", "channel in a Discord link", found);
          number(3, "discord", "message in a Discord link", found);
        }
      } else if (hostIs(["bsky.app"])) {
        if (is(0, "profile") && is(2, "post")) textToken(3, "tid", "post in a Bluesky link", found);
      } else if (hostIs(["instagram.com", "instagr.am"])) {
        const kinds = ["p", "reel", "reels", "tv"];
        for (let i = 0; i < Math.min(segments.length, 2); i++) {
          if (kinds.some((kind) => is(i, kind))) {
            shortcode(i + 1, found);
            break;
          }
        }
      } else {
        anyHost(found);
      }
    },
  };
}

// ---------------------------------------------------------------- scanner

function trimmed(text: Uint8Array, lineStart: number, lineEnd: number): [number, number] {
  let start = lineStart;
  let end = lineEnd;
  while (start < end && isSpace(text[start]!)) start += 1;
  while (end > start && isSpace(text[end - 1]!)) end -= 1;
  const pairs = ['""', "''", "``", "()", "[]", "{}"].map((p) => [p.charCodeAt(0), p.charCodeAt(1)]);
  while (end - start >= 2) {
    const first = text[start]!;
    const last = text[end - 1]!;
    if (!pairs.some(([a, b]) => a === first && b === last)) break;
    start += 1;
    end -= 1;
  }
  return [start, end];
}

/** The IDs in a text, in order, as the core's `scan`. */
function* scan(text: Uint8Array): Generator<Found> {
  let at = 0;
  let partEnd = 0;
  let lineEnd = 0;
  let line: [number, number] = [0, 0];
  let started = false;
  let nextClose: number | undefined;
  const word = (start: number, end: number, standalone: boolean): Found | undefined => {
    const w = ascii(text, start, end);
    const shapes = classify(w, standalone);
    return shapes.length === 0 ? undefined : { text: w, start, end, context: null, pin: null, shapes };
  };
  const closeNear = (from: number): boolean => {
    let close = nextClose;
    if (close === undefined || close < from) {
      close = text.indexOf(62, from);
      if (close < 0) close = text.length;
      nextClose = close;
    }
    return close < text.length && close - from < MAX_MARKUP;
  };
  while (at < text.length) {
    const b = text[at]!;
    while (!started || at >= lineEnd) {
      const start = started ? lineEnd + 1 : 0;
      started = true;
      const newline = text.indexOf(10, Math.min(start, text.length));
      lineEnd = newline < 0 ? text.length : newline;
      line = trimmed(text, start, lineEnd);
    }
    if (at < partEnd) {
      if (isAlnum(b)) {
        const end = run(text, at, isAlnum);
        const found = word(at, end, false);
        at = end;
        if (found) yield found;
      } else {
        at += 1;
      }
      continue;
    }
    if (b === 60 && closeNear(at)) {
      const markup = readMarkup(text, at);
      if (markup) {
        at = markup[1];
        yield markup[0];
        continue;
      }
    }
    if (isUrlChar(b) && (at === 0 || !isUrlChar(text[at - 1]!))) {
      const end = run(text, at, isUrlChar);
      if (end - at <= MAX_URL) {
        const tokens = readUrl(text, at, end);
        if (tokens) {
          at = end;
          yield* tokens;
          continue;
        }
      }
    }
    if (isWordChar(b) && (at === 0 || !isWordChar(text[at - 1]!))) {
      const end = run(text, at, isWordChar);
      const standalone = at === line[0] && end === line[1];
      const found = word(at, end, standalone);
      if (found) {
        at = end;
        yield found;
        continue;
      }
      let dashed = false;
      for (let i = at; i < end && !dashed; i++) dashed = text[i] === 45 || text[i] === 95;
      // Read again in parts, from here.
      if (dashed) partEnd = end;
      else at = end;
      continue;
    }
    at += 1;
  }
}

// ---------------------------------------------------------------- ranking

/** When each preset's family began, as the core's catalog has it. */
const KNOWN_SINCE: Record<string, Since> = {
  twitter: { unixMs: 1_288_834_974_657, what: "2010-11-04, Twitter's Snowflake epoch" },
  discord: { unixMs: 1_420_070_400_000, what: "2015-01-01, Discord's epoch" },
  instagram: { unixMs: 1_314_220_021_721, what: "2011-08-24, Instagram's epoch" },
  mastodon: { unixMs: dateMs(2016, 3, 16), what: "2016-03-16, Mastodon's first release" },
  sonyflake: { unixMs: dateMs(2014, 9, 1), what: "2014-09-01, Sonyflake's epoch" },
  "sonyflake-v2": { unixMs: dateMs(2025, 1, 1), what: "2025-01-01, Sonyflake v2's default start" },
  baidu: { unixMs: 1_463_673_600_000, what: "2016-05-20 in UTC+8, uid-generator's epoch" },
  hazelcast: { unixMs: dateMs(2018, 1, 1), what: "2018-01-01, Hazelcast's Flake ID epoch" },
  tsid: { unixMs: dateMs(2020, 1, 1), what: "2020-01-01, TSID's epoch" },
  yitter: { unixMs: 1_582_136_402_000, what: "2020-02-20, yitter/IdGenerator's epoch" },
  cosid: { unixMs: 1_577_203_200_000, what: "2019-12-25 in UTC+8, CosId's epoch" },
  "cosid-safe-js": { unixMs: 1_577_203_200_000, what: "2019-12-25 in UTC+8, CosId's epoch" },
  leaf: { unixMs: dateMs(2017, 1, 1), what: "2017, when Meituan published Leaf, on Twitter's epoch" },
  linkedin: { unixMs: dateMs(2003, 5, 5), what: "2003-05-05, LinkedIn's launch" },
  tiktok: { unixMs: dateMs(2016, 9, 1), what: "2016-09, when ByteDance launched Douyin, TikTok's origin" },
  "safe-js-10ms": { unixMs: dateMs(2025, 1, 1), what: "2025-01-01, the layout's epoch" },
};

const STYLE_NAMES: Record<string, string> = {
  t: "short time",
  T: "long time",
  d: "short date",
  D: "long date",
  F: "long date and time",
  s: "short date, short time",
  S: "short date, medium time",
  R: "relative time",
};

interface Family {
  name: string;
  layout: Layout;
  since: Since;
}

class Inspector {
  readonly #families: Family[];
  readonly #nowMs: number;

  constructor(families: Family[], nowMs: number) {
    this.#families = families;
    this.#nowMs = nowMs;
  }

  read(found: Found, byteToIndex: (byte: number) => number, top: number): Token {
    const candidates: Reading[] = [];
    for (const shape of found.shapes) this.#shapeReadings(found, shape, candidates);
    // A stable sort: equals keep the order they were made in.
    candidates.sort((a, b) => RANK[a.plausibility] - RANK[b.plausibility]);
    if (candidates.length > top) candidates.length = top;
    return {
      input: found.text,
      context: found.context,
      start: byteToIndex(found.start),
      end: byteToIndex(found.end),
      byteStart: found.start,
      byteEnd: found.end,
      candidates,
    };
  }

  #shapeReadings(found: Found, shape: Shape, out: Reading[]): void {
    if (shape.kind === "integer") {
      const { value, written } = shape;
      const pinned = found.pin === null ? undefined : this.#families.find((f) => f.name === found.pin);
      for (const family of this.#families) {
        if (pinned && pinned.name !== family.name) continue;
        const readAs = written === "decimal" ? "" : `${written} read as ${value}; `;
        const fields: Record<string, FieldValue> = { id: value.toString() };
        let time: string | null;
        let timeMs: number | null;
        let why = "";
        if (family.name === "twitter" && value < TWITTER_FIRST_SNOWFLAKE) {
          time = null;
          timeMs = null;
          why =
            "below 29700859247, where Snowflake began (TweetedAt): a sequential ID from before 2010-11-04, which holds no time";
        } else {
          if (value > family.layout.maxId) continue;
          const decoded = decode(value, family.layout);
          for (const field of family.layout.fields) {
            if (field.role !== "time" && field.width > 0) fields[field.name] = decoded.fields[field.name]!;
          }
          time = decoded.time;
          timeMs = decoded.timestampMs;
        }
        out.push(this.#judge(family.name, time, timeMs, fields, family.since, pinned ? found.context : null, `${readAs}${why}`));
      }
    } else if (shape.kind === "text") {
      const id = shape.id;
      const pinned = found.pin === id.family;
      out.push(
        this.#judge(id.family, id.time, id.timestampMs, id.fields, id.since, pinned ? found.context : null, id.time === null ? id.timeless : ""),
      );
    } else {
      const letter = shape.style ?? "f";
      out.push({
        family: "discord-timestamp",
        time: formatNs(shape.unixSeconds * 1_000_000_000n, 1_000_000_000n),
        fields: { style: letter, style_name: STYLE_NAMES[letter] ?? "short date and time" },
        plausibility: "pinned",
        why: "Discord's timestamp markup: a time, not an ID",
      });
    }
  }

  #judge(
    family: string,
    time: string | null,
    timeMs: number | null,
    fields: Record<string, FieldValue>,
    since: Since,
    pinnedBy: string | null,
    note: string,
  ): Reading {
    let why = note;
    const push = (part: string): void => {
      if (why !== "" && !why.endsWith("; ")) why += "; ";
      why += part;
    };
    let odd: string | undefined;
    if (time !== null && timeMs !== null) {
      if (timeMs < since.unixMs) odd = `${time} is before ${family} began (${since.what})`;
      else if (timeMs > this.#nowMs + FUTURE_SLACK_MS) odd = `${time} is in the future (now is ${formatMs(this.#nowMs)})`;
    }
    let plausibility: Plausibility;
    if (pinnedBy !== null) {
      push(`pinned: found as the ${pinnedBy}, so ${family}`);
      if (odd) push(`though ${odd}`);
      plausibility = "pinned";
    } else if (odd) {
      push(`implausible: ${odd}`);
      plausibility = "implausible";
    } else {
      if (time !== null) push(`plausible: between when ${family} began (${since.what}) and now`);
      plausibility = "plausible";
    }
    return { family, time, fields, plausibility, why };
  }
}

function outOfRange(name: string, input: string, max: number): SnowmintError {
  return new SnowmintError("OutOfRange", `${name} ${input} is out of range (0..=${max})`, {
    subject: name,
    value: input,
    min: "0",
    max: String(max),
  });
}

/** UTF-16 index of each UTF-8 byte offset of `text` (only called at token bounds, in order). */
function byteIndexer(text: string): (byte: number) => number {
  let byte = 0;
  let index = 0;
  return (target: number): number => {
    if (target < byte) {
      byte = 0;
      index = 0;
    }
    while (byte < target && index < text.length) {
      const code = text.codePointAt(index)!;
      byte += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
      index += code >= 0x10000 ? 2 : 1;
    }
    return index;
  };
}

/**
 * Finds the IDs in `text` and reads each as every family it could be,
 * most plausible first, as the core's inspector (`snowmint inspect`,
 * `POST /v1/inspect`): bare words of every family (Snowflake integers
 * of 12 digits or more, or any standing alone on a line; ULID, UUID,
 * ObjectId, KSUID, TID, Misskey, TSID; hex and base58 integers), the IDs
 * in links of X/Twitter, Discord, Bluesky, Instagram, Mastodon and Misskey
 * (pinned to their family), and Discord's mentions and timestamp markup.
 *
 * A reading is `pinned` when where the ID was found says its family,
 * `implausible` when its time is before its family began or more than a
 * day after `now`, else `plausible`; `why` says which and why.
 *
 * @throws {SnowmintError} `OutOfRange` for a text over {@link MAX_TEXT}
 *   bytes or with more than {@link MAX_TOKENS} tokens.
 */
export function inspect(text: string, options: InspectOptions = {}): Token[] {
  const bytes = new TextEncoder().encode(String(text));
  if (bytes.length > MAX_TEXT) throw outOfRange("text length", String(bytes.length), MAX_TEXT);
  const nowMs = options.now === undefined ? Date.now() : Number(parseTime(options.now, "now", Date.now));
  const layouts = options.layouts === undefined ? PRESETS : options.layouts.map((l) => presetLayout(l));
  const families = layouts.map((l) => ({
    // A layout that is no preset is read as `custom`, as `snowmint inspect --layout` names it.
    name: l.family === null ? "custom" : l.name,
    layout: l,
    since: KNOWN_SINCE[l.name] ?? { unixMs: l.epochMs, what: "its epoch" },
  }));
  const top = options.top === undefined ? Infinity : options.top;
  if (top !== Infinity && (!Number.isInteger(top) || top < 1)) {
    throw new SnowmintError("OutOfRange", `top ${options.top} is out of range (1..)`, { subject: "top", value: String(options.top), min: "1" });
  }
  const inspector = new Inspector(families, nowMs);
  const toIndex = byteIndexer(String(text));
  const tokens: Token[] = [];
  for (const found of scan(bytes)) {
    if (tokens.length === MAX_TOKENS) throw outOfRange("token count", `${MAX_TOKENS + 1}+`, MAX_TOKENS);
    tokens.push(inspector.read(found, toIndex, top));
  }
  return tokens;
}

/** A token as the core's JSON writes it (`snowmint inspect --format json`): fields flattened into each reading. */
export function tokenJSON(token: Token): Record<string, unknown> {
  return {
    input: token.input,
    context: token.context,
    start: token.byteStart,
    end: token.byteEnd,
    candidates: token.candidates.map((r) => ({
      family: r.family,
      time: r.time,
      ...r.fields,
      plausibility: r.plausibility,
      why: r.why,
    })),
  };
}
