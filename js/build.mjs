// Builds the package into dist/: one ESM and one CommonJS bundle (esbuild)
// and the type declarations (tsc), the same .d.ts for both, the CommonJS
// copy under a package.json that says so. Run by `npm run build`.
import { execFileSync } from "node:child_process";
import { copyFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });

const common = {
  entryPoints: [join(root, "src/index.ts")],
  bundle: true,
  // Node 18 and the browsers of the last years: BigInt, class private
  // fields, `??=`.
  target: ["es2022", "node18"],
  platform: "neutral",
  sourcemap: true,
  legalComments: "none",
  logLevel: "warning",
};
await build({ ...common, format: "esm", outfile: join(dist, "esm/index.js") });
await build({ ...common, format: "cjs", outfile: join(dist, "cjs/index.js") });
writeFileSync(join(dist, "cjs/package.json"), '{\n  "type": "commonjs"\n}\n');

try {
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json")], {
    stdio: "inherit",
  });
} catch {
  console.error("build.mjs: tsc found errors (above)");
  process.exit(1);
}
for (const file of readdirSync(join(dist, "esm"))) {
  if (file.endsWith(".d.ts")) copyFileSync(join(dist, "esm", file), join(dist, "cjs", file));
}
