// Child processes for the benchmark: a free loopback port, start a server process, wait until its
// health endpoint answers, and stop it (SIGTERM, then SIGKILL) whatever state it is in.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export const LOOPBACK = '127.0.0.1';

/** A port free on the loopback interface right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, LOOPBACK, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly baseUrl: string;
  /** The last lines the process wrote (stdout and stderr), for error reports. */
  tail(): string;
  /** How many lines it wrote in all (the service logs at warn: this should stay near zero). */
  lines(): number;
  /** CPU time (user + system) the process has used so far, in ms; undefined where /proc is missing. */
  cpuMs(): number | undefined;
  /** The same, of its main thread alone (the event loop; not its worker threads). */
  mainThreadCpuMs(): number | undefined;
  /** Resident memory (VmRSS) right now, in MiB; undefined where /proc is missing. */
  rssMiB(): number | undefined;
  stop(): Promise<void>;
}

const TAIL_LINES = 40;
const TERM_GRACE_MS = 10_000;

export function startServerProcess(
  name: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  port: number,
  cwd: string,
): ServerProcess {
  const child = spawn(process.execPath, args, {
    cwd,
    // A minimal environment plus what the process needs: nothing from the caller's shell leaks in.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  let lines = 0;
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line === '') continue;
      lines++;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

  return {
    name,
    child,
    baseUrl: `http://${LOOPBACK}:${port}`,
    tail: () => tail.join('\n'),
    lines: () => lines,
    cpuMs: () => (child.pid === undefined ? undefined : processCpuMs(child.pid)),
    mainThreadCpuMs: () => (child.pid === undefined ? undefined : threadCpuMs(child.pid, child.pid)),
    rssMiB: () => (child.pid === undefined ? undefined : processRssMiB(child.pid)),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), TERM_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Throws if the process has exited: a server that died mid-run makes every later figure meaningless. */
export function assertRunning(server: ServerProcess): void {
  const { exitCode, signalCode } = server.child;
  if (exitCode !== null || signalCode !== null) {
    // The service exits 0 only after a graceful shutdown, i.e. on SIGTERM/SIGINT from outside the bench.
    const how = signalCode ?? (exitCode === 0 ? 'code 0: stopped by a signal from outside the bench?' : `code ${exitCode}`);
    throw new Error(`${server.name} exited during the run (${how}); its last output:\n${server.tail()}`);
  }
}

/** Polls GET /api/health until it answers 200; fails early if the process exits. */
export async function waitForHealth(server: ServerProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited (${server.child.exitCode ?? server.child.signalCode}) before answering:\n${server.tail()}`);
    }
    try {
      const response = await fetch(`${server.baseUrl}/api/health`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${server.name} did not answer /api/health with 200 within ${timeoutMs} ms:\n${server.tail()}`);
}

/** Linux clock ticks per second for /proc/<pid>/stat (USER_HZ, 100 on every mainstream platform). */
const CLOCK_TICKS_PER_S = 100;

/** utime + stime of a process from /proc/<pid>/stat, in ms; with cutime + cstime, its ended children's too. */
function processCpuMs(pid: number, { withEndedChildren = false } = {}): number | undefined {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'), withEndedChildren ? 'own and ended children' : 'own');
  } catch {
    return undefined;
  }
}

/** One thread's CPU time from /proc/<pid>/task/<tid>/stat (the main thread's tid is the pid). */
function threadCpuMs(pid: number, tid: number): number | undefined {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'), 'own');
  } catch {
    return undefined;
  }
}

/** VmRSS of a process from /proc/<pid>/status, in MiB. */
function processRssMiB(pid: number): number | undefined {
  try {
    const kiB = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kiB === undefined ? undefined : Number(kiB) / 1024;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system) in ms from a /proc/<pid>/stat line: the process's own (utime + stime),
 * that of its children it has waited for (cutime + cstime), or both; undefined if it cannot be read.
 */
export function statCpuMs(stat: string, of: 'own' | 'ended children' | 'own and ended children'): number | undefined {
  // Fields after the parenthesised command name; utime, stime, cutime and cstime are fields 14–17 of the line.
  const fields = stat.split(') ')[1]?.split(' ') ?? [];
  const own = Number(fields[11]) + Number(fields[12]);
  const children = Number(fields[13]) + Number(fields[14]);
  const ticks = of === 'own' ? own : of === 'ended children' ? children : own + children;
  return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_S : undefined;
}

/**
 * CPU time (user + system) of every process running this command (e.g. `postgres`), in ms, with that
 * of their children that have ended (a server's finished backends and autovacuum workers are
 * counted in its own cutime and cstime); undefined where /proc is missing or no such process runs.
 */
export function commandCpuMs(command: string): number | undefined {
  let total: number | undefined;
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(pid)) continue;
      let name: string;
      try {
        name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        continue; // ended meanwhile
      }
      if (name === command) total = (total ?? 0) + (processCpuMs(Number(pid), { withEndedChildren: true }) ?? 0);
    }
  } catch {
    return undefined;
  }
  return total;
}

/** Time all the machine's cores have spent idle so far (idle + iowait in /proc/stat), in ms. */
export function machineIdleMs(): number | undefined {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
    const ticks = Number(fields[4]) + Number(fields[5]);
    return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_S : undefined;
  } catch {
    return undefined;
  }
}
