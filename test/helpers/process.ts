// Runs the service as a real process (`node dist/main.js`, built by the tests' global set-up), as
// `npm start` does.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  readonly output: () => string;
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export function spawnService(env: Record<string, string>): Omit<ServiceProcess, 'baseUrl'> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_INQUIRIES: 'off',
      SPAM_FILTER: 'off',
      SPAM_DIGEST: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

/** Starts the service and waits until /api/health answers 200. */
export async function startService(env: Record<string, string>, timeoutMs = 20_000): Promise<ServiceProcess> {
  const port = await freePort();
  const service = spawnService({ PORT: String(port), ...env });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let exitedEarly = false;
  void service.exited.then(() => {
    exitedEarly = true;
  });
  for (;;) {
    if (exitedEarly) throw new Error(`service exited during start-up:\n${service.output()}`);
    try {
      const response = await fetch(`${baseUrl}/api/health`);
      if (response.status === 200) return { ...service, baseUrl };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      service.child.kill('SIGKILL');
      throw new Error(`service did not become healthy:\n${service.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
