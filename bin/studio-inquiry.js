#!/usr/bin/env node
// Launcher for the studio's CLI (src/cli/main.ts): lets `npx studio-inquiry` and
// `npm run inquiries -- <command>` run the TypeScript sources directly through tsx, from any directory.
import { register } from 'tsx/esm/api';

register();

// Resolved against this file, not the working directory, so the CLI can be started from anywhere
// (DATABASE_URL, however, is still read relative to the working directory, like the server's).
const { run } = await import(new URL('../src/cli/main.ts', import.meta.url).href);
// exitCode rather than process.exit(): output still buffered for a pipe is written before the end.
process.exitCode = await run(process.argv.slice(2));
