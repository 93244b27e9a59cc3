import type { Pool } from '../../sql/pool.js';
import { PREFETCH_SECONDS } from '../../domain/tracking/machine.js';
import { backdate, complainAbout, deliver, trackingLinks } from './delivered.js';
import type { TestTenant } from './fixtures.js';
import { jsonCall } from './http.js';
import { mailApi } from './send-stack.js';

/**
 * Mail to three mailbox providers, attributed by their recipients' domains (gmail.com,
 * yahoo.com, outlook.com: no MX lookup), for the tests of the per-provider figures in the panel:
 *
 *  - Gmail: 3 delivered; one opened by a person twice, one by a script (a machine-made open);
 *  - Yahoo: 4 delivered, one hard bounce, a complaint (an ARF report to the inbound listener)
 *    and an RFC 8058 one-click unsubscribe: both rates critical;
 *  - Outlook.com: 2 delivered, one soft bounce: both rates ok.
 *
 * Taken through the send worker's steps (test/helpers/delivered.ts); the caller runs the event
 * pump and waits for ClickHouse.
 */
export const PROVIDER_RECIPIENTS = [
  'ana@gmail.com', 'ben@gmail.com', 'cy@gmail.com',
  'dee@yahoo.com', 'eve@yahoo.com', 'fay@yahoo.com', 'complaint-gus@yahoo.com', 'bounce-hal@yahoo.com',
  'ida@outlook.com', 'jo@outlook.com', 'softbounce-kim@outlook.com',
];

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

export async function seedProviderActivity(opts: { url: string; publicUrl: string; pool: Pool; who: TestTenant; inboundPort: number; dkimKey?: string }): Promise<void> {
  const { url, publicUrl, pool, who } = opts;
  const send = await mailApi(url, who.headers).send({
    from: `news@${who.slug}.example`,
    to: PROVIDER_RECIPIENTS.map((email) => ({ email })),
    subject: 'Providers',
    html: '<p>Hi <a href="https://shop.example/a">A</a></p>',
  });
  if (send.status !== 202) throw new Error(`send: ${send.status} ${JSON.stringify(send.body)}`);
  const mails = send.body.mails as Array<{ mail_id: string; to: string }>;
  const ids = mails.map((m) => m.mail_id);
  const delivered = await deliver(who.tenant, pool, ids, { publicUrl, ...(opts.dkimKey ? { dkimKey: opts.dkimKey } : {}) });
  // Past the prefetch window, so the person's opens are not judged machine-made by their timing.
  await backdate(who.tenant, pool, ids, PREFETCH_SECONDS + 1);
  const of = (to: string) => delivered.get(mails.find((m) => m.to === to)!.mail_id)!;
  const local = (link: string) => url + link.slice(publicUrl.length);

  const ana = trackingLinks(of('ana@gmail.com').rendered).pixel;
  for (const ua of [BROWSER, BROWSER]) await (await fetch(local(ana), { headers: { 'user-agent': ua } })).body?.cancel();
  await (await fetch(local(trackingLinks(of('ben@gmail.com').rendered).pixel), { headers: { 'user-agent': 'python-requests/2.31' } })).body?.cancel();

  await complainAbout(opts.inboundPort, of('complaint-gus@yahoo.com'));
  const header = of('dee@yahoo.com').rendered!.headers.find((h) => h.key.toLowerCase() === 'list-unsubscribe')!.value;
  const link = header.match(/<(https?:[^>]+)>/)![1]!;
  const unsub = await fetch(local(link), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
  await unsub.body?.cancel();
  if (unsub.status !== 200) throw new Error(`unsubscribe: ${unsub.status}`);
}

/** Waits until the public figures show the whole activity (ClickHouse lags by about a second). */
export async function providerFiguresShipped(url: string, who: TestTenant): Promise<true | undefined> {
  const r = await jsonCall(url, 'GET', '/v1/deliverability/providers', undefined, who.headers);
  if (r.status !== 200) throw new Error(`providers: ${r.status} ${JSON.stringify(r.body)}`);
  const by = Object.fromEntries((r.body.data as Array<Record<string, number> & { provider: string }>).map((x) => [x.provider, x]));
  return by['gmail']?.['opened'] === 3 && by['yahoo']?.['complaints'] === 1 && by['yahoo']?.['unsubscribed'] === 1 && by['yahoo']?.['bounced_hard'] === 1 && by['microsoft']?.['bounced_soft'] === 1 ? true : undefined;
}
