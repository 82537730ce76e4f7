// The package as a user gets it: `npm pack`, the tarball installed into a
// project of its own, imported from ESM and from CommonJS, type-checked
// from TypeScript (both module kinds) with tsc, and the examples run there
// against real nodes, printing what their `//=>` lines say: every `js`
// block of the README inside the installed package, of the repository's
// README.md and of docs/*.md.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { staticNode, tempDir } from "./support.mjs";

const js = dirname(dirname(fileURLToPath(import.meta.url)));
const tsc = join(js, "node_modules/typescript/bin/tsc");

/** Runs `command` in `cwd`; its output, or a failure that shows it. */
function run(command, args, cwd, { env = process.env, fail = false } = {}) {
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8" });
  if (result.error) throw result.error;
  const shown = `${command} ${args.join(" ")} (in ${cwd}) exited ${result.status}:\n${result.stdout}\n${result.stderr}`;
  if (fail) assert.notEqual(result.status, 0, shown);
  else assert.equal(result.status, 0, shown);
  return result;
}

/** The fenced blocks of `language` in a Markdown text. */
function blocks(markdown, language) {
  return [...markdown.matchAll(new RegExp("^```" + language + "\\n([\\s\\S]*?)^```$", "gm"))].map((m) => m[1]);
}

test("the packed package: installed, imported from ESM and CommonJS, type-checked, its README's examples run", async (t) => {
  const work = tempDir(t, "package");
  // The build run-tests made just before (`prepack` would make it again).
  const [packed] = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], js).stdout);
  const files = packed.files.map((f) => f.path).sort();
  assert.deepEqual(
    files,
    [
      "README.md",
      ...["cjs", "esm"].flatMap((kind) => [
        ...["client", "errors", "id", "index", "inspect", "json", "layout", "nodes", "rust", "text", "time"].map((m) => `dist/${kind}/${m}.d.ts`),
        `dist/${kind}/index.js`,
        `dist/${kind}/index.js.map`,
      ]),
      "dist/cjs/package.json",
      "package.json",
    ].sort(),
    "the tarball holds the builds, the declarations and the README (run npm run build first)",
  );
  t.diagnostic(`${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${packed.entryCount} files`);

  const project = join(work, "project");
  run("mkdir", ["-p", project], work);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-project", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", join(work, packed.filename)], project);
  const installed = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
  assert.deepEqual(Object.keys(installed.dependencies), ["snowmint"]);
  assert.equal(JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")).packages["node_modules/snowmint"].dependencies, undefined, "no runtime dependencies");

  await t.test("imported from ESM and from CommonJS: the same API", () => {
    const check = `
      const [big, body, text] = [snowmint.MAX_U64, snowmint.parseJSON('{"id": 18446744073709551615}'), snowmint.stringifyJSON({ ids: [2n ** 63n] })];
      if (big !== 18446744073709551615n || body.id !== big || text !== '{"ids":["9223372036854775808"]}') throw new Error("wrong values");
      let error;
      try { snowmint.parseId("x"); } catch (e) { error = e; }
      if (!(error instanceof snowmint.SnowmintError) || error.kind !== "InvalidText") throw new Error("wrong error " + error);
      console.log(Object.keys(snowmint).filter((k) => k !== "default").sort().join(","));
    `;
    writeFileSync(join(project, "esm.mjs"), `import * as snowmint from "snowmint";\n${check}`);
    writeFileSync(join(project, "cjs.cjs"), `const snowmint = require("snowmint");\n${check}`);
    const esm = run(process.execPath, ["esm.mjs"], project).stdout;
    const cjs = run(process.execPath, ["cjs.cjs"], project).stdout;
    assert.equal(esm, cjs);
    for (const name of ["Client", "parseJSON", "idReviver", "idReplacer", "stringifyJSON", "UnavailableError", "RefusedError", "decode", "encode", "range", "decodeText", "inspect", "PRESETS"]) {
      assert.ok(esm.trim().split(",").includes(name), `${name} is exported: ${esm}`);
    }
    // Each is its own build: the CommonJS one is not the ESM one loaded twice.
    const resolved = run(process.execPath, ["-e", 'console.log(require.resolve("snowmint"))'], project).stdout.trim();
    assert.match(resolved, /node_modules\/snowmint\/dist\/cjs\/index\.js$/);
  });

  const readme = readFileSync(join(project, "node_modules/snowmint/README.md"), "utf8");

  await t.test("type-checked with tsc from ESM and CommonJS, and a wrong use refused", () => {
    const [shown] = blocks(readme, "ts");
    assert.ok(shown, "the README has a ts block");
    writeFileSync(join(project, "readme.mts"), shown);
    writeFileSync(
      join(project, "check.cts"),
      `import { Client, parseJSON, idReviver, UnavailableError, type ClientOptions } from "snowmint";
const options: ClientOptions = { nodes: "http://127.0.0.1:8080", prefetch: { maxAgeMs: 50 } };
const client = new Client(options);
export async function next(): Promise<bigint> {
  try {
    return await client.nextId();
  } catch (error) {
    if (error instanceof UnavailableError) console.log(error.refusal?.code, error.retryAfterMs);
    throw error;
  }
}
export const parsed: unknown = [parseJSON("1"), JSON.parse("{}", idReviver({ as: "string" }))];
`,
    );
    const config = {
      compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], strict: true, noEmit: true, types: [] },
    };
    // One wrong use beside them: the one error tsc reports.
    writeFileSync(join(project, "wrong.mts"), `import { Client } from "snowmint";\nexport const n: number = await new Client({ nodes: "http://127.0.0.1:8080" }).nextId();\n`);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ ...config, files: ["readme.mts", "check.cts", "wrong.mts"] }));
    const checked = run(process.execPath, [tsc, "-p", "tsconfig.json"], project, { fail: true });
    const errors = checked.stdout.split("\n").filter((line) => line.includes("error TS"));
    assert.deepEqual(errors.length, 1, checked.stdout);
    assert.match(errors[0], /^wrong\.mts\(2,14\): error TS2322: Type 'bigint' is not assignable to type 'number'/);
  });

  await t.test("every js example of the READMEs and docs runs as shown, against two real nodes", async (t) => {
    const [a, b] = await Promise.all([staticNode(t, 9, 1), staticNode(t, 9, 2)]);
    const env = { ...process.env };
    delete env.SNOWMINT_TOKEN;
    delete env.SNOWMINT_NODES;
    const repository = join(js, "..");
    const pages = [["js/README.md (as installed)", readme], ["README.md", readFileSync(join(repository, "README.md"), "utf8")]];
    const docs = join(repository, "docs");
    for (const name of existsSync(docs) ? readdirSync(docs).filter((f) => f.endsWith(".md")).sort() : []) {
      pages.push([`docs/${name}`, readFileSync(join(docs, name), "utf8")]);
    }
    const examples = pages.flatMap(([page, text]) => blocks(text, "js").map((block, i) => [`${page}, js block ${i + 1}`, block]));
    assert.ok(examples.length >= 5, `${examples.length} js blocks`);
    examples.forEach(([where, shown], i) => {
      const code = shown
        .replaceAll("http://10.0.0.1:8080", a.url)
        .replaceAll("http://10.0.0.2:8080", b.url)
        .replace('"snowmint.ids.svc.cluster.local"', '"localhost"')
        .replace(":8080`", `:${new URL(a.url).port}\``);
      assert.doesNotMatch(code, /10\.0\.0\.|:8080/, "every address of the example is replaced");
      const file = join(project, `readme-${i}.mjs`);
      writeFileSync(file, code);
      const { stdout } = run(process.execPath, [file], project, { env });
      const expected = shown.split("\n").filter((line) => line.startsWith("//=> ")).map((line) => line.slice(5));
      const printed = stdout.trimEnd() === "" ? [] : stdout.trimEnd().split("\n");
      assert.deepEqual(printed, expected, `${where}:\n${shown}`);
    });
  });
});
