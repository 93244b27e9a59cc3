import { join } from 'node:path';
import { CONFIG_RULES, variablesOf } from './schema.js';
import type { Variable } from './variable.js';
import { type GeneratedSection, generatedPart as partOf, writeOrPrint } from './generated-section.js';
import { isMain } from './is-main.js';
import { projectRoot } from './paths.js';

/**
 * docs/configuration.md's table, generated from the schema (config/schema.ts) so the two
 * cannot drift: `node dist/config/doc.js --write` rewrites the part between the markers,
 * and test/config.test.ts fails when the document differs from what this prints.
 */
export const CONFIGURATION_DOC: GeneratedSection = {
  file: join(projectRoot, 'docs', 'configuration.md'),
  begin: '<!-- generated from config/schema.ts by `node dist/config/doc.js --write`: edit the schema, not this table -->',
  end: '<!-- end of the generated table -->',
};

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

/** The generated part of docs/configuration.md's text, or undefined without the markers. */
export const generatedPart = (doc: string) => partOf(CONFIGURATION_DOC, doc);

if (isMain(import.meta.url)) writeOrPrint(CONFIGURATION_DOC, configurationTable());
