// The JSON helpers: ID fields read and written exactly at any depth, every
// other value exactly as JSON.parse and JSON.stringify make it, every bad
// value refused with its key, value and range. The cases run twice: in
// this engine's mode and, in a child process, with JSON.parse's source
// text access switched the other way (Node 20 has it behind a V8 flag,
// later versions on by default), so both ways of reading are checked on
// any Node.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { SnowmintError, hasSourceAccess, idReplacer, idReviver, parseId, parseJSON, stringifyJSON } from "../dist/esm/index.js";

const MODE = hasSourceAccess() ? "with source text access" : "without source text access";

/** An error a test expects: a SnowmintError of `kind` about `subject`, whose message matches. */
function refused(kind, subject, message) {
  return (error) => {
    assert.ok(error instanceof SnowmintError, `${error}`);
    assert.equal(error.kind, kind, error.message);
    assert.equal(error.subject, subject, error.message);
    assert.match(error.message, message);
    return true;
  };
}

const P53 = 2n ** 53n;
const P63 = 2n ** 63n;
const MAX = 2n ** 64n - 1n;
const EDGES = [0n, 1n, P53 - 1n, P53, P53 + 1n, P63 - 1n, P63, P63 + 1n, MAX - 1n, MAX, 1724551110457221119n];

test(`nested payloads: named ID fields exact at any depth, the rest as JSON.parse makes it (${MODE})`, () => {
  const text = `{
    "data": {"messages": [
      {"id": 1724551110457221119, "author": {"id": "80351110224678912", "name": "x"}, "reply_ids": [9007199254740993, "18446744073709551615", 7, null]},
      {"id": "175928847299117063", "author": null, "reply_ids": [], "score": 12345678901234567890, "ratio": 0.1}
    ]},
    "id": null,
    "big": [12345678901234567891, -98765432109876543210, 1e400, 123456789012345678.5],
    "count": 3
  }`;
  const fields = ["id", "reply_ids"];
  const plain = JSON.parse(text);
  for (const [as, id] of [["bigint", (v) => v], ["string", (v) => v.toString()]]) {
    for (const parsed of [parseJSON(text, { fields, as }), ...(hasSourceAccess() ? [JSON.parse(text, idReviver({ fields, as }))] : [])]) {
      const [first, second] = parsed.data.messages;
      assert.equal(first.id, id(1724551110457221119n));
      assert.equal(first.author.id, id(80351110224678912n));
      assert.deepEqual(first.reply_ids, [id(9007199254740993n), id(MAX), id(7n), null]);
      assert.equal(second.id, id(175928847299117063n));
      assert.deepEqual(second.reply_ids, []);
      assert.equal(parsed.id, null);
      // Everything else is exactly what JSON.parse makes of it.
      assert.equal(second.score, plain.data.messages[1].score);
      assert.deepEqual(parsed.big, plain.big);
      assert.equal(second.ratio, 0.1);
      assert.equal(first.author.name, "x");
      assert.equal(parsed.count, 3);
    }
  }
  if (hasSourceAccess()) return;
  // Without source text, a reviver sees the rounded number: refused, never
  // handed on.
  assert.throws(() => JSON.parse(text, idReviver({ fields })), refused("OutOfRange", "id", /lost its exact value in JSON.parse.*parseJSON\(\)/));
  // Safe integers and strings need no source text.
  assert.deepEqual(JSON.parse('{"id": 9007199254740991, "ids": ["18446744073709551615"]}', idReviver()), { id: 9007199254740991n, ids: [MAX] });
});

test(`the values at and around 2^53, 2^63 and 2^64, as numbers and as strings (${MODE})`, () => {
  for (const edge of EDGES) {
    for (const written of [edge.toString(), `"${edge}"`]) {
      const text = `{"a": {"id": ${written}}, "ids": [${written}, ${written}]}`;
      assert.deepEqual(parseJSON(text), { a: { id: edge }, ids: [edge, edge] }, text);
      assert.deepEqual(parseJSON(text, { as: "string" }), { a: { id: edge.toString() }, ids: [edge.toString(), edge.toString()] }, text);
      if (hasSourceAccess() || edge < P53 || written.startsWith('"')) {
        assert.deepEqual(JSON.parse(text, idReviver()), { a: { id: edge }, ids: [edge, edge] }, text);
      }
    }
    // Written back as strings, and read again the same.
    const out = stringifyJSON({ a: { id: edge }, ids: [edge, edge.toString()] });
    assert.equal(out, `{"a":{"id":"${edge}"},"ids":["${edge}","${edge}"]}`);
    assert.deepEqual(parseJSON(out), { a: { id: edge }, ids: [edge, edge] });
  }
});

test(`every bad ID value is refused with its key, value and range (${MODE})`, () => {
  const cases = [
    ['{"id": 18446744073709551616}', "OutOfRange", "id", /id "18446744073709551616" is out of range \(0..=18446744073709551615\)/],
    ['{"id": "18446744073709551616"}', "OutOfRange", "id", /out of range \(0..=18446744073709551615\)/],
    ['{"id": "99999999999999999999999999999999999999999"}', "OutOfRange", "id", /out of range/],
    ['{"id": -1}', "OutOfRange", "id", /id "-1" is negative/],
    ['{"id": -12345678901234567890}', "OutOfRange", "id", /"-12345678901234567890" is negative/],
    ['{"id": "-1"}', "OutOfRange", "id", /"-1" is negative/],
    ['{"id": 1.5}', "InvalidText", "id", /1.5 is not an ID|"1.5" is not a decimal integer/],
    ['{"id": 1e3}', "InvalidText", "id", /id "1e3" is not a decimal integer/],
    ['{"ids": [2, 1e3]}', "InvalidText", "ids[1]", /ids\[1\] "1e3" is not a decimal integer/],
    ['{"id": 1.0}', "InvalidText", "id", /id "1.0" is not a decimal integer/],
    ['{"id": 18446744073709551615.0}', "InvalidText", "id", /not a decimal integer/],
    ['{"id": "12x"}', "InvalidText", "id", /id "12x" is not a decimal integer \(an ID is a decimal integer in 0..=18446744073709551615\)/],
    ['{"id": ""}', "InvalidText", "id", /id "" is empty/],
    ['{"id": " 12"}', "InvalidText", "id", /not a decimal integer/],
    ['{"id": true}', "InvalidText", "id", /id holds true, not an ID/],
    ['{"id": {"$numberLong": "1"}}', "InvalidText", "id", /id holds an object, not an ID/],
    ['{"ids": [1, [2]]}', "InvalidText", "ids[1]", /ids\[1\] holds an array, not an ID/],
    ['{"ids": ["1", "x"]}', "InvalidText", "ids[1]", /ids\[1\] "x" is not a decimal integer/],
  ];
  for (const [text, kind, subject, message] of cases) {
    assert.throws(() => parseJSON(text), refused(kind, subject, message), text);
  }
  // A long value is cut in the message and in `value`.
  const long = "7".repeat(100_000);
  assert.throws(
    () => parseJSON(`{"id": "${long}"}`),
    (error) => refused("OutOfRange", "id", /\.\.\. \(100000 characters\)/)(error) && error.value.length === 64,
  );
  assert.throws(() => parseId("١٢"), refused("InvalidText", "id", /not a decimal integer/));
  assert.equal(parseId("007"), 7n);
});

test(`text that is not JSON gets JSON.parse's own error, positions included (${MODE})`, () => {
  const texts = [
    "{12345678901234567890: 1}",
    '{"id": 01234567890123456789}',
    '{"id": 12345678901234567890',
    '{"id": 12345678901234567890,}',
    "[12345678901234567890 12345678901234567890]",
    '{"a": [1, 2}, 12345678901234567890: 3}',
    '"unterminated 12345678901234567890',
    "12345678901234567890x",
    "",
  ];
  for (const text of texts) {
    let expected;
    try {
      JSON.parse(text);
    } catch (error) {
      expected = error;
    }
    assert.ok(expected instanceof SyntaxError, text);
    assert.throws(() => parseJSON(text), (error) => error instanceof SyntaxError && error.message === expected.message, text);
  }
});

test(`a string that looks like a placeholder stays a string (${MODE})`, () => {
  const text = '{"note": "\\ud800snowmint:0:0", "id": 12345678901234567890, "other": "\\ud800snowmint:", "ids": ["1"]}';
  assert.deepEqual(parseJSON(text), { note: "\ud800snowmint:0:0", id: 12345678901234567890n, other: "\ud800snowmint:", ids: [1n] });
});

test(`any JSON without ID fields reads exactly as JSON.parse reads it (${MODE})`, () => {
  // A seeded generator of JSON values with long integers, exponents,
  // escapes and nesting.
  let seed = 0x2545f491;
  const random = (n) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const digits = (n) => Array.from({ length: n }, (_, i) => (i === 0 ? 1 + random(9) : random(10))).join("");
  const value = (depth) => {
    switch (depth > 3 ? random(5) : random(8)) {
      case 0: return `${random(2) ? "-" : ""}${digits(1 + random(30))}`;
      case 1: return `${digits(1 + random(20))}.${digits(1 + random(5))}e${random(2) ? "-" : "+"}${random(400)}`;
      case 2: return JSON.stringify(`s${digits(random(25))}\n"\\`);
      case 3: return ["true", "false", "null", "0", "-0"][random(5)];
      case 4: return `${digits(16 + random(10))}`;
      case 5: return `[${Array.from({ length: random(5) }, () => value(depth + 1)).join(" , ")}]`;
      default: return `{${Array.from({ length: random(5) }, (_, i) => `"k${i}${digits(random(20))}":${value(depth + 1)}`).join(",")}}`;
    }
  };
  for (let i = 0; i < 2000; i++) {
    const text = value(0);
    assert.deepEqual(parseJSON(text, { fields: [] }), JSON.parse(text), text);
  }
});

test(`the replacer writes ID fields as strings, and refuses a BigInt elsewhere by its key (${MODE})`, () => {
  const payload = { order: { id: 1724551110457221119n, lines: [{ id: "42", sku_id: 7 }], total: 12.5 }, ids: [1n, "2", 3], id: null };
  assert.equal(
    JSON.stringify(payload, idReplacer({ fields: ["id", "ids", "sku_id"] })),
    '{"order":{"id":"1724551110457221119","lines":[{"id":"42","sku_id":"7"}],"total":12.5},"ids":["1","2","3"],"id":null}',
  );
  assert.equal(stringifyJSON({ user_id: P63 }, { fields: (key) => key.endsWith("_id"), space: 1 }), `{\n "user_id": "${P63}"\n}`);
  assert.throws(() => stringifyJSON({ id: 1n, count: 2n }), (e) => e instanceof TypeError && /BigInt 2 at key "count" is not in an ID field/.test(e.message));
  assert.throws(() => stringifyJSON({ id: 2 ** 60 }), refused("OutOfRange", "id", /is not exact as a JavaScript number \(above 2\^53-1\)/));
  assert.throws(() => stringifyJSON({ id: -1n }), refused("OutOfRange", "id", /-1 is out of range/));
  assert.throws(() => stringifyJSON({ ids: [1n, 2n ** 64n] }), refused("OutOfRange", "ids[1]", /18446744073709551616 is out of range/));
  assert.throws(() => stringifyJSON({ id: "0x10" }), refused("InvalidText", "id", /not a decimal integer/));
  assert.throws(() => stringifyJSON({ id: 1.5 }), refused("InvalidText", "id", /1.5 is not an ID/));
  assert.throws(() => stringifyJSON({ id: { a: 1 } }), refused("InvalidText", "id", /holds an object/));
  // The fields option is checked.
  assert.throws(() => idReplacer({ fields: "id" }), TypeError);
  assert.throws(() => idReviver({ as: "number" }), TypeError);
});

test("the same cases with JSON.parse's source text access switched the other way", { skip: process.env.SNOWMINT_JSON_CHILD === "1" }, () => {
  // Node 18's V8 has no source text access to switch on: there the cases
  // above ran without it, the only way they can run.
  const v8Options = spawnSync(process.execPath, ["--v8-options"], { encoding: "utf8" }).stdout;
  if (!v8Options.includes("harmony-json-parse-with-source")) {
    assert.equal(hasSourceAccess(), false);
    assert.ok(Number(process.versions.node.split(".")[0]) < 20, `node ${process.version} should know the flag`);
    return;
  }
  const flag = hasSourceAccess() ? "--no-harmony-json-parse-with-source" : "--harmony-json-parse-with-source";
  // Without NODE_TEST_CONTEXT, which `node --test` sets for its own
  // children, and which would turn the child's report into the runner's
  // binary stream.
  const env = { ...process.env, SNOWMINT_JSON_CHILD: "1" };
  delete env.NODE_TEST_CONTEXT;
  const child = spawnSync(process.execPath, [flag, "--test-reporter=tap", fileURLToPath(import.meta.url)], {
    env,
    encoding: "utf8",
  });
  assert.equal(child.status, 0, `node ${flag} failed:\n${child.stdout}\n${child.stderr}`);
  const other = hasSourceAccess() ? "without source text access" : "with source text access";
  assert.match(child.stdout, new RegExp(`ok \\d+ - nested payloads.*\\(${other}\\)`));
  assert.doesNotMatch(child.stdout, /^not ok/m);
});
