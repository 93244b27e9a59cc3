import { join } from 'node:path';
import { PROCESS_NEEDS } from './needs.js';
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
    '',
    '<a id="what-each-process-needs"></a>**What each process needs** (config/needs.ts). A Procfile process started without one of',
    'these exits at once with code 2, before it connects or listens, printing one line that names every missing',
    'variable and why (`npm start` sets them all for its dynos):',
    '',
    '| process | variable | why |',
    '|---|---|---|',
    ...Object.entries(PROCESS_NEEDS).flatMap(([process, needs]) => needs.map((n) => `| \`${process}\` | \`${n.name}\` | ${cell(n.why)} |`)),
  ].join('\n');
}

/** The generated part of docs/configuration.md's text, or undefined without the markers. */
export const generatedPart = (doc: string) => partOf(CONFIGURATION_DOC, doc);

if (isMain(import.meta.url)) writeOrPrint(CONFIGURATION_DOC, configurationTable());
