import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { projectRoot } from '../config/paths.js';

/**
 * One owner for each table (issue 25, section 3), checked on the sources: only domain/outbox/
 * inserts into the event outbox (its append functions: one shape, one statement per call), and
 * only domain/consent/ inserts consent events and their rules. The .ts sources of the top folders
 * are read (test/ and bench/ are not code of the service: their fixtures insert freely);
 * sql/migrations stays out (its triggers write the outbox too, by design). A static scan: an
 * INSERT whose table name is built at run time would pass unseen, and none is.
 */
const TOP_FOLDERS = ['config', 'errors', 'sql', 'domain', 'engines', 'analytics', 'smtp', 'workers', 'api', 'cli', 'runtime'];
const EXCLUDED = ['sql/migrations/'];

/** Table → the one folder whose files may INSERT into it. */
const OWNERS: Record<string, string> = {
  event_outbox: 'domain/outbox/',
  consent_events: 'domain/consent/',
  consent_rules: 'domain/consent/',
};

function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );
}

/** INSERT INTO [ONLY] [public.]table, any case and spacing, quotes allowed. */
function insertInto(table: string): RegExp {
  return new RegExp(`\\bINSERT\\s+INTO\\s+(?:ONLY\\s+)?(?:"?public"?\\s*\\.\\s*)?"?${table}"?(?![\\w])`, 'gi');
}

/** Each INSERT into an owned table outside its owner, as file:line table. */
function foreignInserts(root: string): string[] {
  const found: string[] = [];
  for (const folder of TOP_FOLDERS) {
    for (const file of sources(join(root, folder))) {
      const rel = relative(root, file).split('\\').join('/');
      if (EXCLUDED.some((x) => rel.startsWith(x))) continue;
      const text = readFileSync(file, 'utf8');
      for (const [table, owner] of Object.entries(OWNERS)) {
        if (rel.startsWith(owner)) continue;
        for (const m of text.matchAll(insertInto(table))) {
          found.push(`${rel}:${text.slice(0, m.index).split('\n').length} ${table} (owner: ${owner})`);
        }
      }
    }
  }
  return found;
}

t.test('the pattern finds the forms of INSERT a writer would use', async (t) => {
  const re = (s: string, table = 'event_outbox') => [...s.matchAll(insertInto(table))].length;
  t.equal(re('INSERT INTO event_outbox (instance_id) VALUES ($1)'), 1);
  t.equal(re('insert  into\n   public.event_outbox (x)'), 1);
  t.equal(re('INSERT INTO "event_outbox" (x)'), 1);
  t.equal(re('INSERT INTO event_outbox_archive (x)'), 0, 'another table whose name starts the same');
  t.equal(re('SELECT * FROM event_outbox'), 0, 'reading is not writing');
  t.equal(re('INSERT INTO consent_events (x)', 'consent_events'), 1);
});

t.test('only domain/outbox/ inserts into event_outbox, only domain/consent/ into consent_events and consent_rules', async (t) => {
  t.ok(existsSync(join(projectRoot, 'domain/outbox/append.ts')), 'the scan reads the sources (domain/outbox/append.ts is there)');
  t.same(foreignInserts(projectRoot), [], 'no INSERT into an owned table outside its owner');
});
