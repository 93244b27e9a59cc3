import { readFileSync } from 'node:fs';
import t from 'tap';
import { generatedPart } from '../config/generated-section.js';
import { PANEL_WIRE_TYPES, panelWireTypes, typeOf } from '../api/panel-wire-types.js';

/**
 * The panel's wire types (web/panel/wire.ts) are printed from the route declarations: the file
 * in the tree is what the printer makes of today's declarations, so a route whose answer or body
 * changes changes the panel's types with it (and the panel's build says where they no longer fit).
 */
t.test('web/panel/wire.ts is current', async (t) => {
  const file = readFileSync(PANEL_WIRE_TYPES.file, 'utf8');
  t.equal(generatedPart(PANEL_WIRE_TYPES, file), panelWireTypes(), 'the generated types are current: run node dist/api/panel-wire-types.js --write');
});

t.test('a shape printed once is named where it recurs', async (t) => {
  const text = panelWireTypes();
  // The read, the verification and the rotation of a domain answer what its creation answers.
  t.match(text, /\n  getPanelDomain: Answers\["addPanelDomain"\];\n/);
  // Every listing's pagination is the first listing's.
  t.match(text, /\n    pagination: Answers\["listPanelSenders"\]\["pagination"\];\n/);
  t.notMatch(text, /Answers\["[^"]+"\]\["[^"]+"\]\?/, 'never named from under an optional property');
  // A member of a union, which no spot names, is named by where the file prints it, even later.
  t.match(text, /\n    data: Array<Answers\["updatePanelMember"\] \| Answers\["invitePanelMember"\]>;\n/);
  // An object mostly like one printed before is that one, without what differs, with the rest.
  t.match(text, /\n  createPanelSender: Omit<Answers\["listPanelSenders"\]\["data"\]\[number\], "is_sandbox"> & \{\n/);
  t.match(text, /\n  createPanelDataset: Answers\["panelListDatasets"\]\["data"\]\[number\] & \{\n/);
  t.match(text, /\n    totals: Omit<Answers\["getPanelDashboard"\]\["days"\]\[number\], "date">;\n/);
});

t.test('the printer reads the JSON Schema the declarations use', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ type: 'string', format: 'date-time' }, 'string'],
    [{ type: ['integer', 'null'] }, 'number | null'],
    [{ type: 'string', enum: ['hard', 'soft', null] }, '"hard" | "soft" | null'],
    [{ const: 'member' }, '"member"'],
    [{ type: 'array', items: { type: 'integer' } }, 'number[]'],
    [{ type: 'object' }, 'Record<string, unknown>'],
    [{ type: 'object', additionalProperties: { type: 'string' } }, 'Record<string, string>'],
    [{ type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'boolean' }, b: { type: 'string', description: 'Why */ not' } } }, '{\n  a: boolean;\n  /** Why *\\/ not */\n  b?: string;\n}'],
    [{ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }, 'string | string[]'],
    [{}, 'unknown'],
  ];
  for (const [schema, type] of cases) t.equal(typeOf(schema), type, JSON.stringify(schema));
});
