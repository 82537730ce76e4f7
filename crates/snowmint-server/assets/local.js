// The calculator's answers worked out in the browser with the npm package
// (js/): the same JSON, and the same error bodies, as a node's /v1/layout,
// /v1/ids/{id}, /v1/encode, /v1/range and /v1/inspect give for the
// parameters the page sends. The page asks a node only for what a node
// alone knows (new IDs, and the node itself); everything else works from
// disk too. js/test/page.test.mjs sends the same requests here and to a
// real `snowmint serve` and compares the answers.

import {
  SnowmintError, decode, encode, formatId, formatMs, inspect, layout as describe, parseIdText, parseTime, range, tokenJSON,
} from '../../../js/src/index.ts';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MS_PER_YEAR = 365.2425 * 86_400_000;
const TIME_FORMS = 'now, Unix milliseconds such as 1700000000000, or RFC 3339 such as 2023-11-14T22:13:20.000Z';
const ECHO_LIMIT = 40;
/** The most readings of a token `top` keeps, as the node's bound. */
const MAX_TOP = 64;

/** A refused request: the body of the node's `{"error": ...}`. */
export class LocalError extends Error {
  constructor(detail) {
    super(detail.message);
    this.detail = detail;
  }
}

function refuse(field, code, message, facts = {}) {
  const detail = { code, message, field };
  for (const key of ['value', 'min', 'max']) if (facts[key] !== undefined) detail[key] = facts[key];
  return new LocalError(detail);
}

const CODES = {
  OutOfRange: 'out_of_range',
  InvalidText: 'invalid_parameter',
  UnknownName: 'invalid_parameter',
  InvalidFields: 'invalid_fields',
  InvalidLayout: 'invalid_layout',
  EmptyWindow: 'empty_window',
};

/** A package error about the parameter `field`, as the node's `from_core`. */
function fromCore(field, error) {
  if (!(error instanceof SnowmintError)) throw error;
  return refuse(field, CODES[error.kind] ?? 'invalid_parameter', error.message, error);
}

function missing(field, expected) {
  return refuse(field, 'missing_parameter', `parameter ${field} is missing (${expected})`);
}

/** Text as the core's `value::echo` quotes it in a message: cut after 40 characters as escaped. */
function echo(text) {
  let shown = 0;
  let at = 0;
  for (const c of text) {
    shown += JSON.stringify(c).length - 2;
    if (shown > ECHO_LIMIT) return `${text.slice(0, at)}...`;
    at += c.length;
  }
  return text;
}

/** A whole number in min..=max, as the core's `parse_bounded`. */
function bounded(name, text, min, max, field = name) {
  const digits = text.startsWith('-') ? text.slice(1) : text;
  const facts = { value: echo(text), min: String(min), max: String(max) };
  if (!/^[0-9]+$/.test(digits)) {
    throw refuse(field, 'invalid_parameter',
      `${name} ${JSON.stringify(echo(text))} is not a number (expected an integer in ${min}..=${max})`, facts);
  }
  const value = BigInt(text);
  if (value < BigInt(min) || value > BigInt(max)) {
    throw refuse(field, 'out_of_range', `${name} ${echo(text)} is out of range (${min}..=${max})`, facts);
  }
  return value;
}

/** A count or field value as the node writes it: a number up to 2^53-1, else a decimal string. */
function jsU64(value) {
  const big = BigInt(value);
  return big <= MAX_SAFE ? Number(big) : big.toString();
}

function mask(bits) {
  return (1n << BigInt(bits)) - 1n;
}

// ---------------------------------------------------------------- layouts

/**
 * The layout a request asks for: a preset's name or a layout's text. The
 * page always names one; with none this is Twitter's (a node would use its
 * own), and `epoch=`, which the page never sends, is refused.
 */
function layoutOf(params) {
  if (params.epoch !== undefined) {
    throw refuse('epoch', 'invalid_parameter', 'this page reads layouts without epoch=; give the layout as text (NAME@EPOCH)');
  }
  const name = params.layout ?? 'twitter';
  try {
    return describe(name);
  } catch (error) {
    throw fromCore('layout', error);
  }
}

function nodeFields(l) {
  return l.fields.filter((field) => field.role === 'node');
}

/** The two numbers of a node: (the node fields above the lowest, the lowest). */
function pairWidths(l) {
  const nodes = nodeFields(l);
  const lowest = nodes[nodes.length - 1];
  const nodeWidth = nodes.reduce((sum, field) => sum + field.width, 0);
  return { nodes, lowest, lowestBits: lowest?.width ?? 0, upperBits: nodeWidth - (lowest?.width ?? 0), nodeWidth };
}

function timeField(l) {
  return l.fields.find((field) => field.role === 'time');
}

function sequenceField(l) {
  return l.fields.find((field) => field.role === 'sequence');
}

/** `GET /v1/layout`: the layout as seen now. */
export function layoutAnswer(params, nowMs = Date.now()) {
  const l = layoutOf(params);
  const time = timeField(l);
  const sequence = sequenceField(l);
  const { lowest, lowestBits, upperBits, nodeWidth } = pairWidths(l);
  const idsPerTick = sequence ? mask(sequence.width) + 1n : 1n;
  const idsPerSecond = l.mintable ? (idsPerTick * 1_000_000n) / BigInt(l.unitUs) : 0n;
  const yearsLeft = (l.lastInstantMs - nowMs) / MS_PER_YEAR;
  return {
    layout: l.name,
    spec: l.spec,
    epoch_ms: l.epochMs,
    epoch: formatMsText(l.epochMs),
    timestamp_bits: time.width,
    datacenter_bits: upperBits,
    machine_bits: lowestBits,
    sequence_bits: sequence?.width ?? 0,
    timestamp_shift: time.shift,
    datacenter_shift: lowest ? lowest.shift + lowest.width : 0,
    machine_shift: lowest?.shift ?? 0,
    max_datacenter: jsU64(mask(upperBits)),
    max_machine: jsU64(mask(lowestBits)),
    max_sequence: jsU64(sequence ? mask(sequence.width) : 0n),
    ids_per_ms: jsU64(idsPerSecond / 1000n),
    node_count: jsU64(mask(nodeWidth) + 1n),
    last_instant_ms: l.lastInstantMs,
    last_instant: formatMsText(l.lastInstantMs),
    years_left: Math.round(yearsLeft * 100) / 100,
    fields: l.fields.map((field) => ({
      name: field.role === 'time' ? 'timestamp' : field.name,
      bits: field.width,
      shift: field.shift,
      max: jsU64(field.max),
      role: field.role,
    })),
    family: l.family,
    unit: l.unit,
    unit_us: l.unitUs,
    bits: l.bits,
    max_id: l.maxId.toString(),
    js_safe: l.jsSafe,
    ids_per_second: jsU64(idsPerSecond),
    mintable: l.mintable,
  };
}

/** Unix ms as RFC 3339 with milliseconds, as the core's `format_time`. */
function formatMsText(ms) {
  return formatMs(Number(ms));
}

// ---------------------------------------------------------------- decode

const ENCODINGS = ['decimal', 'hex', 'base32', 'base58'];

/** An ID of `l` and its fields, as the node's `DecodedId`. */
function decoded(l, id) {
  const d = decode(id, l);
  const time = timeField(l);
  const sequence = sequenceField(l);
  const { lowestBits } = pairWidths(l);
  let slot = 0n;
  for (const field of nodeFields(l)) slot = (slot << BigInt(field.width)) | BigInt(d.fields[field.name]);
  return {
    id: id.toString(),
    timestamp_ms: d.timestampMs,
    time: d.time,
    datacenter: jsU64(slot >> BigInt(lowestBits)),
    machine: jsU64(slot & mask(lowestBits)),
    sequence: sequence ? d.fields[sequence.name] : 0,
    layout: l.name,
    epoch_ms: l.epochMs,
    encodings: { hex: formatId(id, 'hex'), base32: formatId(id, 'base32'), base58: formatId(id, 'base58') },
    fields: Object.fromEntries(l.fields.filter((field) => field !== time).map((field) => [field.name, d.fields[field.name]])),
    unit: l.unit,
  };
}

/** The encodings other than `tried` that `text` is an ID in (0..=2^64-1). */
function readableAs(text, tried) {
  return ENCODINGS.filter((encoding) => encoding !== tried && readsAs(text, encoding));
}

function readsAs(text, encoding) {
  try {
    parseIdText(text, encoding);
    return true;
  } catch {
    return false;
  }
}

/** `GET /v1/ids/{id}`. */
export function decodeAnswer(text, params) {
  const l = layoutOf(params);
  let encoding = 'decimal';
  if (params.encoding !== undefined) {
    try {
      encoding = parseEncoding(params.encoding);
    } catch (error) {
      throw fromCore('encoding', error);
    }
  }
  let id;
  try {
    id = decode(text, l, { encoding }).id;
  } catch (error) {
    const refused = fromCore('id', error);
    const names = readableAs(text, encoding);
    if (names.length === 1) {
      refused.detail.message += `; it reads as ${names[0]}: encoding=${names[0]}`;
    } else if (names.length > 1) {
      refused.detail.message += `; it reads as ${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}: say which with encoding=`;
    }
    if (names.length) refused.detail.readable_as = names;
    refused.message = refused.detail.message;
    throw refused;
  }
  return decoded(l, id);
}

function parseEncoding(name) {
  // The package's own reader of encoding names, through a reading of 1 (a digit of every encoding).
  parseIdText('1', name);
  return name.toLowerCase() === 'dec' ? 'decimal' : name.toLowerCase();
}

// ---------------------------------------------------------------- times

/** An instant parameter: Unix ms within the layout, as the node's `inputs::instant`. */
function instant(name, text, l, nowMs) {
  if (text === undefined) throw missing(name, TIME_FORMS);
  let ms;
  try {
    ms = parseTime(text, name, () => nowMs);
  } catch (error) {
    throw fromCore(name, error);
  }
  try {
    encode(ms, {}, l);
  } catch (error) {
    throw fromCore(name, error);
  }
  return ms;
}

// ---------------------------------------------------------------- encode

/** What a given name sets in `l` (the core's `Layout::target`). */
function target(l, name) {
  const at = l.fields.findIndex((field) => field.name === name);
  if (at >= 0) return l.fields[at].role === 'time' ? null : { field: at };
  const nodes = l.fields.map((field, i) => [field, i]).filter(([field]) => field.role === 'node').map(([, i]) => i);
  if (name === 'sequence') {
    const s = l.fields.findIndex((field) => field.role === 'sequence');
    return s >= 0 ? { field: s } : null;
  }
  if (name === 'machine') return nodes.length ? { field: nodes[nodes.length - 1] } : { lowest: true };
  if (name === 'datacenter') return nodes.length === 2 ? { field: nodes[0] } : { upper: nodes.slice(0, -1) };
  return null;
}

function unknownField(l, name) {
  const names = l.fields.map((field) => field.name);
  return new SnowmintError('UnknownName',
    `layout ${l.name} has no field ${JSON.stringify(echo(name))} (its fields: ${names.length ? names.join(', ') : 'none'})`,
    { subject: name, value: echo(name) });
}

/** `GET /v1/encode`. */
export function encodeAnswer(params, nowMs = Date.now()) {
  const l = layoutOf(params);
  const names = l.fields.filter((field) => field.role !== 'time').map((field) => field.name);
  for (const legacy of ['datacenter', 'machine', 'sequence']) if (!names.includes(legacy)) names.push(legacy);
  const ms = instant('timestamp', params.timestamp, l, nowMs);
  const given = [];
  for (const name of names) {
    const text = params[name];
    if (text === undefined) continue;
    const aim = target(l, name);
    if (!aim) throw fromCore(name, unknownField(l, name));
    let max;
    let label = name;
    if (aim.field !== undefined) {
      max = l.fields[aim.field].max;
      label = l.fields[aim.field].name;
    } else if (aim.upper) {
      max = mask(pairWidths(l).upperBits);
      label = 'datacenter';
    } else {
      max = 0;
      label = 'machine';
    }
    given.push([name, aim, bounded(label, text, 0, max, name)]);
  }
  // Every node and sequence field is given.
  const covered = new Set();
  for (const [, aim] of given) {
    if (aim.field !== undefined) covered.add(aim.field);
    for (const at of aim.upper ?? []) covered.add(at);
  }
  const unnamed = l.fields.findIndex((field, at) => (field.role === 'node' || field.role === 'sequence') && !covered.has(at));
  if (unnamed >= 0) {
    const field = l.fields[unnamed];
    const error = missing(field.name, `an integer in 0..=${field.max}`);
    error.detail.min = '0';
    error.detail.max = String(field.max);
    throw error;
  }
  // Each field named once, then the values.
  const values = l.fields.map(() => 0n);
  const by = new Map();
  for (const [name, aim, value] of given) {
    const covers = aim.field !== undefined ? [aim.field] : aim.upper ?? [];
    for (const at of covers) {
      if (by.has(at)) {
        throw fromCore(l.fields[at].name, new SnowmintError('InvalidFields',
          `field ${l.fields[at].name} is given twice (as ${by.get(at)} and as ${name})`, { subject: l.fields[at].name }));
      }
      by.set(at, name);
    }
    if (aim.field !== undefined) values[aim.field] = value;
    let rest = value;
    for (const at of [...(aim.upper ?? [])].reverse()) {
      values[at] = rest & mask(l.fields[at].width);
      rest >>= BigInt(l.fields[at].width);
    }
  }
  const named = Object.fromEntries(l.fields.flatMap((field, at) => (field.role === 'time' ? [] : [[field.name, values[at]]])));
  let id;
  try {
    id = encode(ms, named, l);
  } catch (error) {
    throw fromCore('timestamp', error);
  }
  return decoded(l, id);
}

// ---------------------------------------------------------------- range

/** `GET /v1/range`. */
export function rangeAnswer(params, nowMs = Date.now()) {
  const l = layoutOf(params);
  const fromMs = instant('from', params.from, l, nowMs);
  const toMs = instant('to', params.to, l, nowMs);
  let ids;
  try {
    ids = range(fromMs, toMs, l);
  } catch (error) {
    throw fromCore('from', error);
  }
  return {
    from_ms: ids.fromMs,
    from: ids.from,
    to_ms: ids.toMs,
    to: ids.to,
    min: ids.min.toString(),
    max: ids.max.toString(),
    layout: l.name,
    epoch_ms: l.epochMs,
  };
}

// ---------------------------------------------------------------- inspect

/** `POST /v1/inspect` with the text as the body. */
export function inspectAnswer(text, params, nowMs = Date.now()) {
  if (text === '') {
    throw refuse('text', 'missing_body',
      'POST /v1/inspect reads the text to inspect from its body, which is empty: send the text as the body, or ask GET /v1/inspect?text=...');
  }
  let top;
  if (params.top !== undefined) top = Number(bounded('top', params.top, 1, MAX_TOP));
  const options = {};
  if (params.layout !== undefined) options.layouts = [layoutOf(params)];
  let now = nowMs;
  if (params.now !== undefined) {
    try {
      now = Number(parseTime(params.now, 'now', () => nowMs));
    } catch (error) {
      throw fromCore('now', error);
    }
  }
  let tokens;
  try {
    tokens = inspect(text, { ...options, now, top });
  } catch (error) {
    throw fromCore('text', error);
  }
  return { now: formatMsText(now), tokens: tokens.map(tokenJSON) };
}

// ---------------------------------------------------------------- routing

/**
 * The answer to a GET of `path` with `params` (an object of strings), or
 * a POST of `body` to /v1/inspect; `null` for a path only a node answers.
 * Throws a LocalError with the node's error body.
 */
export function answer(path, params = {}, body = undefined) {
  const given = Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined && value !== ''));
  if (path === '/v1/layout') return layoutAnswer(given);
  if (path === '/v1/encode') return encodeAnswer(given);
  if (path === '/v1/range') return rangeAnswer(given);
  if (path === '/v1/inspect') return inspectAnswer(body ?? '', given);
  if (path.startsWith('/v1/ids/')) return decodeAnswer(decodeURIComponent(path.slice('/v1/ids/'.length)), given);
  return null;
}
