// The load generator of `npm run bench`: wrk (Debian's package `wrk`), a C program on epoll, run with
// bench/load.lua on one thread. The processes measured share the machine's cores with it, so it must
// spend as little of them as it can (docs/benchmarks.md).
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { statCpuMs } from './processes.js';

const SCRIPT = resolve(import.meta.dirname, 'load.lua');

export interface LoadOptions {
  /** The URL to load; a path of /api/contact sends a unique inquiry per request (bench/load.lua). */
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  /** Unique among the loads of a run and of the runs on one database (the inquiries carry it). */
  readonly tag: string;
}

export interface LoadResult {
  /** Responses read. */
  readonly requests: number;
  readonly seconds: number;
  /**
   * Latency percentiles, in ms, as wrk gives them: corrected for coordinated omission (a response
   * slower than twice the mean interval of its connection adds samples for the requests it held
   * back), so a stall weighs as it would for clients arriving at a steady rate.
   */
  readonly p50: number;
  readonly p99: number;
  /** Connect, read, write and timeout errors. */
  readonly errors: number;
  /** Answers other than 200 (for health: 4xx and 5xx, all wrk counts without a script's help). */
  readonly non2xx: number;
  /** /api/contact: the references of the answers 200, in the order read. */
  readonly references: readonly string[];
  /** /api/contact: answers 200 without an INQ- reference. */
  readonly withoutReference: number;
  /** The processor time wrk used, in ms (undefined where /proc is missing). */
  readonly cpuMs: number | undefined;
}

export interface Load {
  readonly result: Promise<LoadResult>;
  /** Ends the load at once (its result then fails). */
  stop(): void;
}

/**
 * Starts wrk. It runs under a shell that, once wrk has ended, prints its own /proc stat line:
 * the times of the children it waited for (fields 16 and 17) are wrk's, which node:child_process
 * cannot give.
 */
export function startLoad({ url, connections, seconds, tag }: LoadOptions): Load {
  let stopped = false;
  let child: ReturnType<typeof spawn> | undefined;
  const result = (async (): Promise<LoadResult> => {
    const folder = await mkdtemp(join(tmpdir(), 'studio-inquiry-bench-load-'));
    try {
      const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', SCRIPT, url, '--', folder, tag];
      const shell = 'wrk "$@"; status=$?; echo; cat /proc/$$/stat; exit $status';
      const out = await new Promise<string>((resolveRun, reject) => {
        if (stopped) return reject(new Error('load stopped'));
        // Its own process group, so that stop() ends wrk too, not only the shell.
        const started = spawn('sh', ['-c', shell, 'sh', ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        child = started;
        let text = '';
        started.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        started.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        started.once('error', reject);
        // 'close', not 'exit': by then everything wrk printed has been read.
        started.once('close', (code, signal) => {
          if (code === 0) return resolveRun(text);
          const hint = code === 127 ? ' (not installed? apt-get install wrk)' : '';
          reject(new Error(`wrk ended with ${signal ?? `code ${code}`}${hint}:\n${text}`));
        });
      });
      const fields = /^result (.*)$/m.exec(out)?.[1];
      if (fields === undefined) throw new Error(`wrk printed no result:\n${out}`);
      const value = (name: string): number => {
        const found = new RegExp(`\\b${name}=([0-9.]+)`).exec(fields)?.[1];
        if (found === undefined) throw new Error(`wrk's result has no ${name}: ${fields}`);
        return Number(found);
      };
      const references: string[] = [];
      for (const file of await readdir(folder)) {
        for (const line of (await readFile(join(folder, file), 'utf8')).split('\n')) if (line !== '') references.push(line);
      }
      const contact = new URL(url).pathname === '/api/contact';
      // The files are flushed when wrk exits: a count that differs means some were not.
      if (references.length !== value('accepted')) {
        throw new Error(`wrk counted ${value('accepted')} answers 200 with a reference, its files hold ${references.length}`);
      }
      return {
        requests: value('requests'),
        seconds: value('seconds'),
        p50: value('p50_ms'),
        p99: value('p99_ms'),
        errors: value('errors'),
        non2xx: contact ? value('non2xx') : value('status_errors'),
        references,
        withoutReference: value('without_reference'),
        cpuMs: childrenCpuMs(out),
      };
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  })();
  return {
    result,
    stop() {
      stopped = true;
      if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // ended meanwhile
        }
      }
    },
  };
}

/** cutime + cstime (ms) from the last line in `out`, the shell's /proc stat line: wrk's. */
function childrenCpuMs(out: string): number | undefined {
  return statCpuMs(out.trimEnd().split('\n').at(-1) ?? '', 'ended children');
}
