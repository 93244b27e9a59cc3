import * as api from './api.js';
import { field, h, select } from './dom.js';
import { count, pagedTable, pager, type Listing, type Paged } from './kit.js';
import type { Context } from './context.js';

/**
 * A webhook's deliveries on its page: every attempt, newest first, 50 a page (outcome, answer,
 * timing, the start of the response), of every outcome or of one, and for an admin or owner a
 * Retry per delivery and the replay of a time range. Deliveries happen in the worker a moment
 * after they are asked for, so after an action the table follows them for a while (and Refresh
 * reads them again at any time).
 */

let followNext = false;
/** The next drawing of the deliveries follows them for a while (after a test event is queued). */
export function followDeliveries(): void {
  followNext = true;
}

const FOLLOW_EVERY_MS = 1500;
const FOLLOW_TIMES = 12;
const EXCERPT = 160;

/** Date and time to the second: attempts a second apart are told apart. */
const at = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The outcome each webhook's table shows ('' for every one), kept while the panel is open, as its page is. */
const outcomes = new Map<string, Outcome>();
type Outcome = api.Attempt['status'] | '';
const OUTCOMES: Array<[Outcome, string]> = [
  ['', 'every outcome'],
  ['succeeded', 'succeeded'],
  ['failed', 'failed'],
  ['pending', 'pending (in flight)'],
];

export async function deliveriesSection(ctx: Context, w: api.Webhook, admin: boolean): Promise<Node[]> {
  const slug = ctx.current.slug;
  const title = h('h2', { id: 'deliveries' }, 'Deliveries');
  const error = h('p', { class: 'error', role: 'alert' });
  const where = `${slug}/${w.id}`;

  const retry = async (button: HTMLButtonElement, a: api.Attempt) => {
    error.textContent = '';
    button.disabled = true;
    try {
      await api.retryDelivery(slug, w.id, a.delivery_id);
      ctx.announce(`The ${a.event_type} event (${a.event_id}) is sent again now, as a new delivery.`);
      follow();
    } catch (err) {
      // 409 webhook_inactive while paused: the API's words say to resume it first.
      error.textContent = (err as Error).message;
    } finally {
      button.disabled = false;
    }
  };

  const row = (a: api.Attempt, i: number, rows: api.Attempt[]) => {
    // One Retry per delivery, on its newest attempt of the page.
    const first = rows.findIndex((x) => x.delivery_id === a.delivery_id) === i;
    const result = a.status_code !== null ? `HTTP ${a.status_code}` : a.error ?? (a.status === 'pending' ? 'in flight' : 'no answer');
    const excerpt = a.response_body ? (a.response_body.length > EXCERPT ? `${a.response_body.slice(0, EXCERPT)}…` : a.response_body) : '—';
    const cells = [
      h('td', {}, at(a.attempted_at)),
      h('td', {}, a.event_type, h('br'), h('small', {}, h('code', {}, a.event_id))),
      h('td', {}, String(a.attempt)),
      h('td', {}, h('span', { class: `state ${a.status === 'succeeded' ? 'approved' : a.status}` }, a.status), ` ${result}`),
      h('td', {}, a.duration_ms === null ? '—' : `${a.duration_ms} ms`),
      h('td', {}, h('code', { class: 'record' }, excerpt)),
      h('td', {}, a.delivery_status),
    ];
    if (admin) {
      const button = first
        ? h('button', { type: 'button', class: 'secondary', id: `retry-${a.delivery_id}`, 'aria-label': `Retry delivery ${a.delivery_id} (${a.event_type})` }, 'Retry')
        : null;
      button?.addEventListener('click', () => void retry(button, a));
      cells.push(h('td', {}, button));
    }
    return h('tr', {}, ...cells);
  };
  /** The attempts of one outcome ('' every one), 50 a page, newest first; its page kept per webhook and outcome. */
  const listing = (outcome: Outcome): Listing<api.Attempt> => ({
    id: 'deliveries',
    keep: `deliveries-${w.id}-${outcome}`,
    noun: [outcome ? `${outcome} attempt` : 'attempt'],
    columns: ['Attempted', 'Event', 'Attempt', 'Result', 'Duration', 'Response (start)', 'Delivery', ...(admin ? ['Actions'] : [])],
    pageSize: api.DELIVERIES_PAGE_SIZE,
    read: (n) => api.deliveries(slug, w.id, n, outcome || undefined),
    row,
  });

  let outcome: Outcome = outcomes.get(where) ?? '';
  let listed: Paged<api.Attempt>;
  try {
    listed = await pagedTable(ctx, listing(outcome));
  } catch (err) {
    return [title, h('p', { class: 'error', role: 'alert' }, (err as Error).message)];
  }

  let following: ReturnType<typeof setInterval> | undefined;
  const follow = () => {
    clearInterval(following);
    let n = 0;
    following = setInterval(() => {
      // Another page, or long enough: stop.
      if (!listed.node.isConnected || ++n > FOLLOW_TIMES) return clearInterval(following);
      listed.reload().catch(() => clearInterval(following));
    }, FOLLOW_EVERY_MS);
  };
  if (followNext) follow();
  followNext = false;

  // The outcome filter: the first page of the attempts with that outcome, drawn in place.
  const chooser = select('deliveries-status', OUTCOMES, outcome, { id: 'deliveries-status' });
  let asked = 0;
  chooser.addEventListener('change', async () => {
    const mine = ++asked;
    const chosen = chooser.value as Outcome;
    error.textContent = '';
    try {
      const o = listing(chosen);
      const fresh = pager(ctx, o, await o.read(1), 1);
      if (mine !== asked) return;
      listed.node.replaceWith(fresh.node);
      listed = fresh;
      outcome = chosen;
      outcomes.set(where, chosen);
      ctx.announce(`Deliveries with ${chosen ? `the outcome ${chosen}` : 'every outcome'}: ${fresh.caption()}.`);
    } catch (err) {
      if (mine === asked) error.textContent = (err as Error).message;
    }
  });
  const refresh = h('button', { type: 'button', class: 'secondary', id: 'deliveries-refresh' }, 'Refresh deliveries');
  refresh.addEventListener('click', async () => {
    error.textContent = '';
    try {
      ctx.announce(`Deliveries read again: ${await listed.reload()}.`);
    } catch (err) {
      error.textContent = (err as Error).message;
    }
  });
  const about = h(
    'p',
    { class: 'help' },
    'Every attempt, newest first: a delivery is one event sent to this webhook, retried on failure. The response is the start of what the receiver answered. Kept for the configured retention (WEBHOOK_RETENTION_DAYS).',
  );
  const controls = h('div', { class: 'actions filters' }, field('Outcome', chooser), refresh);
  const nodes: Node[] = [title, about, error, controls, listed.node];
  if (admin) nodes.push(...replayForm(w, async (range, button) => {
    error.textContent = '';
    button.disabled = true;
    try {
      const { queued } = await api.replayWebhook(slug, w.id, range);
      ctx.announce(queued ? `${count(queued, 'event')} queued to be sent again, in order.` : 'No event of that range to send again.');
      if (queued) follow();
    } catch (err) {
      error.textContent = (err as Error).message;
    } finally {
      button.disabled = false;
    }
  }));
  return nodes;
}

function replayForm(w: api.Webhook, replay: (range: { since: string; until?: string }, button: HTMLButtonElement) => void): Node[] {
  const since = h('input', { type: 'datetime-local', name: 'since', required: true, step: '1' });
  const until = h('input', { type: 'datetime-local', name: 'until', step: '1' });
  const button = h('button', { type: 'submit', class: 'secondary' }, 'Replay events');
  const form = h('form', { class: 'inline', 'aria-labelledby': 'replay-range' }, field('From (your local time)', since), field('Until (optional, default now)', until), button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // datetime-local is the browser's local time: Date reads it so, and the API gets UTC.
    const range: { since: string; until?: string } = { since: new Date(since.value).toISOString() };
    if (until.value) range.until = new Date(until.value).toISOString();
    replay(range, button);
  });
  return [
    h('h2', { id: 'replay-range' }, 'Replay a time range'),
    h(
      'p',
      { class: 'help' },
      `Every event of the range that ${w.name} subscribes to is sent again, in order, each with the webhook-id it had, so a receiver that has it already can tell (test events are not replayed). ` +
        'For a receiver that was down or a webhook that was paused; a paused webhook must be resumed first.',
    ),
    form,
  ];
}
