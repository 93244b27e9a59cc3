import t from 'tap';
import { PROVIDERS } from '../engines/providers/table.js';
import { STATUSES, THRESHOLDS } from '../engines/providers/thresholds.js';
import { PROVIDER_LABELS, STATUS_TEXT, THRESHOLDS as PANEL_THRESHOLDS } from '../web/panel/providers.js';

/**
 * The panel's browser code imports nothing of the server's (test/layers.test.ts), so the
 * dashboard's provider names and thresholds are written again in web/panel/providers.ts: this
 * holds them equal to the server's, so a threshold moved there moves the lines the charts draw.
 */
t.test("the panel's thresholds are the server's", async (t) => {
  t.strictSame(PANEL_THRESHOLDS, THRESHOLDS);
});

t.test("the panel names every provider as the server's table does", async (t) => {
  t.strictSame(PROVIDER_LABELS, Object.fromEntries(PROVIDERS.map((p) => [p.id, p.label])));
});

t.test('the panel says every status', async (t) => {
  t.strictSame(Object.keys(STATUS_TEXT).sort(), [...STATUSES].sort());
});
