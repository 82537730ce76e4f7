// IDs as BigInt: the one reader of decimal ID text, and the range every
// ID lies in.

import { SnowmintError, echo } from "./errors.js";

/** The largest ID of any layout: 2^64 - 1 (a u64, as the Rust core's IDs). */
export const MAX_U64 = (1n << 64n) - 1n;

/** The largest integer a JavaScript `number` holds exactly: 2^53 - 1. */
export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const DECIMAL = /^[0-9]+$/;

/**
 * Reads decimal ID text (`"1724551110457221119"`) as a BigInt in
 * 0..=2^64-1. `subject` names the value in the error (a field, a JSON key).
 *
 * @throws {SnowmintError} `InvalidText` for text that is not a decimal
 *   integer, `OutOfRange` for one above 2^64-1.
 */
export function parseId(text: string, subject = "id"): bigint {
  if (!DECIMAL.test(text)) {
    const found = text === "" ? "empty" : text.startsWith("-") ? "negative" : "not a decimal integer";
    throw new SnowmintError(
      text.startsWith("-") && DECIMAL.test(text.slice(1)) ? "OutOfRange" : "InvalidText",
      `${subject} ${echo(text)} is ${found} (an ID is a decimal integer in 0..=${MAX_U64})`,
      { subject, value: text.slice(0, 64), min: "0", max: MAX_U64.toString() },
    );
  }
  // Leading zeros are allowed, as the Rust core reads them; the length
  // check keeps BigInt() from reading megabytes of digits.
  const digits = text.replace(/^0+(?=.)/, "");
  const id = digits.length <= 20 ? BigInt(digits) : MAX_U64 + 1n;
  if (id > MAX_U64) {
    throw new SnowmintError("OutOfRange", `${subject} ${echo(text)} is out of range (0..=${MAX_U64})`, {
      subject,
      value: text.slice(0, 64),
      min: "0",
      max: MAX_U64.toString(),
    });
  }
  return id;
}
