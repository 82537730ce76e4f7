// The inspector: every `texts` entry of the repository's vectors file,
// then the whole answer (every token, span, reading, field, rank and why)
// against the real binary's `snowmint inspect --format json` for the same
// texts, for texts of every kind of link and markup, and for seeded random
// texts; and hostile input (a megabyte of digits, of `<`, of dashes) read
// within the core's bounds.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { MAX_TEXT, MAX_TOKENS, SnowmintError, inspect, tokenJSON } from "../dist/esm/index.js";
import { binary } from "./support.mjs";

const VECTORS = JSON.parse(readFileSync(new URL("../../vectors/vectors.json", import.meta.url), "utf8"));
const NOW = "2025-06-15T00:00:00Z";

/** The binary's tokens for the lines of `lines`, each with its line number. */
function theirs(lines, now = NOW) {
  const out = spawnSync(binary(), ["inspect", "--format", "json", "--now", now, "-"], {
    input: lines.join("\n") + "\n",
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  assert.equal(out.status, 0, out.stderr);
  return out.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

/** The package's tokens for the same lines, in the core's JSON. */
function ours(lines, now = NOW) {
  return lines.flatMap((line, i) =>
    inspect(line, { now }).map((token) => JSON.parse(JSON.stringify({ ...tokenJSON(token), line: i + 1 }))),
  );
}

function sameAsBinary(lines) {
  const expected = theirs(lines);
  const got = ours(lines);
  assert.equal(got.length, expected.length, "token count");
  for (const [i, token] of got.entries()) assert.deepEqual(token, expected[i], `token ${i}: ${token.input}`);
  return got.length;
}

test("every text of the vectors file gives exactly its tokens, best reading first", () => {
  assert.ok(VECTORS.texts.length > 0);
  for (const { text, tokens } of VECTORS.texts) {
    const found = inspect(text, { now: NOW });
    assert.deepEqual(
      found.map((t) => ({ input: t.input, family: t.candidates[0]?.family, time: t.candidates[0]?.time })),
      tokens.map((t) => ({ input: t.input, family: t.family, time: t.time })),
      text,
    );
    // Spans are indices of the string.
    for (const token of found) {
      assert.ok(text.slice(token.start, token.end).includes(token.input) || token.context === "Discord timestamp markup", text);
    }
  }
});

test("the whole answer is the binary's: vectors' texts, links, markup and words of every family", () => {
  const texts = [
    ...VECTORS.texts.map((t) => t.text).filter((t) => !t.includes("\n")),
    "see https://x.com/jack/status/20 and https://twitter.com/i/web/status/1050118621198921728?s=20.",
    "https://discord.com/channels/@me/175928847299117063/175928847299117064",
    "https://cdn.discordapp.com/emojis/175928847299117063.png?size=4 https://media.discordapp.net/attachments/175928847299117063/175928847299117064/x.png",
    "https://bsky.app/profile/did:plc:abc/post/3jzfcijpj2z2a at://did:plc:abc/app.bsky.feed.post/3jzfcijpj2z2a",
    "https://www.instagram.com/p/CEXnK4Mn8Cv/ https://instagram.com/u/reel/Bx-_9/",
    "https://mastodon.social/@Gargron/112688531702396572 https://m.example.org/web/statuses/112688531702396572 https://a.b/api/v1/statuses/1",
    "https://misskey.io/notes/856z2dus5l https://misskey.io/notes/7q1t0l3sumwvxrkd",
    "0x1724551110457221 0XFFFFFFFFFFFFFFFF 0x10000000000000000 deadbeefdeadbeef",
    '  "3xHcn8VBGf2"  ',
    "(12345)",
    "id_01ARZ3NDEKTSV4RRFFQ69G5FAV-x 017f22e279b07cc398c4dc0c0c07398f 00000000-0000-0000-0000-000000000000",
    "<t:1700000000:R> <t:-5> <t:1:x> <t:99999999999999999> <a:wave:175928847299117063> </ban user:175928847299117063> <@&1> <:x:> <#12>",
    "é 1724551110457221119 ü 01226N0640J7Q 3jzfcijpj2z2a ＃ 😀 856z2dus5l",
    "99999999999999999999 18446744073709551615 18446744073709551616 29700859246 4000000000000000000",
    "0ujtsYcgvSTl8PAuAdqWYSMnLOv 507f1f77bcf86cd799439011 507F1F77BCF86CD799439011",
    "abcdefghij abcdefghijk1 ZZZZZZZZZZZZZ",
    "ZZZZZZZZZZZZZ",
    "abcdefgh",
    "<t:9223372036854775807:F>",
    "http://discord.com:8080/channels/1/175928847299117063/x",
    "www.x.com/a/status/1050118621198921728",
    "<@175928847299117063",
    "a-b_c-1724551110457221119-d",
    "f81d4fae-7dec-11d0-a765-00a0c91e6bf6 1ec9414c-232a-6b00-b3c8-9f6bdeced846 2b0f1a4c-0000-2000-8000-000000000000",
  ];
  assert.ok(sameAsBinary(texts) > 60);
});

test("seeded random texts read the same as the binary reads them", () => {
  // Pieces of every kind, glued with separators that matter to the scanner.
  const pieces = [
    "1724551110457221119", "175928847299117063", "18446744073709551615", "29700859246", "123456789012",
    "01ARZ3NDEKTSV4RRFFQ69G5FAV", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "507f1f77bcf86cd799439011",
    "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "3jzfcijpj2z2a", "01226N0640J7Q", "856z2dus5l", "7q1t0l3sumwvxrkd",
    "0x1fffffffffffff", "3xHcn8VBGf2", "deadbeefdeadbeef", "https://x.com/a/status/", "https://discord.com/channels/",
    "https://bsky.app/profile/a/post/", "https://misskey.io/notes/", "at://a/b/", "<@", "<t:", ":R>", ">", "<",
    "é", "😀", "-", "_", "/", ".", ":", "(", ")", '"', " ", " ", " ", "a", "Z", "9",
  ];
  let state = 12345;
  const random = (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const lines = Array.from({ length: 400 }, () => Array.from({ length: 1 + random(12) }, () => pieces[random(pieces.length)]).join(""));
  assert.ok(sameAsBinary(lines) > 200);
});

test("the time judged against now: future and before-the-family readings say so, as the binary does", () => {
  const lines = ["1724551110457221119 01ARZ3NDEKTSV4RRFFQ69G5FAV 7ZZZZZZZZZZZZZZZZZZZZZZZZZ https://x.com/a/status/4000000000000000000"];
  for (const now of ["2012-01-01T00:00:00Z", "2030-01-01T00:00:00Z", "1700000000000"]) {
    assert.deepEqual(ours(lines, now), theirs(lines, now), now);
  }
  const [token] = inspect("https://x.com/a/status/4000000000000000000", { now: NOW });
  assert.equal(token.candidates.length, 1);
  assert.equal(token.candidates[0].plausibility, "pinned");
  assert.match(token.candidates[0].why, /^pinned: found as the post in an X\/Twitter link, so twitter; though .* is in the future/);
  // A layout of one's own is read as `custom`, as the binary's --layout reads it.
  const custom = spawnSync(binary(), ["inspect", "--format", "json", "--now", NOW, "--layout", "42/0/10/11@1600000000000", "1724551110457221119"], { encoding: "utf8" });
  assert.deepEqual(
    inspect("1724551110457221119", { now: NOW, layouts: ["42/0/10/11@1600000000000"] }).map((t) => JSON.parse(JSON.stringify(tokenJSON(t)))),
    custom.stdout.trim().split("\n").map((l) => JSON.parse(l)),
  );
  // top keeps the best; layouts narrow the families.
  assert.equal(inspect("1724551110457221119", { now: NOW, top: 1 })[0].candidates.length, 1);
  assert.deepEqual(
    inspect("1724551110457221119", { now: NOW, layouts: ["discord", "tsid"] })[0].candidates.map((r) => r.family),
    ["discord", "tsid"],
  );
});

test("hostile input is read within bounds: a megabyte of digits, of markup openers, of dashes", () => {
  const half = "7".repeat(MAX_TEXT / 2 - 20);
  const tokens = inspect(`${half} 1724551110457221119 ${half}`, { now: NOW });
  assert.deepEqual(
    tokens.map((t) => t.input),
    ["1724551110457221119"],
  );
  assert.equal(tokens[0].start, half.length + 1);
  assert.deepEqual(inspect("<".repeat(MAX_TEXT), { now: NOW }), []);
  assert.deepEqual(inspect("<@".repeat(MAX_TEXT / 2), { now: NOW }), []);
  assert.deepEqual(inspect("a-".repeat(MAX_TEXT / 2), { now: NOW }), []);
  assert.deepEqual(inspect("https://x.com/".repeat(MAX_TEXT / 14), { now: NOW }), []);
  assert.throws(
    () => inspect("1".repeat(MAX_TEXT + 1)),
    (e) => e instanceof SnowmintError && e.kind === "OutOfRange" && e.message === `text length ${MAX_TEXT + 1} is out of range (0..=${MAX_TEXT})`,
  );
  assert.throws(
    () => inspect("123456789012 ".repeat(MAX_TOKENS + 1)),
    (e) => e instanceof SnowmintError && e.message === `token count ${MAX_TOKENS + 1}+ is out of range (0..=${MAX_TOKENS})`,
  );
  assert.equal(inspect("123456789012 ".repeat(MAX_TOKENS)).length, MAX_TOKENS);
});
