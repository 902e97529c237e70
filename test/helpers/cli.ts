// The CLI as the studio runs it: `node bin/studio-inquiry.js …` as a child process, with a minimal,
// explicit environment (PATH, LOG_LEVEL=silent and what the test gives).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI_BIN = fileURLToPath(new URL('../../bin/studio-inquiry.js', import.meta.url));

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], env: Record<string, string>, timeoutMs = 30_000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_BIN, ...args],
      { timeout: timeoutMs, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });
}
