// How the Rust core quotes values in its messages, so that an error here
// reads as the same error there: a string cut after about 40 characters
// and shown with Rust's `{:?}`, a character with its quotes.

const ECHO_LIMIT = 40;

function escapeChar(c: string): string {
  switch (c) {
    case "\\":
      return "\\\\";
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
    case "\0":
      return "\\0";
    default: {
      const code = c.codePointAt(0) ?? 0;
      if (code < 0x20 || code === 0x7f) return `\\u{${code.toString(16)}}`;
      return c;
    }
  }
}

/** `input` as the core echoes outside text: cut after 40 shown characters, with `...`. */
export function cut(input: string): string {
  let shown = 0;
  let at = 0;
  for (const c of input) {
    shown += c === '"' ? 2 : escapeChar(c).length;
    if (shown > ECHO_LIMIT) return `${input.slice(0, at)}...`;
    at += c.length;
  }
  return input;
}

/** Rust's `{:?}` of a string. */
export function debugStr(text: string): string {
  let out = '"';
  for (const c of text) out += c === '"' ? '\\"' : escapeChar(c);
  return `${out}"`;
}

/** Rust's `{:?}` of the echo of outside text. */
export function quote(input: string): string {
  return debugStr(cut(input));
}

/** Rust's `{:?}` of a character. */
export function debugChar(c: string): string {
  return c === "'" ? "'\\''" : `'${escapeChar(c)}'`;
}
