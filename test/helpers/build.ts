// Vitest global set-up: builds dist/ once per run (incremental), so that the tests that start the
// service or the CLI as a real process run the compiled code, as `npm start` and the CLI do.
import { execFileSync } from 'node:child_process';

export default function build(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
