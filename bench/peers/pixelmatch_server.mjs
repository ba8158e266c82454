// A persistent pixelmatch process for the engine benchmark, so that node's start-up and JIT
// warm-up are paid once and each request measures only read + decode + compare + write.
//
// Usage: node pixelmatch_server.mjs <folder holding node_modules with pixelmatch and pngjs>
// Protocol: prints {"ready": true}, then for every JSON line
//   {"id", "base", "candidate", "output", "threshold", "includeAA"} on stdin
// answers one line {"id", "diff": count} or {"id", "error": message} on stdout.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const peers = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "..", ".peers"));
// The packages live in the install folder, not next to this script, so resolve them from there.
const require = createRequire(path.join(peers, "package.json"));
const { PNG } = require("pngjs");
const pixelmatch = (await import(pathToFileURL(require.resolve("pixelmatch")).href)).default;

function handle(request) {
  const base = PNG.sync.read(fs.readFileSync(request.base));
  const candidate = PNG.sync.read(fs.readFileSync(request.candidate));
  if (base.width !== candidate.width || base.height !== candidate.height) {
    return {
      id: request.id,
      error: `sizes differ: ${base.width}x${base.height} vs ${candidate.width}x${candidate.height}`,
    };
  }
  const { width, height } = base;
  const diff = new PNG({ width, height });
  const count = pixelmatch(base.data, candidate.data, diff.data, width, height, {
    threshold: request.threshold ?? 0.1,
    includeAA: request.includeAA ?? false,
  });
  // Like Viewfinder and odiff, write a diff image only when there is a difference to show.
  if (count > 0) {
    fs.writeFileSync(request.output, PNG.sync.write(diff));
  }
  return { id: request.id, diff: count };
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
for await (const line of lines) {
  if (!line.trim()) {
    continue;
  }
  let answer;
  try {
    const request = JSON.parse(line);
    try {
      answer = handle(request);
    } catch (err) {
      answer = { id: request.id, error: String(err?.message ?? err) };
    }
  } catch (err) {
    answer = { id: null, error: `bad request: ${err.message}` };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
