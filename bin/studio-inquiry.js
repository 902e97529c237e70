#!/usr/bin/env node
// Launcher for the studio's CLI: runs the compiled dist/cli/main.js (`npm start` and `npm run build`
// build it), from any directory.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('studio-inquiry: the CLI is not built yet; run `npm run build` in the project first\n');
  process.exit(1);
}
// Resolved against this file, not the working directory (DATABASE_URL, however, is still read
// relative to the working directory, like the server's).
const { run } = await import(entry.href);
// exitCode rather than process.exit(): output still buffered for a pipe is written before the end.
process.exitCode = await run(process.argv.slice(2));
