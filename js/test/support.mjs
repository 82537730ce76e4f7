// Fixtures of the package's tests: the real `snowmint serve` ($SNOWMINT_BIN)
// and a real etcd, each on free loopback ports in a directory of its own,
// stopped when the test ends.

import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The `snowmint` binary every test runs. */
export function binary() {
  const bin = process.env.SNOWMINT_BIN;
  if (!bin) {
    throw new Error(
      "SNOWMINT_BIN is not set: run js/run-tests (which builds target/debug/snowmint), " +
        "or build it with `cargo build -p snowmint-cli` and set SNOWMINT_BIN=$PWD/target/debug/snowmint",
    );
  }
  return bin;
}

/** A temporary directory, removed when `t` ends. */
export function tempDir(t, name) {
  const dir = mkdtempSync(join(tmpdir(), `snowmint-js-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A free loopback port (bound and released). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Waits until `check()` returns something other than undefined, or fails after `limitMs` saying what it waited for. */
export async function eventually(what, limitMs, check) {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`gave up waiting ${limitMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * `snowmint serve` with `args` (`--listen 127.0.0.1:0` added), HOME in a
 * directory of its own and no SNOWMINT_* variable inherited. Resolves once
 * it says where it listens; killed when `t` ends.
 */
export async function serve(t, args, { env = {} } = {}) {
  const home = tempDir(t, "node");
  const environment = { ...process.env, HOME: home, ...env };
  for (const name of Object.keys(environment)) {
    if (name.startsWith("SNOWMINT_") && !(name in env)) delete environment[name];
  }
  const stderrPath = join(home, "stderr.log");
  const child = spawn(binary(), ["serve", "--listen", "127.0.0.1:0", ...args], {
    env: environment,
    stdio: ["ignore", "pipe", openSync(stderrPath, "w")],
  });
  const stderr = () => {
    try {
      return readFileSync(stderrPath, "utf8");
    } catch {
      return "(its standard error is gone)";
    }
  };
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
  });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const limit = setTimeout(() => reject(new Error(`snowmint serve did not say where it listens within 60 s:\n${stderr()}`)), 60_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const found = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (found) {
        clearTimeout(limit);
        child.off("exit", exited);
        resolve(found[1]);
      }
    });
    const exited = (code, signal) => {
      clearTimeout(limit);
      reject(new Error(`snowmint serve exited (${code ?? signal}) before listening:\n${stderr()}`));
    };
    child.on("exit", exited);
  });
  child.stdout.resume();
  return { url, child, home, stderr };
}

/** A static node: `datacenter`, `machine`, its state under its own HOME. */
export function staticNode(t, datacenter, machine, extra = [], options = {}) {
  return serve(t, ["--datacenter", String(datacenter), "--machine", String(machine), ...extra], options);
}

/** `GET url` as JSON: [status, body]. */
export async function getJson(url, headers = {}) {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return [response.status, JSON.parse(text), response.headers];
}

/**
 * A real etcd (Debian's etcd-server) on free loopback ports, data in a
 * directory of its own, killed when `t` ends.
 */
export async function etcd(t) {
  const dir = tempDir(t, "etcd");
  const [client, peer, metrics] = [await freePort(), await freePort(), await freePort()];
  const clientUrl = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const logPath = join(dir, "etcd.log");
  const child = spawn(
    "etcd",
    [
      "--name", "snowmint-js",
      "--data-dir", join(dir, "data"),
      "--listen-client-urls", clientUrl,
      "--advertise-client-urls", clientUrl,
      "--listen-peer-urls", peerUrl,
      "--initial-advertise-peer-urls", peerUrl,
      "--initial-cluster", `snowmint-js=${peerUrl}`,
      "--listen-metrics-urls", `http://127.0.0.1:${metrics}`,
      "--heartbeat-interval", "50",
      "--election-timeout", "500",
    ],
    { stdio: ["ignore", openSync(logPath, "w"), openSync(logPath, "a")] },
  );
  let exited;
  const failed = new Promise((_, reject) => {
    child.on("error", (error) =>
      reject(new Error(`cannot run etcd (${error.code}): apt-get install etcd-server (or put an etcd 3.4+ binary on PATH)`)),
    );
    exited = (code) => reject(new Error(`etcd exited (${code}):\n${readFileSync(logPath, "utf8")}`));
    child.on("exit", exited);
  });
  failed.catch(() => {});
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
  });
  const healthy = eventually("etcd to be healthy", 60_000, async () => {
    try {
      const response = await fetch(`http://127.0.0.1:${metrics}/health`);
      const body = await response.json();
      return body.health === "true" ? true : undefined;
    } catch {
      return undefined;
    }
  });
  await Promise.race([healthy, failed]);
  child.off("exit", exited);
  return { url: `etcd://127.0.0.1:${client}`, child };
}

/** Writes a token file holding `tokens`, readable by its owner only. */
export function tokenFile(dir, tokens) {
  const path = join(dir, "tokens");
  writeFileSync(path, `# test tokens\n${tokens.join("\n")}\n`, { mode: 0o600 });
  return path;
}

/** The datacenter and machine of a Twitter-layout ID (41/5/5/12). */
export function nodeOf(id) {
  return { datacenter: Number((id >> 17n) & 31n), machine: Number((id >> 12n) & 31n) };
}

/** The Unix milliseconds of a Twitter-layout ID. */
export function timestampOf(id) {
  return Number(id >> 22n) + 1288834974657;
}
