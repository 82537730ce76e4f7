// What the page knows about reading pasted text, without the DOM: asking
// for a text's readings, and the arithmetic on their times (exact, in
// BigInt nanoseconds). The page's views (explore.js) use only these
// exports. The readings are the npm package's own (through local.js, as
// `POST /v1/inspect` answers), so that they need no node.

import { LocalError, answer } from './local.js';

/** The most a text may hold, in bytes and in tokens (the API's bounds). */
export const MAX_TEXT_BYTES = 1 << 20;
export const MAX_TOKENS = 10_000;

/** An answer the service refused, with its structured error. */
export class ReadError extends Error {
  constructor(detail) {
    super(detail.message);
    this.detail = detail;
  }
}

/**
 * The tokens of `text` and their readings, most plausible first, as
 * `POST /v1/inspect` would answer: `{ now, tokens: [{ input, context, start,
 * end, candidates: [{ family, time, <fields>, plausibility, why }] }] }`.
 * `layout` reads integers as that layout alone; `now` (Unix ms) judges
 * times in the future; `top` keeps that many readings of each token, the
 * most plausible (a batch needs one).
 */
export async function readText(text, { layout, now, top } = {}) {
  const params = {};
  if (layout) params.layout = layout;
  if (now !== undefined) params.now = String(now);
  if (top !== undefined) params.top = String(top);
  try {
    return answer('/v1/inspect', params, String(text));
  } catch (error) {
    if (error instanceof LocalError) throw new ReadError(error.detail);
    throw error;
  }
}

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/**
 * An RFC 3339 time as the API writes it (`2016-04-30T11:18:25.796Z`, any
 * number of fractional digits, extended years such as `+010889-…`) in
 * nanoseconds since the Unix epoch, exactly; `null` for none.
 */
export function timeToNs(text) {
  if (!text) return null;
  const match = /^([+-]?\d{4,6}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!match) return null;
  const seconds = Date.parse(`${match[1]}Z`);
  if (!Number.isFinite(seconds)) return null;
  const fraction = BigInt((match[2] ?? '').padEnd(9, '0') || '0');
  return BigInt(seconds) * NS_PER_MS + fraction;
}

/** Nanoseconds to Unix milliseconds (toward the past), as a Number. */
export function nsToMs(ns) {
  let ms = ns / NS_PER_MS;
  if (ns < 0n && ns % NS_PER_MS !== 0n) ms -= 1n;
  return Number(ms);
}

/** The best reading of a token that has a time, or else its best one. */
export function bestReading(token) {
  return token.candidates.find((reading) => reading.time) ?? token.candidates[0] ?? null;
}

const UNITS = [
  ['day', 86_400n * NS_PER_S],
  ['hour', 3_600n * NS_PER_S],
  ['minute', 60n * NS_PER_S],
  ['second', NS_PER_S],
];

/**
 * A length of time in nanoseconds as its parts, largest first, down to the
 * second, and what is left below the second in nanoseconds:
 * `{ parts: [['day', 3n], ['hour', 4n]], fraction: 500000000n }`.
 */
export function durationParts(ns) {
  let rest = ns < 0n ? -ns : ns;
  const parts = [];
  for (const [unit, size] of UNITS) {
    const count = rest / size;
    rest %= size;
    if (count > 0n) parts.push([unit, count]);
  }
  return { parts, fraction: rest };
}

/**
 * The unit and signed count that say how far `ns` (a signed difference) is
 * in words: the largest unit of which there is at least one, years and
 * months included (of 365.2425 and 30.436875 days).
 */
export function relativeUnit(ns) {
  const steps = [
    ['year', 31_556_952n * NS_PER_S],
    ['month', 2_629_746n * NS_PER_S],
    ['day', 86_400n * NS_PER_S],
    ['hour', 3_600n * NS_PER_S],
    ['minute', 60n * NS_PER_S],
    ['second', NS_PER_S],
  ];
  const size = ns < 0n ? -ns : ns;
  for (const [unit, length] of steps) {
    if (size >= length) return [unit, Number(ns / length)];
  }
  return ['second', 0];
}

/** Discord's timestamp styles, in the order its documentation lists them. */
export const DISCORD_STYLES = ['t', 'T', 'd', 'D', 'f', 'F', 's', 'S', 'R'];

/** The `Intl.DateTimeFormat` options that show a style as Discord does. */
export const DISCORD_STYLE_FORMAT = {
  t: { timeStyle: 'short' },
  T: { timeStyle: 'medium' },
  d: { dateStyle: 'short' },
  D: { dateStyle: 'long' },
  f: { dateStyle: 'long', timeStyle: 'short' },
  F: { dateStyle: 'full', timeStyle: 'short' },
  s: { dateStyle: 'short', timeStyle: 'short' },
  S: { dateStyle: 'short', timeStyle: 'medium' },
};

/** Discord's markup of an instant in each style: `<t:1462015105:R>`. */
export function discordMarkups(ns) {
  let seconds = ns / NS_PER_S;
  if (ns < 0n && ns % NS_PER_S !== 0n) seconds -= 1n;
  return DISCORD_STYLES.map((style) => ({ style, markup: `<t:${seconds}:${style}>` }));
}

/**
 * The rows of a batch: each token's best reading, sorted by time (tokens
 * with no time last, in the order they came), with the time since the row
 * before in nanoseconds (`null` for the first and for rows without a time).
 */
export function batchRows(tokens) {
  const rows = tokens.map((token, index) => {
    const reading = bestReading(token);
    return {
      index,
      input: token.input,
      context: token.context,
      family: reading?.family ?? null,
      time: reading?.time ?? null,
      ns: timeToNs(reading?.time),
      plausibility: reading?.plausibility ?? null,
      delta: null,
    };
  });
  rows.sort((a, b) => {
    if (a.ns === null || b.ns === null) return (a.ns === null) - (b.ns === null) || a.index - b.index;
    return a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : a.index - b.index;
  });
  for (let i = 1; i < rows.length; i += 1) {
    if (rows[i].ns !== null && rows[i - 1].ns !== null) rows[i].delta = rows[i].ns - rows[i - 1].ns;
  }
  return rows;
}

/** A field of CSV, quoted where it must be (RFC 4180). */
function csvField(value) {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The rows as CSV with a header: the input, its family, its time (RFC
 * 3339, and Unix ms), how plausible, the time since the row before in
 * milliseconds (with the nanoseconds below them as a fraction).
 */
export function toCsv(rows) {
  const lines = [['input', 'family', 'time', 'unix_ms', 'plausibility', 'since_previous_ms'].join(',')];
  for (const row of rows) {
    let since = '';
    if (row.delta !== null) {
      const whole = row.delta / NS_PER_MS;
      const part = row.delta % NS_PER_MS;
      since = part === 0n ? String(whole) : `${whole}.${String(part).padStart(6, '0').replace(/0+$/, '')}`;
    }
    lines.push([
      row.input,
      row.family,
      row.time,
      row.ns === null ? '' : nsToMs(row.ns),
      row.plausibility,
      since,
    ].map(csvField).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
