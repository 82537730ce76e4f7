// A client for `snowmint serve`'s HTTP API: IDs from a list of nodes, with
// failover and an optional prefetch buffer of bounded staleness. The rules
// are the Rust client's (crates/snowmint-client), over HTTP JSON:
//
// - Failover. A node that cannot be reached, errors, refuses (503: fenced,
//   clock behind) or does not answer within the per-call timeout is skipped
//   with backoff (honouring `Retry-After`), and the call goes to the next
//   node. A node that refuses the token (401) ends the call at once: the
//   fleet's other nodes share its token file. The application sees an
//   error only when no node served within the call's deadline.
// - Prefetch (opt-in). IDs come from a local buffer, a current batch and a
//   spare, refilled in the background before it runs dry. No ID is handed
//   out more than `maxAgeMs` after the request that fetched it was sent
//   (so it was made by its node at most that long ago, whatever the two
//   clocks say): older ones are dropped, never handed out. A caller that
//   finds the buffer empty while a refill waits on a node asks another node
//   itself after a quarter of the per-call timeout.
// - IDs are unique across nodes (each holds its own slot) and strictly
//   increasing from one node, but not ordered across nodes.

import {
  ConfigError,
  InvalidArgumentError,
  NodeError,
  RefusedError,
  UnauthenticatedError,
  UnavailableError,
} from "./errors.js";
import { MAX_U64 } from "./id.js";
import { Node, Nodes } from "./nodes.js";

/** The largest batch one request asks a node for (the API's limit). */
export const MAX_BATCH = 4096;

/** The environment variable a token is read from when none is given. */
export const TOKEN_ENV = "SNOWMINT_TOKEN";
/** The environment variable nodes are read from when none are given (comma-separated). */
export const NODES_ENV = "SNOWMINT_NODES";

/** How many failed attempts an {@link UnavailableError} keeps. */
const ATTEMPTS_KEPT = 6;

/** The prefetch buffer's settings. */
export interface PrefetchOptions {
  /** IDs per refill, 1..=4096 (default 1024). */
  batch?: number;
  /**
   * The longest an ID may wait in the buffer, in milliseconds, from the
   * moment the request that fetched it was sent (default 100). Older IDs
   * are dropped, never handed out.
   */
  maxAgeMs?: number;
}

/** What a {@link Client} is built from. Every setting has a default but the nodes. */
export interface ClientOptions {
  /**
   * The nodes' base URLs, such as `http://10.0.0.1:8080` (what `snowmint
   * serve --listen` listens on; a path prefix is kept, for a node behind a
   * proxy). A string may list several, separated by commas. Default: the
   * `SNOWMINT_NODES` environment variable.
   */
  nodes?: string | readonly string[];
  /**
   * Finds the nodes: called when the client is made and every
   * `discoverEveryMs`; its URLs are added to `nodes`. The service has no
   * endpoint that lists a fleet's nodes, so this is the application's own
   * lookup (DNS of a Kubernetes headless service, a config store, ...). A
   * lookup that fails keeps the nodes known so far.
   */
  discover?: () => Promise<readonly string[]> | readonly string[];
  /** How often `discover` runs again, in milliseconds (default 5000). */
  discoverEveryMs?: number;
  /**
   * The bearer token sent with every request (`Authorization: Bearer`).
   * Default: the `SNOWMINT_TOKEN` environment variable, where there is an
   * environment (Node); `null` sends none. Never shown in errors.
   */
  token?: string | null;
  /**
   * A local buffer of prefetched IDs (off by default: every call is a
   * request). `true` takes the defaults.
   */
  prefetch?: boolean | PrefetchOptions;
  /** How long one request to one node may take before the node is skipped as slow, in milliseconds (default 500). */
  callTimeoutMs?: number;
  /** How long a call may take in all, failovers included, in milliseconds (default 5000). */
  deadlineMs?: number;
  /** The longest a failed node is skipped, in milliseconds (default 2000). */
  maxBackoffMs?: number;
  /** The fetch function (default `globalThis.fetch`), for instance one with an agent of its own. */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /**
   * The clock the staleness limit is judged by, in milliseconds (default: a
   * monotonic clock). Tests move it by hand.
   */
  now?: () => number;
}

/** The client's counters. */
export interface Stats {
  /** IDs handed out from the buffer. */
  bufferHits: number;
  /** Batches fetched into the buffer. */
  refills: number;
  /** Buffered IDs dropped as older than `maxAgeMs`. */
  staleDropped: number;
  /** Failed attempts (each moved the call to another node). */
  failovers: number;
  /** Requests that brought IDs. */
  roundTrips: number;
}

/** A batch in the buffer: IDs, the next one to hand out, and when it was asked for. */
interface Batch {
  ids: bigint[];
  position: number;
  sentAt: number;
}

interface Settings {
  batch: number;
  /** 0: no buffer. */
  maxAgeMs: number;
  callTimeoutMs: number;
  deadlineMs: number;
  maxBackoffMs: number;
  discoverEveryMs: number;
}

const monotonic = (): number => performance.now();

function whole(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} ${String(value)} is out of range (${min}..=${max})`);
  }
  return value;
}

const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Checks a token's form (the server's: 16 to 4096 characters of A-Z a-z 0-9 - . _ ~ + /, then any =), quoting nothing of it. */
function checkToken(token: string, from: string): string {
  if (token.length < 16 || token.length > 4096) {
    throw new ConfigError(`the token (${from}) has ${token.length} characters; a token has 16 to 4096`);
  }
  if (!TOKEN.test(token)) {
    throw new ConfigError(`the token (${from}) holds a character that no token has (A-Z a-z 0-9 - . _ ~ + /, then any =)`);
  }
  return token;
}

function environment(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = process?.env?.[name]?.trim();
  return value === "" ? undefined : value;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Whether `promise` settles within `ms` (the timer is cleared when it does). */
function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, ms));
    const done = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}

/**
 * A client of a snowmint fleet's HTTP API.
 *
 * @example
 * const client = new Client({ nodes: ["http://10.0.0.1:8080", "http://10.0.0.2:8080"] });
 * const id = await client.nextId(); // a bigint
 */
export class Client {
  readonly #settings: Settings;
  readonly #nodes: Nodes;
  readonly #given: readonly string[];
  readonly #token: string | undefined;
  readonly #fetch: (url: string, init: RequestInit) => Promise<Response>;
  readonly #now: () => number;
  readonly #stats: Stats = { bufferHits: 0, refills: 0, staleDropped: 0, failovers: 0, roundTrips: 0 };
  #current: Batch | undefined;
  #spare: Batch | undefined;
  /** The refill under way; settles (never rejects) when it ends. */
  #refilling: Promise<void> | undefined;
  #discover: (() => Promise<readonly string[]> | readonly string[]) | undefined;
  #discovery: Promise<void> | undefined;
  #discoveryError: string | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(options: ClientOptions = {}) {
    const prefetch = options.prefetch === true ? {} : options.prefetch || undefined;
    this.#settings = {
      batch: whole("prefetch.batch", prefetch?.batch ?? 1024, 1, MAX_BATCH),
      maxAgeMs: prefetch === undefined ? 0 : whole("prefetch.maxAgeMs", prefetch.maxAgeMs ?? 100, 1, 3_600_000),
      callTimeoutMs: whole("callTimeoutMs", options.callTimeoutMs ?? 500, 1, 3_600_000),
      deadlineMs: whole("deadlineMs", options.deadlineMs ?? 5000, 1, 3_600_000),
      maxBackoffMs: whole("maxBackoffMs", options.maxBackoffMs ?? 2000, 1, 3_600_000),
      discoverEveryMs: whole("discoverEveryMs", options.discoverEveryMs ?? 5000, 10, 86_400_000),
    };
    let given: readonly string[];
    if (options.nodes !== undefined) {
      given = typeof options.nodes === "string" ? splitList(options.nodes) : [...options.nodes];
    } else {
      given = splitList(environment(NODES_ENV) ?? "");
    }
    this.#given = given;
    this.#nodes = new Nodes(given, this.#settings.callTimeoutMs);
    if (this.#nodes.size === 0 && options.discover === undefined) {
      throw new ConfigError(`no nodes: give nodes (or set ${NODES_ENV}), or discover`);
    }
    if (options.token === undefined) {
      const token = environment(TOKEN_ENV);
      this.#token = token === undefined ? undefined : checkToken(token, TOKEN_ENV);
    } else if (options.token === null) {
      this.#token = undefined;
    } else {
      this.#token = checkToken(options.token, "given");
    }
    const global = globalThis as { fetch?: (url: string, init: RequestInit) => Promise<Response> };
    if (options.fetch === undefined && typeof global.fetch !== "function") {
      throw new ConfigError("no fetch function: this runtime has no global fetch (Node 18 or later has); give one");
    }
    // Called as a plain function: a browser's fetch refuses any other
    // `this` than the window ("Illegal invocation").
    const fetch = options.fetch ?? ((url: string, init: RequestInit) => global.fetch!(url, init));
    this.#fetch = fetch;
    this.#now = options.now ?? monotonic;
    if (options.discover !== undefined) {
      this.#discover = options.discover;
      this.#discovery = this.#runDiscovery();
      const timer = setInterval(() => void this.#runDiscovery(), this.#settings.discoverEveryMs);
      // A lookup in the background does not keep a Node process alive.
      (timer as { unref?: () => void }).unref?.();
      this.#timer = timer;
    }
  }

  /** One new ID. */
  async nextId(): Promise<bigint> {
    const id = this.#takeOne();
    if (id !== undefined) return id;
    return (await this.nextIds(1))[0]!;
  }

  /**
   * `n` new IDs (any `n` from 1; more than 4096 take several requests).
   * IDs from one node come in increasing order; a result that spans a
   * failover or two batches may not be sorted.
   *
   * @throws {InvalidArgumentError} for an `n` that is not a whole number from 1.
   * @throws {UnavailableError} when no node served within the deadline
   *   (IDs taken before are dropped, not handed out later).
   * @throws {UnauthenticatedError} when a node refused the token.
   */
  async nextIds(n: number): Promise<bigint[]> {
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) {
      throw new InvalidArgumentError("out_of_range", `n ${String(n)} is out of range (at least 1)`, {
        field: "n",
        value: String(n),
        min: "1",
      });
    }
    this.#open();
    const deadline = monotonic() + this.#settings.deadlineMs;
    const out: bigint[] = [];
    if (this.#settings.maxAgeMs === 0) {
      while (out.length < n) {
        const batch = await this.#fetchIds(Math.min(n - out.length, MAX_BATCH), deadline);
        for (const id of batch.ids) out.push(id);
      }
      return out;
    }
    // Whether this call already fetched beside a refill that was slow.
    let hedged = false;
    for (;;) {
      this.#take(out, n - out.length);
      if (out.length === n) {
        this.#refillSoon();
        return out;
      }
      let own = true;
      if (this.#refilling !== undefined) {
        const left = deadline - monotonic();
        // The refill under way may sit on a node that stopped answering:
        // after a quarter of the per-call timeout, this call asks the next
        // node itself (once).
        const patience = hedged ? left : Math.min(left, this.#settings.callTimeoutMs / 4);
        const ended = await within(this.#refilling, patience);
        if (ended) continue;
        if (hedged || patience === left) {
          throw new UnavailableError(this.#settings.deadlineMs, [], "the buffer's refill did not finish");
        }
        hedged = true;
        own = false;
      }
      const want = Math.min(Math.max(n - out.length, this.#settings.batch), MAX_BATCH);
      // The batch's first IDs go to this call, which they were made
      // during; the rest to the buffer, before anyone waiting on this
      // refill looks again.
      const filling = this.#fetchIds(want, deadline).then((batch) => {
        this.#stats.refills++;
        const need = Math.min(n - out.length, batch.ids.length);
        for (let i = 0; i < need; i++) out.push(batch.ids[i]!);
        batch.position = need;
        this.#put(batch);
      });
      if (own) {
        const refill = this.#settle(filling).then(() => {
          if (this.#refilling === refill) this.#refilling = undefined;
        });
        this.#refilling = refill;
      }
      await filling;
    }
  }

  /** The counters so far (a copy). */
  stats(): Stats {
    return { ...this.#stats };
  }

  /** The nodes' base URLs known now (given and discovered). */
  get nodes(): string[] {
    return this.#nodes.urls;
  }

  /** IDs in the buffer now, fresh or not. */
  get buffered(): number {
    const left = (batch: Batch | undefined): number => (batch === undefined ? 0 : batch.ids.length - batch.position);
    return left(this.#current) + left(this.#spare);
  }

  /** Stops discovery and drops the buffer; later calls are refused. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#current = this.#spare = undefined;
  }

  /** Shows the settings and nodes, never the token. */
  toString(): string {
    return `Client(nodes: ${this.#nodes.urls.join(", ") || "none yet"}, token: ${this.#token === undefined ? "none" : "set"})`;
  }

  #open(): void {
    if (this.#closed) throw new ConfigError("the client is closed");
  }

  /** Waits for `fetching` to end, whatever its outcome. */
  async #settle(fetching: Promise<unknown>): Promise<void> {
    try {
      await fetching;
    } catch {
      // The caller that started it reports the failure.
    }
  }

  /** One fresh buffered ID, if any; starts a refill when the buffer runs low. */
  #takeOne(): bigint | undefined {
    if (this.#settings.maxAgeMs === 0 || this.#closed) return undefined;
    const out: bigint[] = [];
    this.#take(out, 1);
    if (out.length === 0) return undefined;
    this.#refillSoon();
    return out[0];
  }

  /** Moves up to `want` fresh IDs into `out`, dropping stale batches on the way. */
  #take(out: bigint[], want: number): void {
    const oldest = this.#now() - this.#settings.maxAgeMs;
    let taken = 0;
    for (;;) {
      const batch = this.#current;
      if (batch !== undefined) {
        const left = batch.ids.length - batch.position;
        if (batch.sentAt < oldest) {
          this.#stats.staleDropped += left;
          batch.position = batch.ids.length;
        } else {
          const n = Math.min(left, want - taken);
          for (let i = 0; i < n; i++) out.push(batch.ids[batch.position + i]!);
          batch.position += n;
          taken += n;
          this.#stats.bufferHits += n;
          if (taken === want) return;
        }
      }
      if (this.#spare === undefined) {
        this.#current = undefined;
        return;
      }
      this.#current = this.#spare;
      this.#spare = undefined;
    }
  }

  /**
   * Puts a fetched batch where it belongs. With both places taken (a hedged
   * fetch and the refill it hedged both came back), the batch is dropped:
   * its IDs are never handed out.
   */
  #put(batch: Batch): void {
    if (batch.position >= batch.ids.length || this.#closed) return;
    const current = this.#current;
    if (current === undefined || current.position >= current.ids.length) this.#current = batch;
    else if (this.#spare === undefined) this.#spare = batch;
  }

  /** Starts a background refill when the buffer is at half a batch or less, has no spare and none is under way. */
  #refillSoon(): void {
    if (this.#refilling !== undefined || this.#spare !== undefined || this.#closed) return;
    if (this.buffered > this.#settings.batch / 2) return;
    const refill: Promise<void> = this.#fetchIds(this.#settings.batch, monotonic() + this.#settings.deadlineMs)
      .then(
        (batch) => {
          this.#stats.refills++;
          this.#put(batch);
        },
        // The next call that finds the buffer empty fetches itself, and
        // says what went wrong if that fails too.
        () => undefined,
      )
      .then(() => {
        if (this.#refilling === refill) this.#refilling = undefined;
      });
    this.#refilling = refill;
  }

  async #runDiscovery(): Promise<void> {
    const discover = this.#discover;
    if (discover === undefined || this.#closed) return;
    try {
      const found = await discover();
      if (!Array.isArray(found)) throw new TypeError("discover did not return an array of URLs");
      this.#nodes.replace([...this.#given, ...found]);
      this.#discoveryError = undefined;
    } catch (error) {
      this.#discoveryError = error instanceof Error ? error.message : String(error);
    }
  }

  /** `count` IDs (1..=4096) from the first node that serves them. */
  async #fetchIds(count: number, deadline: number): Promise<Batch> {
    const attempts: NodeError[] = [];
    for (;;) {
      const now = monotonic();
      if (now >= deadline) {
        const why = this.#discoveryError === undefined ? undefined : `no node was known (discovery: ${this.#discoveryError})`;
        throw new UnavailableError(this.#settings.deadlineMs, attempts, why);
      }
      const pick = this.#nodes.pick(now);
      if ("waitUntil" in pick) {
        await sleep(Math.min(pick.waitUntil, deadline) - now);
        continue;
      }
      if ("empty" in pick) {
        // Discovery may find nodes meanwhile.
        const nap = sleep(Math.min(100, deadline - now));
        await (this.#discovery === undefined ? nap : Promise.race([this.#discovery, nap]));
        this.#discovery = undefined;
        continue;
      }
      const node = pick.ask;
      const timeoutMs = Math.max(1, Math.min(this.#settings.callTimeoutMs, deadline - now));
      const sentAt = this.#now();
      node.sent(now);
      try {
        const ids = await this.#request(node, count, timeoutMs);
        node.succeeded();
        this.#stats.roundTrips++;
        return { ids, position: 0, sentAt };
      } catch (error) {
        if (error instanceof UnauthenticatedError) {
          // The node answered: it is not failing, the client's token is.
          node.succeeded();
          throw error;
        }
        if (!(error instanceof NodeError)) throw error;
        node.failed(monotonic(), error.retryAfterMs, this.#settings.maxBackoffMs);
        this.#stats.failovers++;
        if (attempts.length === ATTEMPTS_KEPT) attempts.shift();
        attempts.push(error);
      } finally {
        node.returned();
      }
    }
  }

  /** One request to one node: its IDs, or why not. */
  async #request(node: Node, count: number, timeoutMs: number): Promise<bigint[]> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let status: number;
    let retryAfter: string | null;
    let text: string;
    try {
      const fetch = this.#fetch;
      const response = await fetch(`${node.url}/v1/ids?count=${count}`, {
        method: "GET",
        headers,
        signal: controller.signal,
      });
      status = response.status;
      retryAfter = response.headers.get("retry-after");
      text = await readBounded(response, node.url);
    } catch (error) {
      if (error instanceof NodeError) throw error;
      if (controller.signal.aborted) {
        throw new NodeError("no_answer", `no answer within ${timeoutMs} ms`, node.url);
      }
      throw new NodeError("unreachable", `cannot be reached (${why(error)})`, node.url, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    if (status === 200) return readIds(text, count, node.url);
    const body = errorBody(text);
    const retryAfterMs = retryAfterMsOf(retryAfter, body?.retry_after_s);
    const code = typeof body?.code === "string" ? body.code : `http_${status}`;
    const message = typeof body?.message === "string" ? body.message : `answered HTTP ${status}`;
    if (status === 401) throw new UnauthenticatedError(message, node.url);
    if (status === 400) {
      const fact = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
      throw new InvalidArgumentError(code, `${node.url}: ${message}`, {
        field: fact(body?.field),
        value: fact(body?.value),
        min: fact(body?.min),
        max: fact(body?.max),
      });
    }
    if (status === 503) throw new RefusedError(code, `${code}: ${message}`, node.url, { status, retryAfterMs });
    throw new NodeError(code, `HTTP ${status} ${code}: ${message}`, node.url, { status, retryAfterMs });
  }
}

function splitList(text: string): string[] {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/** What a failed fetch says, from its cause when it has one (Node's `fetch failed` hides it there). */
function why(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

interface ErrorDetails {
  code?: unknown;
  message?: unknown;
  field?: unknown;
  value?: unknown;
  min?: unknown;
  max?: unknown;
  retry_after_s?: unknown;
}

/** The API's error body, `{"error":{...}}`, if the text is one. */
function errorBody(text: string): ErrorDetails | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    return typeof parsed?.error === "object" && parsed.error !== null ? (parsed.error as ErrorDetails) : undefined;
  } catch {
    return undefined;
  }
}

/** `Retry-After` (whole seconds), else the body's `retry_after_s`, in milliseconds. */
function retryAfterMsOf(header: string | null, fromBody: unknown): number | undefined {
  const seconds = header !== null && /^[0-9]{1,9}$/.test(header.trim()) ? Number(header.trim()) : fromBody;
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** The largest answer read from a node (a batch of 4096 IDs is about 90 KB). */
const MAX_ANSWER_BYTES = 1 << 20;

/** The body as text, refusing one longer than MAX_ANSWER_BYTES without reading the rest. */
async function readBounded(response: Response, node: string): Promise<string> {
  const tooLong = (): NodeError =>
    new NodeError("bad_answer", `answered with a body of more than ${MAX_ANSWER_BYTES} bytes`, node, { status: response.status });
  const declared = Number(response.headers.get("content-length") ?? 0);
  const body = response.body;
  if (declared > MAX_ANSWER_BYTES) {
    await body?.cancel().catch(() => undefined);
    throw tooLong();
  }
  if (body === null || typeof body.getReader !== "function") return response.text();
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    total += value.byteLength;
    if (total > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLong();
    }
    text += decoder.decode(value, { stream: true });
  }
}

const DECIMAL_ID = /^[0-9]{1,20}$/;

/**
 * The IDs of a `/v1/ids` answer: `count` IDs, strictly increasing, as
 * decimal strings, or as JSON numbers where they are safe integers (a node
 * whose layout's IDs all lie below 2^53 may send numbers; any larger
 * number has been rounded by JSON.parse, and is refused).
 */
function readIds(text: string, count: number, node: string): bigint[] {
  const bad = (what: string): NodeError => new NodeError("bad_answer", `answered 200 with ${what}`, node);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw bad("a body that is not JSON");
  }
  const ids = (body as { ids?: unknown } | null)?.ids;
  if (!Array.isArray(ids)) throw bad('no "ids" array');
  if (ids.length !== count) throw bad(`${ids.length} IDs for ${count} asked`);
  const out = new Array<bigint>(ids.length);
  let previous = -1n;
  for (let i = 0; i < ids.length; i++) {
    const given = ids[i];
    let id: bigint;
    if (typeof given === "string" && DECIMAL_ID.test(given)) id = BigInt(given);
    else if (typeof given === "number" && Number.isSafeInteger(given) && given >= 0) id = BigInt(given);
    else throw bad(`ID ${i} that is neither a decimal string nor a safe integer`);
    if (id > MAX_U64 || id <= previous) throw bad(`ID ${i} out of order or out of range`);
    out[i] = previous = id;
  }
  return out;
}
