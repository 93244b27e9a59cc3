import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * DATA_DIR holds what no other local user may read: sent mails with their signed unsubscribe,
 * confirmation and tracking links (mailbox/), every tenant's ClickHouse parts, the embedded
 * servers' passwords, URLs and logs. So it is private to the user Cartero runs as: directories
 * 0700, files 0600 (0700 when executable), nothing for group or others.
 *
 * Two means, because Cartero is not the only writer: files Cartero writes get explicit modes,
 * and `npm start` sets PRIVATE_UMASK on itself before anything starts, so what ClickHouse, the
 * mailbox simulator and the dynos it spawns write lands private too (Postgres sets its own umask
 * from its data directory's mode, which initdb makes 0700).
 *
 * The one exception: as root, the embedded Postgres runs as the user `postgres` (sql/embedded.ts),
 * which must pass through DATA_DIR to reach its cluster in DATA_DIR/postgres/data. DATA_DIR is
 * then 0710 with the group `postgres`: that group may pass through (not list), nobody else may
 * do anything, and everything inside is still owner-only (DATA_DIR/postgres belongs to postgres).
 */
export const PRIVATE_UMASK = 0o077;

export interface DataDirAccess {
  /**
   * The group that may pass through DATA_DIR itself (execute, never read or write): the embedded
   * Postgres's group when the service runs as root. Undefined: DATA_DIR is 0700.
   */
  traverseGid?: number;
}

/** Why DATA_DIR cannot be made private: its entries that this process cannot tighten, each with the reason. */
export class DataDirModeError extends Error {
  constructor(
    message: string,
    readonly problems: string[],
  ) {
    super(message);
  }
}

function cannotTighten(dir: string, problems: string[], tightened: number): DataDirModeError {
  return new DataDirModeError(
    `DATA_DIR ${dir} holds ${problems.length === 1 ? 'an entry' : `${problems.length} entries`} other local users may read or write, ` +
      `and this process (uid ${process.getuid?.()}) cannot make ${problems.length === 1 ? 'it' : 'them'} private:\n` +
      problems.slice(0, 10).map((p) => `  ${p}\n`).join('') +
      (problems.length > 10 ? `  ... and ${problems.length - 10} more\n` : '') +
      (tightened ? `(${tightened} other ${tightened === 1 ? 'entry was' : 'entries were'} made private.)\n` : '') +
      'Make them owned by this user (chown), or private yourself (chmod go-rwx; chattr -i where immutable; a writable mount), then start again (docs/operations.md, DATA_DIR).',
    problems,
  );
}

/**
 * Creates DATA_DIR when it is missing (its parents as any tool would, DATA_DIR itself private),
 * without changing anything that exists. For every process that may create it first (`npm start`,
 * the CLI starting the embedded Postgres).
 */
export function createDataDir(dir: string, access: DataDirAccess = {}): void {
  mkdirSync(dirname(dir), { recursive: true });
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  if (access.traverseGid !== undefined) chownSync(dir, process.getuid?.() ?? -1, access.traverseGid);
  chmodSync(dir, access.traverseGid !== undefined ? 0o710 : 0o700); // whatever the umask did
}

/**
 * Creates DATA_DIR when missing, then makes private every entry in it that is not: group and
 * other permission bits removed (0644 → 0600, 0755 → 0700), on DATA_DIR itself and on everything
 * below, without following a symlink (the relocated Postgres cluster, or one planted to point
 * out of DATA_DIR, is left alone). Returns how many entries it changed: a data directory made by
 * an earlier version (umask 022) has many, a second start none. Throws DataDirModeError naming
 * every entry it could not change (another user's file as non-root, an immutable file, a
 * read-only mount), after changing the others.
 */
export function secureDataDir(dir: string, access: DataDirAccess = {}): { tightened: number } {
  createDataDir(dir, access);
  const problems: string[] = [];
  let tightened = 0;
  const uid = process.getuid?.();

  const visit = (path: string, top: boolean) => {
    let st: Stats;
    try {
      // DATA_DIR itself may be a symlink an operator made (./.data -> a volume); nothing below it is followed.
      st = top ? statSync(path) : lstatSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // removed meanwhile (a running Postgres)
      problems.push(`${path}: ${(err as Error).message}`);
      return;
    }
    if (st.isSymbolicLink()) return;
    const mode = st.mode & 0o7777;
    // DATA_DIR itself keeps its group's execute bit for Postgres's group, and only for it.
    const passGroup = top && access.traverseGid !== undefined && (mode & 0o010) !== 0;
    const wanted = mode & ~(passGroup ? 0o067 : 0o077);
    const regroup = passGroup && st.gid !== access.traverseGid;
    if (wanted !== mode || regroup) {
      try {
        if (regroup) chownSync(path, st.uid, access.traverseGid!);
        chmodSync(path, wanted);
        tightened++;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        const owner = st.uid === uid ? '' : `, owned by uid ${st.uid}`;
        problems.push(`${path}: mode ${mode.toString(8).padStart(4, '0')}${owner}: ${code ?? (err as Error).message}`);
      }
    }
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      problems.push(`${path}: cannot list it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      return;
    }
    for (const name of names) visit(join(path, name), false);
  };

  const root = statSync(dir);
  if (!root.isDirectory()) throw new DataDirModeError(`DATA_DIR ${dir} is not a directory`, []);
  visit(dir, true);
  if (problems.length) throw cannotTighten(dir, problems, tightened);
  return { tightened };
}
