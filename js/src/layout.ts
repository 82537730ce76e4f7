// The Rust core's layouts (crates/snowmint/src/layout/), for reading and
// making IDs with BigInt: the presets by the same names, fields, units and
// epochs, and `decode`, `encode` and `range` with the same errors.
//
// A decode is on the hot path (millions of IDs from a file): the ID is
// split once into two 32-bit halves and every field is read from them
// with number arithmetic, exact because no field of a preset is wider
// than 51 bits; the RFC 3339 time is written only when asked for.

import { SnowmintError } from "./errors.js";
import { cut, debugChar, quote } from "./rust.js";
import { formatMs, formatNs, parseTime, type TimeInput } from "./time.js";

/** What a field holds, as the core's `Role`. */
export type Role = "time" | "node" | "sequence" | "opaque";

/** One field of a layout, most significant first. */
export interface LayoutField {
  /** The name the family gives it (`worker`, `increment`, `shard`...). */
  readonly name: string;
  readonly role: Role;
  /** Bits. */
  readonly width: number;
  /** Bits below it. */
  readonly shift: number;
  /** Its largest value: 2^width - 1. */
  readonly max: number;
}

/** How long one tick of a time field lasts, written as the core writes it: `1ms`, `10ms`, `1s`, `250us`... (1us to 1s). */
export type Unit = string;

/** A family's ID layout: its fields, time unit and epoch. */
export interface Layout {
  /** The preset's name (`discord`), as the core and the command line call it; for another layout, its text ({@link Layout.spec}). */
  readonly name: string;
  /** The family, as people know it, and its reference; null for a layout that is no preset. */
  readonly family: string | null;
  /** The epoch, in Unix milliseconds. */
  readonly epochMs: number;
  readonly unit: Unit;
  /** The unit in microseconds (1000 for `1ms`). */
  readonly unitUs: number;
  /** The unit in milliseconds (1, 10, 1000; a fraction for units below 1 ms). */
  readonly unitMs: number;
  /** The fields, most significant first. */
  readonly fields: readonly LayoutField[];
  /** How many bits IDs use: 63 for Twitter, 64 for Discord, 53 for a JavaScript-safe layout. */
  readonly bits: number;
  /** The largest ID: 2^bits - 1. */
  readonly maxId: bigint;
  /** The last millisecond the layout covers. */
  readonly lastInstantMs: number;
  /** Whether every ID is below 2^53 (a JavaScript number holds it exactly). */
  readonly jsSafe: boolean;
  /** Whether snowmint can mint it (it has a sequence field above no time bits, and no opaque bits). */
  readonly mintable: boolean;
  /** The layout as text (`41/5/5/12@1288834974657`, `time:42/worker:5:node/...@1420070400000`). */
  readonly spec: string;
}

/** The name of a preset, or a layout. */
export type LayoutRef = string | Layout;

type FieldSpec = [name: string, role: Role, width: number];

const TWITTER_EPOCH_MS = 1_288_834_974_657;

const SPECS: [name: string, family: string, epochMs: number, unit: "1ms" | "10ms" | "1s", fields: FieldSpec[]][] = [
  [
    "twitter",
    "Twitter Snowflake (the default)",
    TWITTER_EPOCH_MS,
    "1ms",
    [["time", "time", 41], ["datacenter", "node", 5], ["machine", "node", 5], ["sequence", "sequence", 12]],
  ],
  [
    "discord",
    "Discord snowflakes",
    1_420_070_400_000,
    "1ms",
    [["time", "time", 42], ["worker", "node", 5], ["process", "node", 5], ["increment", "sequence", 12]],
  ],
  [
    "instagram",
    "Instagram (Sharding & IDs at Instagram)",
    1_314_220_021_721,
    "1ms",
    [["time", "time", 41], ["shard", "node", 13], ["sequence", "sequence", 10]],
  ],
  ["mastodon", "Mastodon (lib/mastodon/snowflake.rb)", 0, "1ms", [["time", "time", 48], ["sequence_data", "opaque", 16]]],
  [
    "sonyflake",
    "Sonyflake (sony/sonyflake v1)",
    1_409_529_600_000,
    "10ms",
    [["time", "time", 39], ["sequence", "sequence", 8], ["machine", "node", 16]],
  ],
  [
    "sonyflake-v2",
    "Sonyflake v2 defaults (sony/sonyflake/v2)",
    1_735_689_600_000,
    "10ms",
    [["time", "time", 39], ["sequence", "sequence", 8], ["machine", "node", 16]],
  ],
  [
    "baidu",
    "Baidu uid-generator (DefaultUidGenerator)",
    1_463_673_600_000,
    "1s",
    [["time", "time", 28], ["worker_id", "node", 22], ["sequence", "sequence", 13]],
  ],
  [
    "hazelcast",
    "Hazelcast Flake ID generator",
    1_514_764_800_000,
    "1ms",
    [["time", "time", 41], ["sequence", "sequence", 6], ["node_id", "node", 16]],
  ],
  [
    "tsid",
    "TSID (f4b6a3/tsid-creator, TsidFactory)",
    1_577_836_800_000,
    "1ms",
    [["time", "time", 42], ["node", "node", 10], ["counter", "sequence", 12]],
  ],
  [
    "yitter",
    "yitter/IdGenerator defaults",
    1_582_136_402_000,
    "1ms",
    [["time", "time", 51], ["worker_id", "node", 6], ["sequence", "sequence", 6]],
  ],
  [
    "cosid",
    "CosId MillisecondSnowflakeId",
    1_577_203_200_000,
    "1ms",
    [["time", "time", 41], ["machine", "node", 10], ["sequence", "sequence", 12]],
  ],
  [
    "cosid-safe-js",
    "CosId SafeJavaScriptSnowflakeId",
    1_577_203_200_000,
    "1ms",
    [["time", "time", 41], ["machine", "node", 3], ["sequence", "sequence", 9]],
  ],
  [
    "leaf",
    "Meituan Leaf, snowflake mode",
    TWITTER_EPOCH_MS,
    "1ms",
    [["time", "time", 41], ["worker_id", "node", 10], ["sequence", "sequence", 12]],
  ],
  ["linkedin", "LinkedIn post and activity IDs (time only)", 0, "1ms", [["time", "time", 41], ["rest", "opaque", 22]]],
  ["tiktok", "TikTok video IDs (time only)", 0, "1s", [["time", "time", 31], ["rest", "opaque", 32]]],
  [
    "safe-js-10ms",
    "snowmint's JavaScript-safe layout, 10 ms units",
    1_735_689_600_000,
    "10ms",
    [["time", "time", 39], ["machine", "node", 6], ["sequence", "sequence", 8]],
  ],
];

const PRESET_UNITS = { "1ms": 1000, "10ms": 10_000, "1s": 1_000_000 };

/** A unit in microseconds, written as the core writes it. */
function unitText(us: number): Unit {
  if (us >= 1_000_000 && us % 1_000_000 === 0) return `${us / 1_000_000}s`;
  if (us >= 1000 && us % 1000 === 0) return `${us / 1000}ms`;
  return `${us}us`;
}

/** Fractional digits of a time at a unit of `us` microseconds. */
function unitDigits(us: number): number {
  let digits = 6;
  let rest = us;
  while (digits > 0 && rest % 10 === 0) {
    rest /= 10;
    digits -= 1;
  }
  return digits;
}

/** The names that imply their role in a layout's text. */
function impliedRole(name: string): Role | undefined {
  if (name === "time") return "time";
  if (name === "sequence") return "sequence";
  if (name === "datacenter" || name === "machine" || name === "node") return "node";
  return undefined;
}

function spec(epochMs: number, unit: string, bits: number, fields: readonly LayoutField[]): string {
  const twitterShape =
    bits === 63 &&
    unit === "1ms" &&
    fields.length === 4 &&
    ["time", "datacenter", "machine", "sequence"].every((name, i) => fields[i]!.name === name);
  const text = twitterShape
    ? fields.map((f) => f.width).join("/")
    : fields.map((f) => (impliedRole(f.name) === f.role ? `${f.name}:${f.width}` : `${f.name}:${f.width}:${f.role}`)).join("/");
  return `${text}@${epochMs}${unit === "1ms" ? "" : `,${unit}`}`;
}

/** A layout's internals: what decode and encode need at hand. */
interface Compiled {
  readonly layout: Layout;
  readonly maxTicks: number;
  readonly timeIndex: number;
  readonly digits: number;
  /** The high and low 32 bits of the largest ID, and the largest safe integer ID. */
  readonly maxHi: number;
  readonly maxLo: number;
  readonly maxSafe: number;
  /** The decoded fields of the ID whose halves are hi and lo. */
  readonly make: (id: bigint | string, hi: number, lo: number) => Decoded;
}

const COMPILED = new Map<string, Compiled>();

const TWO_32 = 4294967296;

/**
 * How to read one field from an ID's two 32-bit halves with 32-bit
 * integer operations: from the low half, from the high half, or (a field
 * across the middle) its low bits from the low half and the rest from the
 * high half.
 */
interface Plan {
  /** 0: low half, 1: high half, 2: across. */
  kind: number;
  /** The shift within the half (the low half's, for a field across). */
  shift: number;
  /** The mask of the field's bits (of the high part, for a field across); -1 for all 32. */
  mask: number;
  /** For a field across: 2^(bits taken from the low half). */
  scale: number;
}

function plan(shift: number, width: number): Plan {
  const maskOf = (bits: number): number => (bits >= 32 ? -1 : 2 ** bits - 1);
  if (width === 0) return { kind: 0, shift: 0, mask: 0, scale: 1 };
  if (shift >= 32) return { kind: 1, shift: shift - 32, mask: maskOf(width), scale: 1 };
  if (shift + width <= 32) return { kind: 0, shift, mask: maskOf(width), scale: 1 };
  return { kind: 2, shift, mask: maskOf(width - (32 - shift)), scale: 2 ** (32 - shift) };
}

function read(p: Plan, hi: number, lo: number): number {
  switch (p.kind) {
    case 0:
      return p.mask === -1 ? lo >>> p.shift : (lo >>> p.shift) & p.mask;
    case 1:
      return p.mask === -1 ? hi >>> p.shift : (hi >>> p.shift) & p.mask;
    default:
      return (p.mask === -1 ? hi >>> 0 : hi & p.mask) * p.scale + (lo >>> p.shift);
  }
}

/**
 * The decoder of one layout: each field read from the ID's halves by its
 * plan, into an object whose keys are always added in the same order.
 */
function maker(l: Layout, timeIndex: number, digits: number): (id: bigint | string, hi: number, lo: number) => Decoded {
  const time = l.fields[timeIndex]!;
  const others = l.fields.filter((f) => f.role !== "time");
  const names = others.map((f) => f.name);
  const plans = others.map((f) => plan(f.shift, f.width));
  // The plans as flat arrays, for a loop with no calls in it.
  const kinds = Int32Array.from(plans, (p) => p.kind);
  const shifts = Int32Array.from(plans, (p) => p.shift);
  const masks = Int32Array.from(plans, (p) => p.mask);
  const scales = Float64Array.from(plans, (p) => p.scale);
  const count = others.length;
  const { name, epochMs, unitMs, unitUs } = l;
  const timePlan = plan(time.shift, time.width);
  const wholeMs = unitUs % 1000 === 0;
  return (id, hi, lo) => {
    const fields: Record<string, number> = {};
    for (let i = 0; i < count; i++) {
      const kind = kinds[i]!;
      const shift = shifts[i]!;
      const mask = masks[i]!;
      // `>>> 0` makes a field of all 32 bits (mask -1) unsigned.
      fields[names[i]!] =
        kind === 0
          ? ((lo >>> shift) & mask) >>> 0
          : kind === 1
            ? ((hi >>> shift) & mask) >>> 0
            : ((hi & mask) >>> 0) * scales[i]! + (lo >>> shift);
    }
    const ticks = read(timePlan, hi, lo);
    if (wholeMs) return new Decoded(id, name, ticks, epochMs + ticks * unitMs, fields, digits);
    // Units finer than a millisecond: the time in microseconds, exactly.
    const us = BigInt(epochMs) * 1000n + BigInt(ticks) * BigInt(unitUs);
    return new Decoded(id, name, ticks, Number(us / 1000n), fields, digits, us);
  };
}

/** Whether two sets of fields are the same, names, roles and widths. */
function sameFields(a: readonly LayoutField[], b: readonly LayoutField[]): boolean {
  return a.length === b.length && a.every((f, i) => f.name === b[i]!.name && f.role === b[i]!.role && f.width === b[i]!.width);
}

function build(name: string | null, family: string | null, epochMs: number, unitUs: number, specs: FieldSpec[]): Compiled {
  let shift = 0;
  const fields: LayoutField[] = [];
  for (let i = specs.length - 1; i >= 0; i--) {
    const [fieldName, role, width] = specs[i]!;
    fields.unshift(Object.freeze({ name: fieldName, role, width, shift, max: 2 ** width - 1 }));
    shift += width;
  }
  const bits = shift;
  const timeIndex = fields.findIndex((f) => f.role === "time");
  const time = fields[timeIndex]!;
  const sequence = fields.find((f) => f.role === "sequence");
  const unit = unitText(unitUs);
  const mintable =
    sequence !== undefined &&
    !fields.some((f) => f.role === "opaque" && f.width > 0) &&
    time.shift >= sequence.shift &&
    time.width + sequence.width <= 63;
  const text = spec(epochMs, unit, bits, fields);
  // A layout that is a preset, written out, is the preset.
  const preset = name === null ? PRESET_LIST.find((p) => p.layout.epochMs === epochMs && p.layout.unitUs === unitUs && sameFields(p.layout.fields, fields)) : undefined;
  if (preset) return preset;
  const lastUs = BigInt(epochMs) * 1000n + (BigInt(time.max) + 1n) * BigInt(unitUs) - 1n;
  const layout: Layout = Object.freeze({
    name: name ?? text,
    family,
    epochMs,
    unit,
    unitUs,
    unitMs: unitUs / 1000,
    fields: Object.freeze(fields),
    bits,
    maxId: (1n << BigInt(bits)) - 1n,
    lastInstantMs: Number(lastUs / 1000n),
    jsSafe: bits <= 53,
    mintable,
    spec: text,
  });
  const digits = unitDigits(unitUs);
  return {
    layout,
    maxTicks: time.max,
    timeIndex,
    digits,
    maxHi: Number(layout.maxId >> 32n),
    maxLo: Number(layout.maxId & 0xffffffffn),
    maxSafe: Math.min(Number.MAX_SAFE_INTEGER, Number(layout.maxId)),
    make: maker(layout, timeIndex, digits),
  };
}

const PRESET_LIST: Compiled[] = [];

for (const [name, family, epochMs, unit, fields] of SPECS) {
  const c = build(name, family, epochMs, PRESET_UNITS[unit], fields);
  COMPILED.set(name, c);
  PRESET_LIST.push(c);
}

/** Every preset, in the core's order (`twitter` first). */
export const PRESETS: readonly Layout[] = Object.freeze([...COMPILED.values()].map((c) => c.layout));

/** The names of the presets. */
export const PRESET_NAMES: readonly string[] = Object.freeze(PRESETS.map((p) => p.name));

function unknownLayout(name: string): SnowmintError {
  return new SnowmintError(
    "InvalidLayout",
    `unknown layout ${quote(name)} (expected a preset (${PRESET_NAMES.join(", ")}), widths T/D/M/S such as 42/0/10/11, ` +
      "or fields such as time:39/sequence:8/machine:16; any of them optionally with @EPOCH and ,UNIT)",
    { subject: "layout", value: name.slice(0, 64) },
  );
}

/** Layouts read from text, by their text: the last few. */
const CUSTOM = new Map<string, Compiled>();
const CUSTOM_KEPT = 64;

function compiled(ref: LayoutRef): Compiled {
  if (typeof ref === "string") {
    const found = COMPILED.get(ref) ?? COMPILED.get(ref.toLowerCase()) ?? CUSTOM.get(ref);
    if (found) return found;
    const read = parseLayout(ref);
    if (CUSTOM.size >= CUSTOM_KEPT) CUSTOM.delete(CUSTOM.keys().next().value!);
    CUSTOM.set(ref, read);
    return read;
  }
  if (ref && typeof ref === "object") {
    const found = COMPILED.get(ref.name) ?? CUSTOM.get(ref.name) ?? CUSTOM.get(ref.spec);
    if (found && found.layout === ref) return found;
    if (typeof ref.spec === "string") return compiled(ref.spec);
  }
  throw unknownLayout(String(ref));
}

// ---------------------------------------------------------- layout text

function invalidLayout(reason: string): SnowmintError {
  return new SnowmintError("InvalidLayout", `invalid layout: ${reason}`, { subject: "layout" });
}

const MAX_FIELDS = 8;
const MAX_NAME_LEN = 15;
const NAME = /^[a-z][a-z0-9_]{0,14}$/;

/** The longest field this package reads as a number, exactly. */
const MAX_FIELD_BITS = 53;

/**
 * A layout from its fields, checked by the core's rules (`Layout::from_fields`),
 * and by this package's: every field at most 53 bits wide (so that it is a
 * number, exactly) and the last instant within a Date's range.
 */
function fromFields(epochMs: number, unitUs: number, specs: FieldSpec[]): Compiled {
  const name = (at: number): string => quote(specs[at]![0]);
  if (specs.length === 0) throw invalidLayout("a layout needs at least a time field");
  if (specs.length > MAX_FIELDS) throw invalidLayout(`${specs.length} fields is out of range (1..=${MAX_FIELDS})`);
  let total = 0;
  for (const [at, [fieldName, , width]] of specs.entries()) {
    if (!NAME.test(fieldName)) {
      throw invalidLayout(
        `field name ${name(at)} is not valid (expected 1 to ${MAX_NAME_LEN} of a-z, 0-9 and _, starting with a letter)`,
      );
    }
    if (specs.slice(0, at).some(([other]) => other === fieldName)) throw invalidLayout(`field ${name(at)} is named twice`);
    if (width > 64) throw invalidLayout(`field ${cut(fieldName)} width ${width} is out of range (0..=64)`);
    total += width;
  }
  if (total > 64) throw invalidLayout(`the widths ${specs.map((f) => f[2]).join("+")} add up to ${total} bits (0..=64)`);
  const times = specs.filter((f) => f[1] === "time");
  if (times.length === 0) throw invalidLayout("a layout needs a time field");
  if (times.length > 1) throw invalidLayout(`${times.length} time fields (a layout has exactly 1)`);
  if (times[0]![2] === 0) throw invalidLayout("the time field needs at least 1 bit");
  const sequences = specs.filter((f) => f[1] === "sequence");
  if (sequences.length > 1) throw invalidLayout(`${sequences.length} sequence fields (a layout has at most 1)`);
  if (sequences.length === 1 && sequences[0]![2] === 0) throw invalidLayout("the sequence field needs at least 1 bit");
  if (epochMs < 0) throw invalidLayout(`epoch ${epochMs} is before 1970-01-01 (0..)`);
  const endUs = BigInt(epochMs) * 1000n + (1n << BigInt(times[0]![2])) * BigInt(unitUs) - 1n;
  if (endUs > (1n << 63n) - 1n) {
    throw invalidLayout(
      `epoch ${epochMs} plus the time field's span overflows a 64-bit count of microseconds (about the year 294,000)`,
    );
  }
  // This package's own limits, beyond the core's.
  const wide = specs.find((f) => f[2] > MAX_FIELD_BITS);
  if (wide) {
    throw invalidLayout(
      `field ${wide[0]} is ${wide[2]} bits wide; this package reads fields of at most ${MAX_FIELD_BITS} bits (a JavaScript number holds them exactly)`,
    );
  }
  if (endUs / 1000n > 8_640_000_000_000_000n) {
    throw invalidLayout(`its last instant is past the year 275760, beyond what this package reads (a Date's range)`);
  }
  return build(null, null, epochMs, unitUs, specs);
}

function roleNamed(text: string): Role | undefined {
  if (text === "time") return "time";
  if (text === "node") return "node";
  if (text === "sequence" || text === "seq") return "sequence";
  if (text === "opaque") return "opaque";
  return undefined;
}

/** A unit's text (`10ms`, `1s`, `250us`), in microseconds, as the core's `Unit::from_str`. */
function parseUnit(text: string): number {
  const split = /^[0-9]*/.exec(text)![0].length;
  const number = text.slice(0, split);
  const suffix = text.slice(split);
  const scale = suffix === "us" || suffix === "µs" ? 1 : suffix === "ms" ? 1000 : suffix === "s" ? 1_000_000 : 0;
  const notUnit = (): SnowmintError =>
    invalidLayout(
      `unit ${quote(text)} is not a unit (expected a whole number of us, ms or s in 1us..=1s, such as 1ms or 10ms)`,
    );
  if (scale === 0) throw notUnit();
  if (number === "") throw notUnit();
  if (number.length > 10) throw invalidLayout(`unit ${cut(text)} is out of range (1us..=1s)`);
  const micros = Number(number) * scale;
  if (micros < 1 || micros > 1_000_000) throw invalidLayout(`unit ${cut(text)} is out of range (1us..=1s)`);
  return micros;
}

function smallDecimal(text: string): number | undefined {
  return /^[0-9]{1,3}$/.test(text) && Number(text) <= 255 ? Number(text) : undefined;
}

/**
 * Reads a layout as the core does (`Layout::from_str`, what `--layout`
 * and the service's `layout` parameter take): a preset's name (any case),
 * Twitter-shaped widths `T/D/M/S` adding up to 63, or named fields
 * `name:width[:role]/...` most significant first; any of them optionally
 * followed by `@EPOCH` (Unix milliseconds or RFC 3339) and `,UNIT` (1us to
 * 1s). Without them a preset keeps its own epoch and unit; widths and
 * fields take Twitter's epoch and milliseconds.
 *
 * @throws {SnowmintError} `InvalidLayout`, with the core's message.
 */
function parseLayout(text: string): Compiled {
  const comma = text.indexOf(",");
  const head = comma < 0 ? text : text.slice(0, comma);
  const unitUs = comma < 0 ? undefined : parseUnit(text.slice(comma + 1));
  const at = head.indexOf("@");
  const base = at < 0 ? head : head.slice(0, at);
  let epoch: number | undefined;
  if (at >= 0) {
    let ms: bigint;
    try {
      ms = parseTime(head.slice(at + 1), "epoch");
    } catch (error) {
      throw invalidLayout((error as Error).message);
    }
    if (ms < -(2n ** 53n) || ms > 2n ** 53n) {
      throw invalidLayout(`epoch ${ms} plus the time field's span overflows a 64-bit count of microseconds (about the year 294,000)`);
    }
    epoch = Number(ms);
  }
  let layout: Compiled;
  if (base.includes(":")) {
    const specs: FieldSpec[] = [];
    for (const item of base.split("/")) {
      const parts = item.split(":");
      const [name = "", width, role] = parts;
      if (width === undefined || parts.length > 3) {
        throw invalidLayout(`field ${quote(item)} is not name:width or name:width:role (such as machine:10 or worker:5:node)`);
      }
      const bits = smallDecimal(width);
      if (bits === undefined) throw invalidLayout(`field ${cut(name)} width ${quote(width)} is out of range (0..=64)`);
      if (!NAME.test(name)) {
        throw invalidLayout(
          `field name ${quote(name)} is not valid (expected 1 to ${MAX_NAME_LEN} of a-z, 0-9 and _, starting with a letter)`,
        );
      }
      let fieldRole: Role | undefined;
      if (role !== undefined) {
        fieldRole = roleNamed(role);
        if (!fieldRole) {
          throw invalidLayout(`field ${cut(name)} role ${quote(role)} is not a role (expected time, node, sequence or opaque)`);
        }
      } else {
        fieldRole = impliedRole(name);
        if (!fieldRole) {
          throw invalidLayout(
            `field ${quote(name)} needs a role (such as ${cut(name)}:${bits}:node; roles: time, node, sequence, opaque)`,
          );
        }
      }
      specs.push([name, fieldRole, bits]);
    }
    layout = fromFields(epoch ?? TWITTER_EPOCH_MS, unitUs ?? 1000, specs);
  } else if (base.includes("/")) {
    const parts = base.split("/").map(smallDecimal);
    if (parts.length !== 4 || parts.some((w) => w === undefined)) throw unknownLayout(text);
    const [t, d, m, q] = parts as number[];
    const total = t! + d! + m! + q!;
    if (total !== 63) {
      throw invalidLayout(
        `widths ${t}+${d}+${m}+${q} add up to ${total} bits, not 63 (T/D/M/S is Twitter's 63-bit shape; ` +
          "name the fields, as in time:42/machine:10/sequence:12, for other totals)",
      );
    }
    if (t === 0) throw invalidLayout("the timestamp field needs at least 1 bit");
    layout = fromFields(epoch ?? TWITTER_EPOCH_MS, 1000, [
      ["time", "time", t!],
      ["datacenter", "node", d!],
      ["machine", "node", m!],
      ["sequence", "sequence", q!],
    ]);
  } else {
    const preset = COMPILED.get(base.toLowerCase());
    if (!preset) throw unknownLayout(text);
    layout =
      epoch === undefined
        ? preset
        : fromFields(epoch, preset.layout.unitUs, preset.layout.fields.map((f) => [f.name, f.role, f.width]));
  }
  if (unitUs !== undefined && unitUs !== layout.layout.unitUs) {
    layout = fromFields(layout.layout.epochMs, unitUs, layout.layout.fields.map((f) => [f.name, f.role, f.width]));
  }
  return layout;
}

/**
 * The layout a name or text says, as the core reads `--layout`: a preset
 * by name (any case), Twitter-shaped widths `T/D/M/S` adding up to 63
 * (`42/0/10/11`), or named fields most significant first
 * (`time:39/sequence:8/machine:16`), any of them optionally with `@EPOCH`
 * (Unix milliseconds or RFC 3339) and `,UNIT` (1us to 1s):
 * `discord@2020-01-01T00:00:00Z`, `sonyflake-v2,1ms`. Every function that
 * takes a layout takes this text too.
 *
 * Beyond the core's rules, this package reads layouts whose fields are at
 * most 53 bits wide (so that each is a number, exactly) and whose last
 * instant is within a Date's range; every preset is.
 *
 * @throws {SnowmintError} `InvalidLayout`, with the core's message.
 */
export function layout(name: LayoutRef): Layout {
  return compiled(name).layout;
}

// ------------------------------------------------------------ ID text

/** How an ID is written as text, as the core's `Encoding`. */
export type Encoding = "decimal" | "hex" | "base32" | "base58";

const ENCODINGS: readonly Encoding[] = ["decimal", "hex", "base32", "base58"];
const HEX_DIGITS = "0123456789abcdef";
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const RADIX: Record<Encoding, bigint> = { decimal: 10n, hex: 16n, base32: 32n, base58: 58n };

function digitValue(encoding: Encoding, c: string): number {
  const code = c.charCodeAt(0);
  if (c.length !== 1 || code > 127) return -1;
  switch (encoding) {
    case "decimal":
      return code >= 48 && code <= 57 ? code - 48 : -1;
    case "hex":
      return HEX_DIGITS.indexOf(c.toLowerCase());
    case "base32": {
      const upper = c.toUpperCase();
      if (upper === "O") return 0;
      if (upper === "I" || upper === "L") return 1;
      return CROCKFORD.indexOf(upper);
    }
    case "base58":
      return BASE58.indexOf(c);
  }
}

/**
 * `id` written in `encoding` as the core writes it: hex as 16 digits,
 * base32 (Crockford, TSID's text) as 13, decimal and base58 unpadded.
 */
export function formatId(id: bigint, encoding: Encoding = "decimal"): string {
  switch (encoding) {
    case "decimal":
      return id.toString();
    case "hex":
      return id.toString(16).padStart(16, "0");
    case "base32":
    case "base58": {
      const alphabet = encoding === "base32" ? CROCKFORD : BASE58;
      const radix = RADIX[encoding];
      let out = "";
      let rest = id;
      do {
        out = alphabet[Number(rest % radix)] + out;
        rest /= radix;
      } while (rest > 0n);
      return encoding === "base32" ? out.padStart(13, "0") : out;
    }
  }
}

function checkEncoding(encoding: unknown): Encoding {
  const name = typeof encoding === "string" ? encoding.toLowerCase() : "";
  if (name === "dec") return "decimal";
  if ((ENCODINGS as readonly string[]).includes(name)) return name as Encoding;
  throw new SnowmintError(
    "UnknownName",
    `unknown encoding ${quote(String(encoding))} (expected decimal, hex, base32 or base58)`,
    { subject: "encoding", value: String(encoding).slice(0, 64) },
  );
}

function invalidId(
  kind: "empty" | "digit" | "range",
  input: string,
  encoding: Encoding,
  max: bigint,
  digit?: { character: string; position: number },
): SnowmintError {
  const range = `expected a ${encoding} integer in 0..=${formatId(max, encoding)}`;
  const facts = { subject: "id", value: input.slice(0, 64), min: "0", max: formatId(max, encoding) };
  switch (kind) {
    case "empty":
      return new SnowmintError("InvalidText", `ID is empty; ${range}`, facts);
    case "digit":
      return new SnowmintError(
        "InvalidText",
        `ID ${quote(input)} is not a ${encoding} integer: ${debugChar(digit!.character)} at position ${digit!.position}; ${range}`,
        facts,
      );
    case "range":
      return new SnowmintError("OutOfRange", `ID ${cut(input)} is out of range (0..=${formatId(max, encoding)})`, facts);
  }
}

/** Reads ID text in an encoding as the core's `parse_u64`: the value, or an error kind. */
function readDigits(
  text: string,
  encoding: Encoding,
): bigint | { kind: "empty" } | { kind: "digit"; character: string; position: number } | { kind: "range" } {
  if (text === "") return { kind: "empty" };
  let digits = text;
  let offset = 0;
  if (encoding === "hex" && (text.startsWith("0x") || text.startsWith("0X"))) {
    digits = text.slice(2);
    offset = 2;
    if (digits === "") return { kind: "empty" };
  }
  const radix = RADIX[encoding];
  let value = 0n;
  let significant = 0;
  let position = 0;
  for (const c of digits) {
    const d = digitValue(encoding, c);
    if (d < 0) return { kind: "digit", character: c, position: position + offset };
    position += 1;
    if (significant === 0 && d === 0) continue;
    significant += 1;
    // 65 digits of any of these radixes are past 2^64: stop counting.
    if (significant <= 65) value = value * radix + BigInt(d);
  }
  return significant > 65 || value > MAX_U64 ? { kind: "range" } : value;
}

const MAX_U64 = (1n << 64n) - 1n;

/**
 * Reads an ID written in `encoding` (default decimal), as the core's
 * `Layout::parse_id`: `0x` may start hex, base32 is Crockford's (`O` reads
 * as 0, `I` and `L` as 1, any case), leading zeros are allowed, and the
 * value must be in the layout's range (0..=2^64-1 without a layout).
 *
 * @throws {SnowmintError} `InvalidText` (empty, or a character that is no
 *   digit, with its position) or `OutOfRange`.
 */
export function parseIdText(text: string, encoding: Encoding = "decimal", layoutRef?: LayoutRef): bigint {
  const enc = checkEncoding(encoding);
  const max = layoutRef === undefined ? MAX_U64 : compiled(layoutRef).layout.maxId;
  if (typeof text !== "string") {
    throw new SnowmintError("InvalidText", `ID ${quote(String(text))} is not text (expected a ${enc} integer in 0..=${formatId(max, enc)})`, {
      subject: "id",
      value: String(text).slice(0, 64),
    });
  }
  // A leading minus on an otherwise valid number is a value: out of range.
  if (text.startsWith("-") && (enc === "decimal" || enc === "hex")) {
    const rest = readDigits(text.slice(1), enc);
    if (typeof rest === "bigint" && rest !== 0n) return fail(invalidId("range", text, enc, max));
  }
  const read = readDigits(text, enc);
  if (typeof read !== "bigint") {
    return fail(invalidId(read.kind, text, enc, max, read.kind === "digit" ? read : undefined));
  }
  if (read > max) return fail(invalidId("range", text, enc, max));
  return read;
}

function fail(error: SnowmintError): never {
  throw error;
}

// ------------------------------------------------------------- decode

/** The fields of one ID, by the family's names, and its time. */
export class Decoded {
  #id: bigint | undefined;
  readonly #text: string | undefined;
  /** The layout's name. */
  readonly layout: string;
  /** The time field's value, in ticks of the unit since the epoch. */
  readonly ticks: number;
  /** The start of the ID's tick, in Unix milliseconds. */
  readonly timestampMs: number;
  /** Every other field, by name, most significant first (each below 2^53). */
  readonly fields: Readonly<Record<string, number>>;
  readonly #digits: number;
  readonly #us: bigint | undefined;

  /** @internal */
  constructor(
    id: bigint | string,
    layout: string,
    ticks: number,
    timestampMs: number,
    fields: Record<string, number>,
    digits: number,
    us?: bigint,
  ) {
    // An ID read from decimal text becomes a BigInt when asked for.
    if (typeof id === "string") this.#text = id;
    else this.#id = id;
    this.layout = layout;
    this.ticks = ticks;
    this.timestampMs = timestampMs;
    this.fields = fields;
    this.#digits = digits;
    this.#us = us;
  }

  /** The ID. */
  get id(): bigint {
    return (this.#id ??= BigInt(this.#text!));
  }

  /** The time, RFC 3339 in UTC, with the digits of the layout's unit (`2016-04-30T11:18:25.796Z`). */
  get time(): string {
    if (this.#us !== undefined) return formatNs(this.#us * 1000n, 10n ** BigInt(9 - this.#digits));
    return formatMs(this.timestampMs, this.#digits);
  }

  /** The time as a Date. */
  get date(): Date {
    return new Date(this.timestampMs);
  }

  /** What `console.log` shows in Node: the ID and time too, which are read when asked for. */
  [Symbol.for("nodejs.util.inspect.custom")](): object {
    return { id: this.id, layout: this.layout, time: this.time, timestampMs: this.timestampMs, ticks: this.ticks, fields: this.fields };
  }

  /** JSON: the ID as a string (as snowmint's API writes IDs), the layout, the time, and every other field by name. */
  toJSON(): { id: string; layout: string; timestamp_ms: number; time: string } & Record<string, number | string> {
    return { id: this.id.toString(), layout: this.layout, timestamp_ms: this.timestampMs, time: this.time, ...this.fields };
  }
}


function toId(id: bigint | number | string, encoding: Encoding, c: Compiled): bigint {
  if (typeof id === "bigint") {
    if (id < 0n) throw invalidId("range", id.toString(), "decimal", c.layout.maxId);
    if (id > c.layout.maxId) throw outOfLayout(id, c.layout);
    return id;
  }
  if (typeof id === "string") return parseIdText(id, encoding, c.layout);
  if (typeof id === "number") {
    if (!Number.isSafeInteger(id)) {
      throw new SnowmintError(
        Number.isInteger(id) ? "OutOfRange" : "InvalidText",
        `ID ${id} is not a safe integer (0..=${Number.MAX_SAFE_INTEGER}): a number may have lost digits; give IDs above 2^53 as BigInt or text`,
        { subject: "id", value: String(id), min: "0", max: String(Number.MAX_SAFE_INTEGER) },
      );
    }
    const big = BigInt(id);
    if (big < 0n) throw invalidId("range", String(id), "decimal", c.layout.maxId);
    if (big > c.layout.maxId) throw outOfLayout(big, c.layout);
    return big;
  }
  throw new SnowmintError("InvalidText", `ID ${quote(String(id))} is not an ID (expected a BigInt, a safe integer or text)`, {
    subject: "id",
    value: String(id).slice(0, 64),
  });
}

function outOfLayout(id: bigint, l: Layout): SnowmintError {
  return new SnowmintError("OutOfRange", `ID ${id} is out of range for layout ${l.name} (0..=${l.maxId})`, {
    subject: "id",
    value: id.toString(),
    min: "0",
    max: l.maxId.toString(),
  });
}

/** Options of {@link decode}. */
export interface DecodeOptions {
  /** How an ID given as text is written (default `decimal`). */
  encoding?: Encoding;
}

/**
 * Takes an ID apart with a layout (a preset's name or a layout's text, as
 * {@link layout} reads them; default `twitter`): its time
 * and every other field by the family's names, as the core's
 * `Layout::decode`. The ID is a BigInt, a safe integer, or text in
 * `options.encoding`.
 *
 * @throws {SnowmintError} `OutOfRange` for an ID above the layout's
 *   largest (or a number that is not a safe integer), `InvalidText` for
 *   text that is not an ID, `InvalidLayout` for a name that is no preset.
 */
export function decode(id: bigint | number | string, layoutRef: LayoutRef = "twitter", options?: DecodeOptions): Decoded {
  let c: Compiled;
  if (layoutRef === lastRef) c = lastCompiled!;
  else {
    c = compiled(layoutRef);
    lastRef = layoutRef;
    lastCompiled = c;
  }
  const encoding = options?.encoding === undefined ? undefined : checkEncoding(options.encoding);
  if (typeof id === "string" && (encoding === undefined || encoding === "decimal") && splitDecimal(id) && (HI < c.maxHi || (HI === c.maxHi && LO <= c.maxLo))) {
    // The common case, without BigInt arithmetic: decimal text within range.
    return c.make(id, HI, LO);
  }
  if (typeof id === "bigint" && id >= 0n && id <= c.layout.maxId) {
    HALVES.setBigUint64(0, id);
    return c.make(id, HALVES.getUint32(0), HALVES.getUint32(4));
  }
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 0 && id <= c.maxSafe) {
    const hi = Math.floor(id / TWO_32);
    return c.make(BigInt(id), hi, id - hi * TWO_32);
  }
  const value = toId(id, encoding ?? "decimal", c);
  HALVES.setBigUint64(0, value);
  return c.make(value, HALVES.getUint32(0), HALVES.getUint32(4));
}

/** The layout {@link decode} was last given, and what it is: a run of IDs is usually of one layout. */
let lastRef: LayoutRef | undefined;
let lastCompiled: Compiled | undefined;

/** Eight bytes to split a BigInt into 32-bit halves without BigInt arithmetic. */
const HALVES = new DataView(new ArrayBuffer(8));

/** The halves of the decimal text {@link splitDecimal} read last. */
let HI = 0;
let LO = 0;

/**
 * Reads decimal text of 1 to 20 digits into {@link HI} and {@link LO},
 * the high and low 32 bits of its value, five digits at a time (every
 * step exact in a double); false for text that is not that, or a value
 * above 2^64-1 (the full reader then says why).
 */
function splitDecimal(text: string): boolean {
  const len = text.length;
  if (len === 0 || len > 20) return false;
  let hi = 0;
  let lo = 0;
  let at = 0;
  while (at < len) {
    const end = at + 5 < len ? at + 5 : len;
    let chunk = 0;
    let scale = 1;
    for (; at < end; at++) {
      const d = text.charCodeAt(at) - 48;
      if (d < 0 || d > 9) return false;
      chunk = chunk * 10 + d;
      scale *= 10;
    }
    const t = lo * scale + chunk;
    const carry = Math.floor(t / TWO_32);
    lo = t - carry * TWO_32;
    hi = hi * scale + carry;
    if (hi >= TWO_32) return false;
  }
  HI = hi;
  LO = lo;
  return true;
}

// ------------------------------------------------------ encode, range

function timestampError(kind: "before" | "past", timestampMs: bigint, l: Layout): SnowmintError {
  const message =
    kind === "before"
      ? `timestamp ${timestampMs} is before the epoch ${l.epochMs} (valid: ${l.epochMs}..=${l.lastInstantMs})`
      : `timestamp ${timestampMs} is past the last representable instant ${l.lastInstantMs} (valid: ${l.epochMs}..=${l.lastInstantMs})`;
  return new SnowmintError("OutOfRange", message, {
    subject: "timestamp",
    value: timestampMs.toString(),
    min: String(l.epochMs),
    max: String(l.lastInstantMs),
  });
}

/** The tick a time falls in, as the core's `timestamp_offset`. */
function offset(c: Compiled, timestampMs: bigint): number {
  const l = c.layout;
  if (timestampMs < BigInt(l.epochMs)) throw timestampError("before", timestampMs, l);
  if (timestampMs > BigInt(l.lastInstantMs)) throw timestampError("past", timestampMs, l);
  return Number(((timestampMs - BigInt(l.epochMs)) * 1000n) / BigInt(l.unitUs));
}

function fieldValue(field: LayoutField, value: unknown): bigint {
  let big: bigint | undefined;
  if (typeof value === "bigint") big = value;
  else if (typeof value === "number" && Number.isSafeInteger(value)) big = BigInt(value);
  else if (typeof value === "string" && /^-?[0-9]{1,30}$/.test(value)) big = BigInt(value);
  if (big === undefined) {
    throw new SnowmintError(
      "InvalidText",
      `${field.name} ${quote(String(value))} is not a number (expected an integer in 0..=${field.max})`,
      { subject: field.name, value: String(value).slice(0, 64), min: "0", max: String(field.max) },
    );
  }
  if (big < 0n || big > BigInt(field.max)) {
    throw new SnowmintError("OutOfRange", `${field.name} ${big} is out of range (0..=${field.max})`, {
      subject: field.name,
      value: big.toString(),
      min: "0",
      max: String(field.max),
    });
  }
  return big;
}

/** Field values by name, for {@link encode}. */
export type FieldValues = Readonly<Record<string, number | bigint | string>>;

/**
 * Makes the ID of a layout (a name or text; default `twitter`) at `time` (Unix
 * milliseconds, RFC 3339 text or a Date) with the given field values
 * (the others 0), as the core's `Layout::encode`. A time inside a tick of
 * 10 ms or 1 s gives that tick.
 *
 * @throws {SnowmintError} `OutOfRange` for a time outside the layout's
 *   span or a field value outside its range, `UnknownName` for a field the
 *   layout does not have, `InvalidText` for a time or value that is not one.
 */
export function encode(time: TimeInput, fields: FieldValues = {}, layoutRef: LayoutRef = "twitter"): bigint {
  const c = compiled(layoutRef);
  const l = c.layout;
  const values = l.fields.map((_, i) => (i === c.timeIndex ? BigInt(offset(c, parseTime(time, "timestamp", Date.now))) : 0n));
  for (const [name, value] of Object.entries(fields)) {
    const index = l.fields.findIndex((f) => f.name === name);
    if (index < 0) {
      throw new SnowmintError(
        "UnknownName",
        `layout ${l.name} has no field ${quote(name)} (its fields: ${l.fields.map((f) => f.name).join(", ")})`,
        { subject: "field", value: name.slice(0, 64) },
      );
    }
    values[index] = fieldValue(l.fields[index]!, value);
  }
  return l.fields.reduce((id, f, i) => id | (values[i]! << BigInt(f.shift)), 0n);
}

/** The IDs of a time window: {@link range}'s answer. */
export interface IdRange {
  /** The smallest ID of the window. */
  readonly min: bigint;
  /** The largest. */
  readonly max: bigint;
  /** The window's start, Unix milliseconds and RFC 3339. */
  readonly fromMs: number;
  readonly from: string;
  /** Its end (included). */
  readonly toMs: number;
  readonly to: string;
}

/**
 * The IDs a layout (a name or text; default `twitter`) gives from `from` to `to`
 * (both included), as the core's `Layout::id_range`: every ID of the
 * window lies in min..=max, for instance for a database query.
 *
 * @throws {SnowmintError} `OutOfRange` for a time outside the layout's
 *   span, `EmptyWindow` when `from` is after `to`, `InvalidText` for a
 *   time that is not one.
 */
export function range(from: TimeInput, to: TimeInput, layoutRef: LayoutRef = "twitter"): IdRange {
  const c = compiled(layoutRef);
  const l = c.layout;
  const fromMs = parseTime(from, "from", Date.now);
  const toMs = parseTime(to, "to", Date.now);
  const start = offset(c, fromMs);
  const end = offset(c, toMs);
  if (fromMs > toMs) {
    throw new SnowmintError("EmptyWindow", `time window is empty: from ${fromMs} is after to ${toMs}`, {
      subject: "from",
      value: fromMs.toString(),
      max: toMs.toString(),
    });
  }
  const time = l.fields[c.timeIndex]!;
  const above = l.fields.slice(0, c.timeIndex).find((f) => f.width > 0);
  if (above) {
    throw new SnowmintError(
      "InvalidLayout",
      `invalid layout: the IDs of a time window are not one range in layout ${l.name}: its field ${above.name} lies above its time field`,
      { subject: "layout" },
    );
  }
  const shift = BigInt(time.shift);
  return {
    min: BigInt(start) << shift,
    max: (BigInt(end) << shift) | ((1n << shift) - 1n),
    fromMs: Number(fromMs),
    from: formatMs(Number(fromMs)),
    toMs: Number(toMs),
    to: formatMs(Number(toMs)),
  };
}
