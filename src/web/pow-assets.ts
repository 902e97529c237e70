// The proof-of-work worker's files, served by the service itself under /assets/pow/ (no CDN): its
// entry, src/web/pow-worker.js, and the altcha-lib modules it imports, at their paths in the
// package, so that their relative imports hold. Each starts with the package's licence line.
import { readFile } from 'node:fs/promises';

/** The worker's entry, below /assets/pow/. */
export const POW_WORKER = 'worker.js';
/** The altcha-lib browser modules the worker imports, by path below the package's dist/esm/v2/. */
export const ALTCHA_MODULES = ['pow.js', 'helpers.js', 'types.js', 'workers/shared.js', 'algorithms/web/pbkdf2.js'] as const;

/** Every file of /assets/pow/, by path below it: the entry first. */
export async function readPowFiles(): Promise<Map<string, Buffer>> {
  const altcha = new URL('./', import.meta.resolve('altcha-lib'));
  const packageJson = JSON.parse(await readFile(new URL('../../../package.json', altcha), 'utf8')) as { version: string };
  const copyright = (await readFile(new URL('../../../LICENSE.txt', altcha), 'utf8'))
    .split('\n')
    .find((line) => line.startsWith('Copyright'));
  const banner = `/*! altcha-lib ${packageJson.version} | MIT License | ${copyright ?? ''} | https://github.com/altcha-org/altcha-lib */\n`;
  const files = new Map([[POW_WORKER, await readFile(new URL('pow-worker.js', import.meta.url))]]);
  for (const path of ALTCHA_MODULES) files.set(path, Buffer.concat([Buffer.from(banner), await readFile(new URL(path, altcha))]));
  return files;
}
