import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_RULES, variablesOf, type Variable } from './config-schema.js';
import { isMain } from './main.js';
import { projectRoot } from './paths.js';

/**
 * docs/configuration.md's table, generated from the schema (runtime/config-schema.ts) so the two
 * cannot drift: `node dist/runtime/config-doc.js --write` rewrites the part between the markers,
 * and test/config.test.ts fails when the document differs from what this prints.
 */
export const CONFIGURATION_DOC = join(projectRoot, 'docs', 'configuration.md');
export const BEGIN_MARKER = '<!-- generated from runtime/config-schema.ts by `node dist/runtime/config-doc.js --write`: edit the schema, not this table -->';
export const END_MARKER = '<!-- end of the generated table -->';

const cell = (text: string) => text.replace(/\|/g, '\\|');

function defaultOf(v: Variable<unknown>): string {
  if (v.defaultText !== undefined) return v.defaultText;
  return v.default === undefined ? 'unset' : `\`${String(v.default)}\``;
}

/** The table of every variable and the rules between them, in schema order. */
export function configurationTable(): string {
  const rows = variablesOf().map((v) => `| \`${v.name}\` | ${v.type} | ${cell(defaultOf(v))} | ${cell(v.allowed)} | ${cell(v.description)} |`);
  return [
    '| variable | type | default | allowed | meaning |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'Between variables:',
    '',
    ...CONFIG_RULES.map((r) => `- ${r.text}`),
  ].join('\n');
}

/** The generated part of a document's text (between the markers), or undefined without them. */
export function generatedPart(doc: string): string | undefined {
  const start = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (start === -1 || end === -1 || end < start) return undefined;
  return doc.slice(start + BEGIN_MARKER.length, end).trim();
}

if (isMain(import.meta.url)) {
  if (process.argv.includes('--write')) {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    const start = doc.indexOf(BEGIN_MARKER);
    const end = doc.indexOf(END_MARKER);
    if (start === -1 || end === -1) throw new Error(`${CONFIGURATION_DOC} lacks the markers of the generated table`);
    writeFileSync(CONFIGURATION_DOC, `${doc.slice(0, start + BEGIN_MARKER.length)}\n${configurationTable()}\n${doc.slice(end)}`);
  } else {
    process.stdout.write(configurationTable() + '\n');
  }
}
