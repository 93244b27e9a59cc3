import { CLICKS, clicksQuery } from '../../analytics/activities/clicks.js';
import type { EventKind } from '../../analytics/activities/event-kind.js';
import { eventColumns } from '../../analytics/activities/events.js';
import type { EventActivityFilter } from '../../analytics/activities/filters.js';
import { OPENS, opensCsvColumns, opensQuery } from '../../analytics/activities/opens.js';
import { SENT_COLUMNS, sentQuery, type SentActivityFilter } from '../../analytics/activities/sent.js';
import { unopenedQuery, type UnopenedFilter } from '../../analytics/activities/unopened.js';
import { EXPORT_FORMATS, streamExport, type ExportFormat } from '../../analytics/export/stream.js';
import { defineRoute } from '../http/route.js';
import type { RouteContext } from '../http/route.js';
import type { RouteNaming } from './reads.js';
import { eventActivityQuerySchema, unopenedQuerySchema } from '../schemas/activities.js';
import { sentFilterQuery } from '../schemas/mails.js';
import type { JsonSchema } from '../../domain/validation.js';
import type { ActivityQuery, ResultColumn } from '../../analytics/activities/query.js';
import { TAGS } from './tags.js';

/**
 * The four activity exports (spec: GET /v1/activities/opens/export; the sent, clicks and unopened
 * exports are named by it without their shapes). Each takes its listing's query without
 * pagination, plus `format`, and streams the listing's whole result (analytics/export/stream.ts).
 */

type Exported<F> = F & { format: ExportFormat };

/** A listing's query parameters without page/page_size, plus format (and `extra`). */
function exportQuery(listing: Record<string, JsonSchema>, extra: Record<string, JsonSchema> = {}): Record<string, JsonSchema> {
  const { page: _page, page_size: _pageSize, ...filters } = listing;
  return {
    ...filters,
    ...extra,
    format: {
      type: 'string',
      enum: [...EXPORT_FORMATS],
      default: 'csv',
      description: 'csv: UTF-8 BOM, header row, formula-guarded text cells (docs/analytics.md, Exports); json: an array of the listing rows, values unchanged.',
    },
  };
}

/** An export's choice of Cartero's additions about machine-made events (`what`: which they are). */
const includeMachine = (what: string): Record<string, JsonSchema> => ({
  include_machine: {
    type: 'boolean',
    default: false,
    description:
      `true: after the spec's columns (CSV) or fields (JSON), Cartero's additions about machine-made events: ${what} (docs/tracking.md). ` +
      "Default false: exactly the spec's columns.",
  },
});
const EVENT_ADDITIONS = 'machine with group_by=none, the human counts when grouped';

/** An export's columns: the spec's (`spec`, else the rows' own without Cartero's machine-made additions), then those additions if asked for. */
function exportColumns(all: readonly ResultColumn[], include: boolean | undefined, spec?: readonly string[]): string[] {
  const base = spec ?? all.filter((c) => !c.machine).map((c) => c.name);
  return include ? [...base, ...all.filter((c) => c.machine).map((c) => c.name)] : [...base];
}

type EventExport = Exported<EventActivityFilter> & { include_machine?: boolean };

/** An opens or clicks export's columns (`spec`: the CSV's, where they are not the rows' fields). */
const eventExportColumns = (k: EventKind, query: EventExport, spec?: readonly string[]): string[] =>
  exportColumns(eventColumns(k, query.group_by ?? 'none'), query.include_machine, spec);

const success = {
  status: 200,
  description:
    'Streamed (chunked) attachment. format=csv: text/csv; charset=utf-8, starting with a UTF-8 BOM and a header row. ' +
    'format=json: application/json; charset=utf-8, one array of the listing rows.',
  contentType: 'text/csv',
  schema: { type: 'string' },
  alternatives: { 'application/json': { type: 'array', items: { type: 'object' }, description: 'format=json: the listing rows' } },
};

const STREAMING =
  'No pagination: the whole range, streamed as ClickHouse produces it; a client that disconnects stops the query. ' +
  'An error after the first byte cuts the connection (the download never ends properly), never an error text in the file.';

/** One export: its listing's query and rows (build, and the CSV columns where they are not the rows' fields), streamed as basename.csv or .json. */
function exportRoute<F>(route: RouteNaming & {
  /** The listing's query parameters (exportQuery drops its pagination and adds format). */
  listing: Record<string, JsonSchema>;
  /** Query parameters of the export only. */
  extra?: Record<string, JsonSchema>;
  basename: string;
  build: (ctx: RouteContext<Exported<F>, unknown, unknown>) => ActivityQuery;
  columns?: (query: Exported<F>) => readonly string[] | undefined;
}) {
  const { listing, extra, basename, build, columns, ...shape } = route;
  return defineRoute<Exported<F>>({
    method: 'get',
    ...shape,
    tag: TAGS.activities,
    auth: { kind: 'api_key', scope: 'mail:read' },
    query: exportQuery(listing, extra),
    success,
    handler: async (ctx, res) => {
      await streamExport(ctx.deps.clickhouseExports, build(ctx), res, {
        format: ctx.query.format,
        basename,
        requestId: ctx.requestId,
        logger: ctx.deps.logger,
        columns: columns?.(ctx.query),
        firstByteMs: ctx.deps.config.clickhouseRequestTimeoutMs,
      });
      return undefined;
    },
  });
}

export const activityExportRoutes = [
  exportRoute<SentActivityFilter & { include_machine?: boolean }>({
    path: '/v1/activities/sent/export',
    operationId: 'exportSentActivity',
    summary: 'Export sent mails (CSV or JSON)',
    description:
      `The rows of GET /v1/activities/sent for the same filters, with the spec's Mail fields in its order; include_machine=true appends ` +
      `human_opens and human_clicks. ${STREAMING}`,
    listing: sentFilterQuery,
    extra: includeMachine('human_opens and human_clicks'),
    basename: 'sent',
    build: ({ tenant, query }) => sentQuery(tenant, query),
    columns: (query) => exportColumns(SENT_COLUMNS, query.include_machine),
  }),
  exportRoute<EventActivityFilter & { include_machine?: boolean }>({
    path: '/v1/activities/opens/export',
    operationId: 'exportOpens',
    summary: 'Export opens, per open, per recipient or per message (CSV or JSON)',
    description:
      `CSV columns by group_by are the spec's: ${(['none', 'mail_id', 'msg_id'] as const).map((g) => `${g}: ${opensCsvColumns(g).join(', ')}`).join('; ')}. ` +
      `JSON: the rows of GET /v1/activities/opens. include_machine=true appends machine or the human counts. ${STREAMING}`,
    listing: eventActivityQuerySchema,
    extra: includeMachine(EVENT_ADDITIONS),
    basename: 'opens',
    build: ({ tenant, query }) => opensQuery(tenant, query),
    columns: (query) => eventExportColumns(OPENS, query, query.format === 'csv' ? opensCsvColumns(query.group_by ?? 'none') : undefined),
  }),
  exportRoute<EventActivityFilter & { include_machine?: boolean }>({
    path: '/v1/activities/clicks/export',
    operationId: 'exportClicks',
    summary: 'Export clicks, per click, per recipient or per message (CSV or JSON)',
    description:
      `The rows of GET /v1/activities/clicks for the same filters and group_by, with the spec's fields in its order; include_machine=true ` +
      `appends machine or the human counts. ${STREAMING}`,
    listing: eventActivityQuerySchema,
    extra: includeMachine(EVENT_ADDITIONS),
    basename: 'clicks',
    build: ({ tenant, query }) => clicksQuery(tenant, query),
    columns: (query) => eventExportColumns(CLICKS, query),
  }),
  exportRoute<UnopenedFilter>({
    path: '/v1/activities/unopened/export',
    operationId: 'exportUnopened',
    summary: 'Export delivered mails with no recorded open (CSV or JSON)',
    description: `The rows of GET /v1/activities/unopened for the same filters, with its fields in its order. ${STREAMING}`,
    listing: unopenedQuerySchema,
    basename: 'unopened',
    build: ({ tenant, query }) => unopenedQuery(tenant, query),
  }),
];
