import type { GroupBy } from './filters.js';

/**
 * What sets opens and clicks apart in their listings: the event type, the names of some columns
 * and the clicks' link columns (opens.ts and clicks.ts each hold one). Its own module because the
 * builder (events.ts) and each query shape it picks from (event-rows.ts, events-by-mail.ts,
 * events-by-message.ts, grouped.ts) read it, and the builder imports the shapes.
 */
export interface EventKind {
  type: 'open' | 'click';
  /** The name of each query, for logs and ClickHouse's query log (log_comment). */
  queries: Record<GroupBy | 'count', string>;
  /** The spec's names of the columns that say which kind of event (spec: Open rows, Click rows). */
  columns: {
    /** group_by=none: the event's time. */
    at: string;
    /** Grouped: the group's events, its first and last event, its distinct recipients. */
    count: string;
    first: string;
    last: string;
    recipients: string;
    /** Grouped: the group's events not flagged machine-made, and its recipients with one (Cartero's additions). */
    humanCount: string;
    humanRecipients: string;
  };
  /** Clicks carry a link: url_redirect per event, links_clicked per group. */
  links: boolean;
}
