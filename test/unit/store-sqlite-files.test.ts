// The SQLite files are the service user's alone, whatever the umask: a folder the service creates
// is 0700, the database and its -wal and -shm 0600, and an existing file with wider modes is narrowed.
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import { createStore } from '../../src/storage/store.js';
import { inquiry } from '../helpers/store-fixtures.js';

const modeOf = (path: string): number => statSync(path).mode & 0o777;
let folder: string;
let umask: number;

afterEach(() => {
  process.umask(umask);
  rmSync(folder, { recursive: true, force: true });
});

describe('the SQLite files', () => {
  it.each([0o022, 0o002, 0o000])('are private under umask %o, the folder created for them too', async (mask) => {
    umask = process.umask(mask);
    folder = mkdtempSync(join(tmpdir(), 'studio-inquiry-modes-'));
    const path = join(folder, 'new', 'nested', 'inquiries.db');
    const database = await openDatabase({ kind: 'sqlite', path });
    const store = createStore(database);
    await store.inquiries.insertMany([{ inquiry: inquiry('INQ-MODE01'), fingerprint: 'fp' }]);
    expect([modeOf(join(folder, 'new')), modeOf(join(folder, 'new', 'nested'))]).toEqual([0o700, 0o700]);
    expect([path, `${path}-wal`, `${path}-shm`].map(modeOf)).toEqual([0o600, 0o600, 0o600]);
    await database.db.destroy();
  });

  it('narrows an existing database and its -wal and -shm to 0600, leaving an existing folder as it is', async () => {
    umask = process.umask(0o022);
    folder = mkdtempSync(join(tmpdir(), 'studio-inquiry-modes-'));
    chmodSync(folder, 0o755);
    const path = join(folder, 'inquiries.db');
    const first = await openDatabase({ kind: 'sqlite', path });
    await first.db.destroy();
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      writeFileSync(file, '', { flag: 'a' });
      chmodSync(file, 0o644);
    }
    const again = await openDatabase({ kind: 'sqlite', path });
    expect([path, `${path}-wal`, `${path}-shm`].map(modeOf)).toEqual([0o600, 0o600, 0o600]);
    expect(modeOf(folder)).toBe(0o755);
    await again.db.destroy();
  });
});
