import type { JsonSchema } from '../../domain/validation.js';
import { DASHBOARD_MAX_DAYS } from '../../domain/panel/dashboard-range.js';
import { RESTRICTION_REASONS } from '../../domain/restrictions/restrictions.js';
import { dateFilterQuery } from './common.js';

/** GET /v1/private/dashboard (docs/panel.md, "Dashboard"): its range and its answer. */

export const dashboardQuery = {
  start_date: { ...dateFilterQuery.start_date, description: `Local date YYYY-MM-DD in tz (inclusive); default end_date minus 29 days. At most ${DASHBOARD_MAX_DAYS} days in all.` },
  end_date: { ...dateFilterQuery.end_date, description: 'Local date YYYY-MM-DD in tz (inclusive); default today in tz.' },
  tz: dateFilterQuery.tz,
} satisfies Record<string, JsonSchema>;

const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });

const FIGURES: Record<string, JsonSchema> = {
  sent: count('Mails accepted (received) that day, whatever became of them: the rows of GET /v1/activities/sent for that day.'),
  delivered: count('Of those, mails now at status 3 (sent to the recipient\'s MX): GET /v1/activities/sent with status=3.'),
  bounced: count('Of those, mails now at status 6 (bounced): GET /v1/activities/sent with status=6.'),
  bounced_hard: count('Bounced mails judged hard (the address was restricted at once).'),
  bounced_soft: count('Bounced mails judged soft (bounced minus bounced_hard).'),
  complained: count('Complaints recorded that day: the rows of GET /v1/mail-complaints for that day.'),
  opened: count('Open events that day: total_items of GET /v1/activities/opens for that day.'),
  opened_human: count('Opens not flagged as machine-made: total_items with exclude_machine=true.'),
  opened_machine: count('Opens flagged as machine-made (opened minus opened_human).'),
  clicked: count('Click events that day: total_items of GET /v1/activities/clicks for that day.'),
  clicked_human: count('Clicks not flagged as machine-made: total_items with exclude_machine=true.'),
  clicked_machine: count('Clicks flagged as machine-made (clicked minus clicked_human).'),
  delivered_opened: count(
    'Of the delivered mails (received that day), those opened at least once: GET /v1/activities/sent with status=3 and opened=opened. ' +
      'Over delivered: the open rate.',
  ),
  delivered_opened_human: count(
    'Of the delivered mails, those with at least one open not flagged as machine-made (their human_opens > 0). Over delivered: the human ' +
      'open rate, shown beside the raw one. A mail opened before human counts existed (human_opens null) is not counted here.',
  ),
  delivered_clicked: count('Of the delivered mails, those clicked at least once (clicks > 0). Over delivered: the click rate.'),
  delivered_clicked_human: count('Of the delivered mails, those with a click not flagged as machine-made (human_clicks > 0): the human click rate.'),
  restricted: count('Restrictions added that day (restricted_at), lifted since or not: rows of GET /v1/mail-restrictions.'),
};

const figures = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: [...Object.keys(extra), ...Object.keys(FIGURES)],
  properties: { ...extra, ...FIGURES },
});

export const dashboardSchema: JsonSchema = {
  type: 'object',
  required: ['start_date', 'end_date', 'tz', 'days', 'totals', 'bounce_reasons', 'restrictions'],
  properties: {
    start_date: { type: 'string', format: 'date', description: 'First local day of the range' },
    end_date: { type: 'string', format: 'date', description: 'Last local day of the range (inclusive)' },
    tz: { type: 'string', description: 'The zone of the days' },
    days: {
      type: 'array',
      description: 'Every local day of the range, oldest first (days without activity are zeros)',
      items: figures({ date: { type: 'string', format: 'date', description: 'The local day' } }),
    },
    totals: { ...figures(), description: 'The sums of the days' },
    bounce_reasons: {
      type: 'array',
      description:
        'The most frequent reasons of the mails counted in bounced (at most 10), most frequent first: the reason of each mail\'s ' +
        'latest move to bounced, in the bounce classifier\'s vocabulary (docs/bounces.md); null when it was recorded without one.',
      items: {
        type: 'object',
        required: ['reason', 'count'],
        properties: { reason: { type: ['string', 'null'] }, count: { type: 'integer', minimum: 1 } },
      },
    },
    restrictions: {
      type: 'array',
      description: 'The restrictions added in the range, per reason, most frequent first (reasons with none are left out).',
      items: {
        type: 'object',
        required: ['reason', 'count'],
        properties: { reason: { type: 'string', enum: [...RESTRICTION_REASONS] }, count: { type: 'integer', minimum: 1 } },
      },
    },
  },
};
