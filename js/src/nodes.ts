// The nodes a client may ask, and which of them to ask next, as the Rust
// client (crates/snowmint-client/src/nodes.rs) does:
//
// - Nodes are taken in turn (round robin), so that load spreads and a
//   failed node's share moves to the others.
// - A node that fails (error, refusal, no answer within the per-call
//   timeout) is skipped until its backoff has passed: 50 ms after the
//   first failure, doubling up to `maxBackoffMs`; a refusal that says when
//   to come back (`Retry-After`) is believed, within the same cap. One
//   success clears it.
// - A node with a call waiting for longer than a quarter of the per-call
//   timeout is asked only when no other node may be: it may have stopped
//   answering, and its timeout has not said so yet.
// - With discovery, the set is replaced when the list changes; a node that
//   stays keeps its backoff.

import { ConfigError } from "./errors.js";

/** The first backoff of a failed node. */
const FIRST_BACKOFF_MS = 50;

/** One node: its address and its health as this client saw it. */
export class Node {
  /** The base URL as given (no trailing slash). */
  readonly url: string;
  /** Failures since the last success. */
  private failures = 0;
  /** Not to be asked before this (the client's clock). */
  skipUntil = 0;
  /** Calls sent and not yet answered. */
  private inFlight = 0;
  /** When the oldest of those was sent (undefined when none is left). */
  private waitingSince: number | undefined;

  constructor(url: string) {
    this.url = url;
  }

  sent(now: number): void {
    this.inFlight++;
    this.waitingSince ??= now;
  }

  returned(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.inFlight === 0) this.waitingSince = undefined;
  }

  seemsStuck(now: number, patienceMs: number): boolean {
    return this.waitingSince !== undefined && now - this.waitingSince > patienceMs;
  }

  succeeded(): void {
    this.failures = 0;
    this.skipUntil = 0;
  }

  failed(now: number, retryAfterMs: number | undefined, maxBackoffMs: number): void {
    const doubled = FIRST_BACKOFF_MS * 2 ** Math.min(this.failures, 16);
    this.failures++;
    this.skipUntil = now + Math.min(retryAfterMs ?? doubled, maxBackoffMs);
  }
}

/** What {@link Nodes.pick} found. */
export type Pick = { ask: Node } | { waitUntil: number } | { empty: true };

/**
 * Reads a node's base URL: `http://` or `https://`, a host, an optional
 * port and path prefix (for a node behind a proxy), nothing else.
 */
export function nodeUrl(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new ConfigError(`node ${JSON.stringify(given)} is not a URL such as http://10.0.0.1:8080`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`node ${JSON.stringify(given)} is not an http:// or https:// URL`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ConfigError(`node ${url.host}: credentials in the URL are not sent; give the client a token`);
  }
  if (url.search !== "" || url.hash !== "") {
    throw new ConfigError(`node ${JSON.stringify(given)} has a query or a fragment; give the node's base URL`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The set of nodes, in the order they are asked. */
export class Nodes {
  private list: Node[] = [];
  private next = 0;

  constructor(
    urls: readonly string[],
    private readonly callTimeoutMs: number,
  ) {
    this.replace(urls);
  }

  get urls(): string[] {
    return this.list.map((node) => node.url);
  }

  get size(): number {
    return this.list.length;
  }

  /** Replaces the set with `urls`, keeping the nodes that stay. */
  replace(urls: readonly string[]): void {
    const old = new Map(this.list.map((node) => [node.url, node]));
    const seen = new Set<string>();
    const list: Node[] = [];
    for (const given of urls) {
      const url = nodeUrl(given);
      if (seen.has(url)) continue;
      seen.add(url);
      list.push(old.get(url) ?? new Node(url));
    }
    this.list = list;
  }

  /**
   * The next node in turn that is not backing off, preferring one that
   * does not seem stuck.
   */
  pick(now: number): Pick {
    const list = this.list;
    if (list.length === 0) return { empty: true };
    const patience = this.callTimeoutMs / 4;
    const start = this.next++;
    let earliest: number | undefined;
    let stuck: Node | undefined;
    for (let offset = 0; offset < list.length; offset++) {
      const node = list[(start + offset) % list.length]!;
      if (node.skipUntil > now) {
        earliest = earliest === undefined ? node.skipUntil : Math.min(earliest, node.skipUntil);
      } else if (node.seemsStuck(now, patience)) {
        stuck ??= node;
      } else {
        return { ask: node };
      }
    }
    if (stuck !== undefined) return { ask: stuck };
    return { waitUntil: earliest ?? now };
  }
}
