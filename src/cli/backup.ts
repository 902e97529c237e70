// `backup FILE`: a consistent copy of the SQLite database while the service runs and takes
// inquiries (SQLite's online backup), written 0600. Restoring it is in docs/operations.md, "Backups".
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Store } from '../storage/ports.js';
import { UsageError, type Values, type Work } from './commands.js';
import { iso, printable, systemErrorText } from './format.js';

export function backup(_values: Values, positionals: string[]): Work {
  if (positionals.length !== 1) throw new UsageError('expected one file to write the backup to, e.g. backup studio-2025-01-31.db');
  const destination = resolve(positionals[0] as string);
  return async (store: Store, config) => {
    if (!store.backup || config.database.kind !== 'sqlite') {
      process.stderr.write(
        'studio-inquiry: backup copies a SQLite database; back PostgreSQL up with pg_dump (docs/operations.md, "Backups")\n',
      );
      return 1;
    }
    if (existsSync(destination)) {
      process.stderr.write(`studio-inquiry: ${printable(destination)} exists already: a backup never overwrites a file\n`);
      return 1;
    }
    const started = new Date();
    try {
      await store.backup(destination);
    } catch (error) {
      process.stderr.write(`studio-inquiry: cannot write the backup to ${printable(destination)}: ${systemErrorText(error)}\n`);
      return 1;
    }
    process.stdout.write(
      `Backed up ${printable(config.database.path)} to ${printable(destination)} (started ${iso(started)}, mode 0600).\n`,
    );
    return 0;
  };
}
