// Times as the Rust core writes and reads them: RFC 3339 in UTC with the
// fractional digits of a family's unit, on the proleptic Gregorian
// calendar (H. Hinnant's civil-from-days), and the times a caller gives
// (Unix milliseconds, RFC 3339, a Date).

import { SnowmintError, echo } from "./errors.js";

const MS_PER_DAY = 86_400_000;

/** (year, month, day) of a day counted from 1970-01-01. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  return [yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

/** Days from 1970-01-01 to a date. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/** `YYYY-MM-DDTHH:MM:SS` of a day (from 1970-01-01) and a second of that day. */
function wholeSecond(days: number, ofDay: number): string {
  const [year, month, day] = civilFromDays(days);
  // ISO 8601 extended years outside 0000..9999: a sign and at least 6 digits.
  const yearText =
    year >= 0 && year <= 9999 ? pad(year, 4) : (year < 0 ? "-" : "+") + pad(Math.abs(year), 6);
  return `${yearText}-${pad(month, 2)}-${pad(day, 2)}T${pad(Math.floor(ofDay / 3600), 2)}:${pad(
    Math.floor(ofDay / 60) % 60,
    2,
  )}:${pad(ofDay % 60, 2)}`;
}

/**
 * RFC 3339 in UTC of Unix milliseconds with 0 to 3 fractional digits (the
 * digits of a unit of 1 ms or more), as the core writes a decoded time.
 */
export function formatMs(unixMs: number, digits = 3): string {
  // The engine's own writer is the same text (ISO 8601's extended years
  // included) within a Date's range, and several times faster.
  if (unixMs >= -8.64e15 && unixMs <= 8.64e15) {
    const text = new Date(unixMs).toISOString();
    if (digits >= 3) return text;
    return digits <= 0 ? `${text.slice(0, -5)}Z` : `${text.slice(0, -4 + digits)}Z`;
  }
  const seconds = Math.floor(unixMs / 1000);
  const days = Math.floor(seconds / 86_400);
  const whole = wholeSecond(days, seconds - days * 86_400);
  if (digits <= 0) return `${whole}Z`;
  const ms = unixMs - seconds * 1000;
  return `${whole}.${pad(Math.floor(ms / 10 ** (3 - digits)), digits)}Z`;
}

/** How many fractional digits a unit of `unitNs` nanoseconds is written with. */
export function fractionDigits(unitNs: bigint): number {
  let unit = unitNs <= 0n ? 1n : unitNs;
  let digits = 9;
  while (digits > 0 && unit % 10n === 0n) {
    unit /= 10n;
    digits -= 1;
  }
  return digits;
}

/** RFC 3339 in UTC of Unix nanoseconds, at the precision of `unitNs`. */
export function formatNs(unixNs: bigint, unitNs: bigint): string {
  const billion = 1_000_000_000n;
  let second = unixNs / billion;
  let nanos = unixNs % billion;
  if (nanos < 0n) {
    nanos += billion;
    second -= 1n;
  }
  // Beyond 64-bit milliseconds, the core writes the seconds only.
  if (second > 9_223_372_036_854_775n || second < -9_223_372_036_854_775n) return `${second}s`;
  const digits = fractionDigits(unitNs);
  let days = second / 86_400n;
  let ofDay = second % 86_400n;
  if (ofDay < 0n) {
    ofDay += 86_400n;
    days -= 1n;
  }
  const whole = wholeSecond(Number(days), Number(ofDay));
  if (digits === 0) return `${whole}Z`;
  const fraction = nanos / 10n ** BigInt(9 - digits);
  return `${whole}.${fraction.toString().padStart(digits, "0")}Z`;
}

/** A time a caller gives: Unix milliseconds, RFC 3339 text, or a Date. */
export type TimeInput = number | bigint | string | Date;

const I64_MAX = (1n << 63n) - 1n;
const I64_MIN = -(1n << 63n);

function invalidTime(name: string, input: string, reason: string, acceptsNow: boolean): SnowmintError {
  return new SnowmintError(
    "InvalidText",
    `${name} ${echo(input)} is not valid: ${reason} (expected ${acceptsNow ? "now, " : ""}Unix milliseconds such as 1700000000000, or RFC 3339 such as 2023-11-14T22:13:20.000Z)`,
    { subject: name, value: input.slice(0, 64) },
  );
}

/**
 * Reads a time as the core does (`parse_time`): Unix milliseconds (a
 * number, a BigInt or decimal text, negative allowed), RFC 3339 with `Z`
 * or an offset (fractions below a millisecond are dropped, towards the
 * past), or a Date. `"now"` when `now` is given. Unix milliseconds, as a
 * BigInt in the range of a 64-bit integer.
 */
export function parseTime(input: TimeInput, name = "time", now?: () => number): bigint {
  if (typeof input === "bigint") {
    if (input > I64_MAX || input < I64_MIN) throw invalidTime(name, input.toString(), "the number does not fit 64 bits", !!now);
    return input;
  }
  if (typeof input === "number") {
    if (!Number.isInteger(input)) {
      throw invalidTime(name, String(input), "it is not a whole number of milliseconds", !!now);
    }
    return BigInt(input);
  }
  if (input instanceof Date) {
    const ms = input.getTime();
    if (Number.isNaN(ms)) throw invalidTime(name, "Invalid Date", "the Date is invalid", !!now);
    return BigInt(ms);
  }
  if (typeof input !== "string") {
    throw invalidTime(name, String(input), "it is not a number, a string or a Date", !!now);
  }
  if (now && input.toLowerCase() === "now") return BigInt(now());
  if (input === "") throw invalidTime(name, input, "it is empty", !!now);
  if (/^-?[0-9]+$/.test(input)) {
    const value = input.length > 21 ? I64_MAX + 1n : BigInt(input);
    if (value > I64_MAX || value < I64_MIN) {
      throw invalidTime(name, input, "the number does not fit 64 bits", !!now);
    }
    return value;
  }
  const micros = parseRfc3339(input);
  if (typeof micros === "string") throw invalidTime(name, input, micros, !!now);
  // Towards the past, as the core's div_euclid.
  return micros >= 0n ? micros / 1000n : -((-micros + 999n) / 1000n);
}

function isLeap(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Unix microseconds of RFC 3339 text, or why it is not valid. */
function parseRfc3339(input: string): bigint | string {
  let at = 0;
  const digit = (): number | undefined => {
    const c = input.charCodeAt(at);
    if (c >= 48 && c <= 57) {
      at += 1;
      return c - 48;
    }
    return undefined;
  };
  const number = (width: number): number | undefined => {
    let value = 0;
    for (let i = 0; i < width; i++) {
      const d = digit();
      if (d === undefined) return undefined;
      value = value * 10 + d;
    }
    return value;
  };
  const expect = (choices: string): boolean => {
    if (at < input.length && choices.includes(input[at]!)) {
      at += 1;
      return true;
    }
    return false;
  };
  const year = number(4);
  if (year === undefined) return "the year needs 4 digits";
  if (!expect("-")) return "expected '-' after the year";
  const month = number(2);
  if (month === undefined) return "the month needs 2 digits";
  if (!expect("-")) return "expected '-' after the month";
  const day = number(2);
  if (day === undefined) return "the day needs 2 digits";
  if (!expect("Tt ")) return "expected 'T' between the date and the time";
  const hour = number(2);
  if (hour === undefined) return "the hour needs 2 digits";
  if (!expect(":")) return "expected ':' after the hour";
  const minute = number(2);
  if (minute === undefined) return "the minute needs 2 digits";
  if (!expect(":")) return "expected ':' after the minute";
  const second = number(2);
  if (second === undefined) return "the second needs 2 digits";
  let micros = 0;
  if (expect(".")) {
    const start = at;
    let scale = 100_000;
    for (let d = digit(); d !== undefined; d = digit()) {
      micros += d * scale;
      scale = Math.trunc(scale / 10);
    }
    if (at === start) return "expected digits after the decimal point";
  }
  let offsetMinutes = 0;
  const sign = at < input.length ? input[at++] : undefined;
  if (sign === "Z" || sign === "z") {
    offsetMinutes = 0;
  } else if (sign === "+" || sign === "-") {
    const hours = number(2);
    if (hours === undefined) return "the offset hours need 2 digits";
    if (!expect(":")) return "expected ':' in the offset";
    const minutes = number(2);
    if (minutes === undefined) return "the offset minutes need 2 digits";
    if (hours > 23 || minutes > 59) return "the offset is out of range (-23:59..=+23:59)";
    offsetMinutes = sign === "-" ? -(hours * 60 + minutes) : hours * 60 + minutes;
  } else {
    return "expected 'Z' or an offset such as +01:00 after the time";
  }
  if (at !== input.length) return "unexpected text after the offset";
  if (month < 1 || month > 12) return "the month is out of range (01..=12)";
  if (day < 1 || day > daysInMonth(year, month)) return "the day does not exist in that month";
  if (hour > 23) return "the hour is out of range (00..=23)";
  if (minute > 59) return "the minute is out of range (00..=59)";
  if (second > 59) return "the second is out of range (00..=59)";
  const days = daysFromCivil(year, month, day);
  const seconds = ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second;
  return BigInt(seconds) * 1_000_000n + BigInt(micros);
}

/** Unix milliseconds of midnight UTC of a date. */
export function dateMs(year: number, month: number, day: number): number {
  return daysFromCivil(year, month, day) * MS_PER_DAY;
}
