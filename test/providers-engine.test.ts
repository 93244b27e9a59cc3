import t from 'tap';
import { isLookupWorthy, providerOfMx } from '../engines/providers/mx.js';
import { PROVIDER_IDS, PROVIDERS, providerOfDomain } from '../engines/providers/table.js';
import { complaintStatus, ratesOf, severity, statusOf } from '../engines/providers/thresholds.js';

/** The pure part of issue 40's attribution and thresholds (engines/providers/; docs/deliverability.md). */

t.test('consumer domains by name, country domains of a brand by shape, nothing else', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['gmail.com', 'gmail'], ['GoogleMail.com', 'gmail'], ['gmail.com.', 'gmail'],
    ['yahoo.com', 'yahoo'], ['yahoo.co.uk', 'yahoo'], ['yahoo.com.br', 'yahoo'], ['aol.com', 'yahoo'], ['ymail.com', 'yahoo'], ['verizon.net', 'yahoo'],
    ['outlook.com', 'microsoft'], ['hotmail.fr', 'microsoft'], ['live.co.uk', 'microsoft'], ['msn.com', 'microsoft'],
    ['icloud.com', 'apple'], ['me.com', 'apple'], ['web.de', 'gmx'], ['gmx.net', 'gmx'], ['mail.ru', 'mailru'], ['ya.ru', 'yandex'],
    ['proton.me', 'proton'], ['comcast.net', 'comcast'],
    // Look-alikes and subdomains are not the brand.
    ['yahoo.co.jp', undefined], ['hotmail.example.com', undefined], ['mail.gmail.com', undefined], ['gmail.co', undefined],
    ['notgmail.com', undefined], ['outlook.company.com', undefined], ['liveevents.com', undefined], ['acme.com', undefined],
  ];
  for (const [domain, provider] of cases) t.equal(providerOfDomain(domain), provider, domain);
});

t.test('every provider id is described once', async (t) => {
  t.strictSame(PROVIDERS.map((p) => p.id), [...PROVIDER_IDS].filter((id) => PROVIDERS.some((p) => p.id === id)));
  t.equal(new Set(PROVIDERS.map((p) => p.id)).size, PROVIDER_IDS.length);
  const domains = PROVIDERS.flatMap((p) => p.domains);
  t.equal(new Set(domains).size, domains.length, 'no domain under two providers');
});

t.test('by MX: the most preferred known host decides, on label boundaries', async (t) => {
  t.equal(providerOfMx(['aspmx.l.google.com', 'alt1.aspmx.l.google.com']), 'google_workspace');
  t.equal(providerOfMx(['SMTP.GOOGLE.COM.']), 'google_workspace');
  t.equal(providerOfMx(['acme-com.mail.protection.outlook.com']), 'microsoft_365');
  t.equal(providerOfMx(['acme-com.o-v1.mx.microsoft']), 'microsoft_365');
  t.equal(providerOfMx(['mx01.mail.icloud.com']), 'apple');
  t.equal(providerOfMx(['mx.zoho.eu']), 'zoho');
  t.equal(providerOfMx(['mail.protonmail.ch']), 'proton');
  t.equal(providerOfMx(['mx.acme.com', 'aspmx.l.google.com']), 'google_workspace', 'an unknown first host does not hide a known one');
  t.equal(providerOfMx(['mx.notgoogle.com', 'google.com.evil.example']), 'other', 'not on a label boundary');
  t.equal(providerOfMx([]), 'other');
});

t.test('reserved and special-use names are never looked up', async (t) => {
  for (const d of ['example.com', 'mail.example.org', 'x.test', 'a.example', 'b.invalid', 'localhost', 'host.local', 'corp.internal', 'x.home.arpa', 'abc.onion', 'a.alt', 'nodots', '[127.0.0.1]', '10.0.0.1', 'a::1']) {
    t.notOk(isLookupWorthy(d), d);
  }
  for (const d of ['acme.com', 'example.co', 'my-example.com', 'testing.io']) t.ok(isLookupWorthy(d), d);
});

t.test('rates, statuses and the thresholds Google and Yahoo publish', async (t) => {
  t.strictSame(ratesOf({ delivered: 1000, bounced_hard: 20, bounced_soft: 5, complaints: 1 }), { complaint_rate: 0.001, bounce_rate: 20 / 1025 });
  t.strictSame(ratesOf({ delivered: 0, bounced_hard: 0, bounced_soft: 0, complaints: 0 }), { complaint_rate: null, bounce_rate: null });
  t.equal(ratesOf({ delivered: 0, bounced_hard: 3, bounced_soft: 0, complaints: 0 }).bounce_rate, 1, 'all bounced');
  t.equal(statusOf('complaint_rate', 0.000999), 'ok');
  t.equal(statusOf('complaint_rate', 0.001), 'warning');
  t.equal(statusOf('complaint_rate', 0.002999), 'warning');
  t.equal(statusOf('complaint_rate', 0.003), 'critical');
  t.equal(statusOf('bounce_rate', 0.0199), 'ok');
  t.equal(statusOf('bounce_rate', 0.02), 'warning');
  t.equal(statusOf('bounce_rate', 0.05), 'critical');
  t.equal(statusOf('bounce_rate', null), 'no_data');
  t.equal(complaintStatus('gmail', 0, 0), 'no_data', "Gmail's 0 is unknown");
  t.equal(complaintStatus('google_workspace', 0, 0), 'no_data');
  t.equal(complaintStatus('gmail', 2, 0.004), 'critical', 'a complaint that arrived still counts');
  t.equal(complaintStatus('yahoo', 0, 0), 'ok');
  t.ok(severity('critical') > severity('warning') && severity('warning') > severity('ok') && severity('ok') === severity('no_data'));
});
