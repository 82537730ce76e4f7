// JSON that keeps IDs exact.
//
// `JSON.parse` reads every number as a double, so an ID above 2^53 sent as
// a JSON number arrives rounded, with no error (snowmint's own API sends
// IDs as strings for this reason). These helpers read and write the fields
// an application names as IDs exactly, as BigInt or as decimal strings, at
// any depth of a payload.
//
// Reading numbers exactly needs their text, which a reviver gets only on
// engines with JSON.parse source text access (the `context.source`
// argument: Node 21+, Chrome 114+, Firefox 135+, Safari 18.4+; not Node 18
// or 20). So:
//
// - `idReviver()` uses `context.source` where the engine gives it. Where it
//   does not, a number in an ID field that is not a safe integer (at or
//   above 2^53) is refused with an error rather than handed on rounded: on
//   such engines read the text with `parseJSON`.
// - `parseJSON(text)` is exact on every engine. With source access it is
//   `JSON.parse(text, idReviver())`. Without it, it first finds the numbers
//   that stand where a value stands (outside strings, not as keys) and are
//   not plain integers of 15 digits or fewer (which a double holds
//   exactly), puts a string placeholder (a random prefix and an index) in
//   their place, and parses that with the engine's own JSON.parse; the
//   reviver gives each placeholder back as the exact ID in an ID field, and
//   as the very number `JSON.parse` would have made (`Number` of the same
//   text) anywhere else. A text that is not JSON is refused with the
//   engine's own error for the original text.
//
// Either way an ID written as a JSON number must be written as an integer
// (`1724551110457221119`, not `1.7e18` or `1e3`); only `idReviver` on an
// engine without source text cannot tell, and takes a safe integer however
// it is written.

import { SnowmintError, echo } from "./errors.js";
import { MAX_SAFE, MAX_U64, parseId } from "./id.js";

/** Which keys hold IDs: names (at any depth), or a test of the key. */
export type IdFields = readonly string[] | ((key: string) => boolean);

/** The ID fields of API bodies: `id` and `ids`. */
export const DEFAULT_ID_FIELDS: readonly string[] = Object.freeze(["id", "ids"]);

/** How {@link idReviver} and {@link parseJSON} read ID fields. */
export interface ParseOptions {
  /** The keys whose values are IDs (or arrays of IDs); default `["id", "ids"]`. */
  fields?: IdFields;
  /** What an ID becomes: `"bigint"` (the default) or its decimal `"string"`. */
  as?: "bigint" | "string";
}

/** How {@link idReplacer} and {@link stringifyJSON} write ID fields. */
export interface StringifyOptions {
  /** The keys whose values are IDs (or arrays of IDs); default `["id", "ids"]`. */
  fields?: IdFields;
}

/** A `JSON.parse` reviver, with the source-text argument of newer engines. */
export type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/** A `JSON.stringify` replacer. */
export type Replacer = (this: unknown, key: string, value: unknown) => unknown;

function matcher(fields: IdFields | undefined): (key: string) => boolean {
  const given = fields ?? DEFAULT_ID_FIELDS;
  if (typeof given === "function") return given;
  if (!Array.isArray(given)) {
    throw new TypeError("fields must be an array of key names or a function of the key");
  }
  const names = new Set<string>(given);
  return (key) => names.has(key);
}

let sourceAccess: boolean | undefined;

/**
 * Whether this engine gives a reviver each value's source text (the
 * `context.source` of the JSON.parse source text access proposal).
 */
export function hasSourceAccess(): boolean {
  if (sourceAccess === undefined) {
    let seen = false;
    JSON.parse("1", function (_key: string, value: unknown, context?: { source?: string }) {
      if (context?.source === "1") seen = true;
      return value;
    } as (key: string, value: unknown) => unknown);
    sourceAccess = seen;
  }
  return sourceAccess;
}

/** Placeholders of one `parseJSON` call without source access. */
interface Placeholders {
  prefix: string;
  literals: string[];
}

/** The exact literal behind `value`, if a placeholder: its index's text. */
function placeholderLiteral(value: string, placeholders: Placeholders | undefined): string | undefined {
  if (placeholders === undefined || !value.startsWith(placeholders.prefix)) return undefined;
  return placeholders.literals[Number(value.slice(placeholders.prefix.length))];
}

function makeReviver(options: ParseOptions, placeholders?: Placeholders): Reviver {
  const isId = matcher(options.fields);
  const as = options.as ?? "bigint";
  if (as !== "bigint" && as !== "string") {
    throw new TypeError(`as must be "bigint" or "string", not ${echo(String(as))}`);
  }
  // The exact text of numbers in arrays that are not safe integers, by
  // array and index: an element is revived before the array, when it is
  // not yet known whether the array is an ID field's.
  const exact = new WeakMap<object, Map<number, string>>();

  const toId = (value: unknown, literal: string | undefined, subject: string): unknown => {
    let id: bigint;
    if (typeof value === "string") {
      id = parseId(value, subject);
      return as === "bigint" ? id : value;
    }
    if (typeof value === "number") {
      // The text as written, or the one text of a safe integer.
      const text = literal ?? (Number.isSafeInteger(value) ? String(value) : undefined);
      if (text !== undefined) {
        id = parseId(text, subject);
      } else if (Number.isInteger(value) && value > 0) {
        throw new SnowmintError(
          "OutOfRange",
          `${subject} ${value} lost its exact value in JSON.parse: it is above 2^53-1 and this engine gives a reviver no source text; read the text with parseJSON()`,
          { subject, value: String(value), min: "0", max: MAX_SAFE.toString() },
        );
      } else {
        throw new SnowmintError(
          Number.isInteger(value) ? "OutOfRange" : "InvalidText",
          `${subject} ${value} is not an ID (a decimal integer in 0..=${MAX_U64})`,
          { subject, value: String(value), min: "0", max: MAX_U64.toString() },
        );
      }
      return as === "bigint" ? id : id.toString();
    }
    if (value === null) return null;
    throw new SnowmintError("InvalidText", `${subject} holds ${describe(value)}, not an ID (a decimal string or integer)`, {
      subject,
    });
  };

  return function (this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
    let literal: string | undefined;
    if (typeof value === "number") {
      literal = context?.source;
    } else if (typeof value === "string") {
      literal = placeholderLiteral(value, placeholders);
      // Anywhere but in an ID field, a placeholder is the number
      // JSON.parse would have made of its literal.
      if (literal !== undefined) value = Number(literal);
    }
    if (Array.isArray(this)) {
      if (literal !== undefined && !PLAIN.test(literal)) {
        let texts = exact.get(this);
        if (texts === undefined) exact.set(this, (texts = new Map()));
        texts.set(Number(key), literal);
      }
      return value;
    }
    if (key === "" || !isId(key)) return value;
    if (Array.isArray(value)) {
      const texts = exact.get(value);
      return value.map((element, index) => toId(element, texts?.get(index), `${key}[${index}]`));
    }
    return toId(value, literal, key);
  };
}

/**
 * A `JSON.parse` reviver that reads the named ID fields, at any depth, as
 * BigInt (or as decimal strings with `as: "string"`). A field may hold an
 * ID as a decimal string or a JSON number, an array of them, or null.
 *
 * On engines without source text access (Node 18 and 20) a JSON number at
 * or above 2^53 in an ID field has already been rounded when the reviver
 * sees it, so it is refused with a {@link SnowmintError}; {@link parseJSON}
 * reads it exactly on every engine.
 *
 * @example
 * const body = JSON.parse('{"id":"1724551110457221119"}', idReviver());
 * body.id === 1724551110457221119n; // true
 */
export function idReviver(options: ParseOptions = {}): Reviver {
  return makeReviver(options);
}

/**
 * `JSON.parse(text)`, with the named ID fields read exactly as BigInt (or
 * decimal strings), whether the text holds them as strings or as numbers
 * of any size, on every engine. Other values are exactly what `JSON.parse`
 * makes of them.
 *
 * @throws {SyntaxError} for text that is not JSON, as `JSON.parse` does.
 * @throws {SnowmintError} for an ID field whose value is not an ID in
 *   0..=2^64-1 (naming the key and the value).
 */
export function parseJSON(text: string, options: ParseOptions = {}): unknown {
  if (hasSourceAccess()) return JSON.parse(text, makeReviver(options) as (key: string, value: unknown) => unknown);
  const found = textNumbers(text);
  if (found.length === 0) return JSON.parse(text, makeReviver(options) as (key: string, value: unknown) => unknown);
  const prefix = placeholderPrefix();
  const literals: string[] = [];
  let rewritten = "";
  let at = 0;
  for (const [start, end] of found) {
    rewritten += `${text.slice(at, start)}"${prefix}${literals.length}"`;
    literals.push(text.slice(start, end));
    at = end;
  }
  rewritten += text.slice(at);
  let parsed: unknown;
  try {
    parsed = JSON.parse(rewritten, makeReviver(options, { prefix, literals }) as (key: string, value: unknown) => unknown);
  } catch (error) {
    // The engine's own error, with positions in the text as given.
    if (error instanceof SyntaxError) JSON.parse(text);
    throw error;
  }
  return parsed;
}

/** A number whose value tells its text: a plain integer of 15 digits at most. */
const PLAIN = /^-?(0|[1-9][0-9]{0,14})$/;
/** A JSON number. */
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * The [start, end) spans of the numbers whose text the reviver needs (any
 * but a plain integer of 15 digits or fewer, which a double holds
 * exactly) that stand where a JSON value stands: outside strings, not as
 * object keys, and valid JSON numbers. Replacing exactly these by strings
 * accepts and refuses the same texts as the original.
 */
function textNumbers(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const containers: string[] = [];
  // The last character that was not white space, outside strings.
  let previous = "";
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      i++;
      previous = '"';
      continue;
    }
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) i++;
        else break;
      }
      const token = text.slice(start, i);
      const top = containers[containers.length - 1];
      const valuePosition =
        previous === ":" || (top === "[" && (previous === "[" || previous === ",")) || (previous === "" && containers.length === 0);
      if (valuePosition && !PLAIN.test(token) && NUMBER.test(token)) spans.push([start, i]);
      previous = "0";
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) containers.push(text.charAt(i));
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) containers.pop();
    if (!(c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d)) previous = text.charAt(i);
    i++;
  }
  return spans;
}

/**
 * The prefix of one call's placeholders: a lone surrogate, then 128 random
 * bits. A string of the text can start with it only if the text holds a
 * lone surrogate (raw or escaped) followed by those very bits.
 */
function placeholderPrefix(): string {
  const words = new Uint32Array(4);
  const crypto = (globalThis as { crypto?: { getRandomValues?: (a: Uint32Array) => Uint32Array } }).crypto;
  if (crypto?.getRandomValues) crypto.getRandomValues(words);
  else for (let i = 0; i < words.length; i++) words[i] = Math.floor(Math.random() * 2 ** 32);
  return `\ud800snowmint:${Array.from(words, (w) => w.toString(36)).join(".")}:`;
}

/** How a value is named in an error. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "boolean") return `${value}`;
  return typeof value;
}

function idJson(value: unknown, subject: string): unknown {
  if (typeof value === "bigint") {
    if (value < 0n || value > MAX_U64) {
      throw new SnowmintError("OutOfRange", `${subject} ${value} is out of range (0..=${MAX_U64})`, {
        subject,
        value: value.toString(),
        min: "0",
        max: MAX_U64.toString(),
      });
    }
    return value.toString();
  }
  if (typeof value === "string") {
    parseId(value, subject);
    return value;
  }
  if (typeof value === "number") {
    if (Number.isSafeInteger(value) && value >= 0) return String(value);
    if (Number.isInteger(value) && value > 0) {
      throw new SnowmintError(
        "OutOfRange",
        `${subject} ${value} is not exact as a JavaScript number (above 2^53-1): keep IDs as BigInt or strings`,
        { subject, value: String(value), min: "0", max: MAX_SAFE.toString() },
      );
    }
    throw new SnowmintError("InvalidText", `${subject} ${value} is not an ID (a decimal integer in 0..=${MAX_U64})`, {
      subject,
      value: String(value),
      min: "0",
      max: MAX_U64.toString(),
    });
  }
  if (value === null || value === undefined) return value;
  throw new SnowmintError("InvalidText", `${subject} holds ${describe(value)}, not an ID (a BigInt, a decimal string or a safe integer)`, {
    subject,
  });
}

/**
 * A `JSON.stringify` replacer that writes the named ID fields, at any
 * depth, as decimal strings (as snowmint's API sends them), whether they
 * hold a BigInt, a string or a safe integer, or an array of them. A BigInt
 * anywhere else is refused with a TypeError naming its key, as
 * `JSON.stringify` refuses any BigInt, so that no field changes type
 * unnoticed.
 *
 * @example
 * JSON.stringify({ id: 1724551110457221119n }, idReplacer());
 * // '{"id":"1724551110457221119"}'
 */
export function idReplacer(options: StringifyOptions = {}): Replacer {
  const isId = matcher(options.fields);
  return function (this: unknown, key: string, value: unknown): unknown {
    if (!Array.isArray(this) && key !== "" && isId(key)) {
      if (Array.isArray(value)) return value.map((element, index) => idJson(element, `${key}[${index}]`));
      return idJson(value, key);
    }
    if (typeof value === "bigint") {
      throw new TypeError(
        `the BigInt ${value} at key ${echo(key)} is not in an ID field: name the key in fields, or convert it yourself`,
      );
    }
    return value;
  };
}

/** `JSON.stringify(value, idReplacer(options), space)`. */
export function stringifyJSON(value: unknown, options: StringifyOptions & { space?: string | number } = {}): string {
  return JSON.stringify(value, idReplacer(options), options.space);
}
