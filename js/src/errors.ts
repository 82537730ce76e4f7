// The package's errors. Two families:
//
// - `SnowmintError`: a value was wrong (an ID that is not one, a field out
//   of range). It mirrors the Rust core's `snowmint::Error`: a `kind` from
//   the same list as Rust's `ErrorKind`, and the facts behind the message
//   (`subject`, `value`, `min`, `max`), so that a program never reads the
//   message to learn them.
// - `ClientError` and its subclasses: asking a fleet for IDs went wrong.
//   Each has a `code`; a node's own answers keep the node's code
//   (`no_claim`, `clock_behind`, ...) and its `retryAfterMs`.
//
// Messages never quote a token.

/** The kinds of {@link SnowmintError}, named as the Rust core's `ErrorKind`. */
export type ErrorKind =
  | "OutOfRange"
  | "InvalidText"
  | "UnknownName"
  | "InvalidLayout"
  | "EmptyWindow";

/** What a {@link SnowmintError} is about, and the valid range. */
export interface ErrorFacts {
  /** What the value is: a field's name, or the JSON key it was found under. */
  subject?: string;
  /** The offending value as given (long values are cut). */
  value?: string;
  /** The smallest valid value, in decimal. */
  min?: string;
  /** The largest valid value, in decimal. */
  max?: string;
}

/**
 * A value that is wrong: its message names the value, what it is and the
 * valid range, and the same facts are properties.
 */
export class SnowmintError extends Error {
  /** What kind of failure, as the Rust core's `ErrorKind` names it. */
  readonly kind: ErrorKind;
  /** What the value is (a field, a JSON key). */
  readonly subject: string | undefined;
  /** The offending value as given. */
  readonly value: string | undefined;
  /** The smallest valid value. */
  readonly min: string | undefined;
  /** The largest valid value. */
  readonly max: string | undefined;

  constructor(kind: ErrorKind, message: string, facts: ErrorFacts = {}) {
    super(message);
    this.name = "SnowmintError";
    this.kind = kind;
    this.subject = facts.subject;
    this.value = facts.value;
    this.min = facts.min;
    this.max = facts.max;
  }
}

/** Longest piece of outside text an error quotes. */
const ECHO_LIMIT = 64;

/** `value` as an error quotes it: JSON-quoted, cut when long. */
export function echo(value: string): string {
  if (value.length <= ECHO_LIMIT) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, ECHO_LIMIT))}... (${value.length} characters)`;
}

/** Why asking a fleet for IDs failed. Every subclass has a `code`. */
export class ClientError extends Error {
  /** For programs: what went wrong. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ClientError";
    this.code = code;
  }
}

/** The client's options cannot be used (`code` is `"config"`). */
export class ConfigError extends ClientError {
  constructor(message: string) {
    super("config", message);
    this.name = "ConfigError";
  }
}

/**
 * A value given to the client, or the request it made, is out of range
 * (`n` of `nextIds(n)`, or a node's 400 answer). Not retried on another
 * node: the same request would be refused there too.
 */
export class InvalidArgumentError extends ClientError {
  /** The parameter. */
  readonly field: string | undefined;
  /** The value as given. */
  readonly value: string | undefined;
  /** The smallest valid value. */
  readonly min: string | undefined;
  /** The largest valid value. */
  readonly max: string | undefined;

  constructor(code: string, message: string, facts: { field?: string; value?: string; min?: string; max?: string } = {}) {
    super(code, message);
    this.name = "InvalidArgumentError";
    this.field = facts.field;
    this.value = facts.value;
    this.min = facts.min;
    this.max = facts.max;
  }
}

/**
 * One node failed one call: it could not be reached, did not answer in
 * time, or answered with an error. `code` is the node's own error code
 * when it sent one, else `unreachable` (no connection), `no_answer` (the
 * per-call timeout passed) or `bad_answer` (an answer that is not the
 * API's).
 */
export class NodeError extends ClientError {
  /** The node's base URL, as given. */
  readonly node: string;
  /** The HTTP status, when the node answered. */
  readonly status: number | undefined;
  /** When the node said to ask it again (`Retry-After`), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: string,
    message: string,
    node: string,
    facts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(code, `${node}: ${message}`, { cause: facts.cause });
    this.name = "NodeError";
    this.node = node;
    this.status = facts.status;
    this.retryAfterMs = facts.retryAfterMs;
  }
}

/**
 * A node refused to issue IDs now (HTTP 503): it holds no slot (fenced,
 * `no_claim`), its clock is behind the IDs it may have issued
 * (`clock_behind`), it cannot record its high-water mark
 * (`mark_unwritable`), ... `code` is the node's, `retryAfterMs` when to
 * ask it again.
 */
export class RefusedError extends NodeError {
  constructor(code: string, message: string, node: string, facts: { status?: number; retryAfterMs?: number } = {}) {
    super(code, message, node, facts);
    this.name = "RefusedError";
  }
}

/**
 * A node refused the client's token (HTTP 401): none was sent, or not one
 * the node accepts. Not retried on other nodes: a fleet shares its token
 * files, so they would refuse it too. The message is the node's, which
 * never quotes the token.
 */
export class UnauthenticatedError extends NodeError {
  constructor(message: string, node: string) {
    super("unauthenticated", message, node, { status: 401 });
    this.name = "UnauthenticatedError";
  }
}

/**
 * No node served IDs within the call's deadline (`code` is
 * `"unavailable"`). `attempts` says what each node answered, newest
 * last; `refusal` is the newest refusal among them, with the node's code
 * and `retryAfterMs`.
 */
export class UnavailableError extends ClientError {
  /** The call's deadline, in milliseconds. */
  readonly deadlineMs: number;
  /** The last failed attempts (at most 6), newest last. */
  readonly attempts: readonly NodeError[];

  constructor(deadlineMs: number, attempts: readonly NodeError[], why?: string) {
    const said = attempts.length === 0 ? (why ?? "no node was known") : attempts.map((a) => a.message).join("; ");
    super("unavailable", `no node could serve IDs within ${deadlineMs} ms: ${said}`);
    this.name = "UnavailableError";
    this.deadlineMs = deadlineMs;
    this.attempts = attempts;
  }

  /** The newest refusal among the attempts (a node that said no, with its code). */
  get refusal(): RefusedError | undefined {
    for (let i = this.attempts.length - 1; i >= 0; i--) {
      const attempt = this.attempts[i];
      if (attempt instanceof RefusedError) return attempt;
    }
    return undefined;
  }

  /** The soonest any refusing node said to ask again, in milliseconds. */
  get retryAfterMs(): number | undefined {
    let soonest: number | undefined;
    for (const attempt of this.attempts) {
      if (attempt.retryAfterMs !== undefined && (soonest === undefined || attempt.retryAfterMs < soonest)) {
        soonest = attempt.retryAfterMs;
      }
    }
    return soonest;
  }
}
