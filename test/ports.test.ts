import t from 'tap';
import { freePort, preferredPort } from '../config/ports.js';

/**
 * The ports `npm start` picks for its services and dynos (runtime/start.ts): a recorded port is
 * reused while free, and no two picks of one process are the same port. A probed port is released
 * at once, so the OS may hand it out again; two dynos then tried to bind one port (CI: the web's
 * internal port was the worker's inbound SMTP port).
 */
t.test('a recorded free port is reused, unless this process already picked it', async (t) => {
  const recorded = await freePort();
  const taken = new Set<number>();
  t.equal(await preferredPort(recorded, taken), recorded);
  t.ok(taken.has(recorded), 'the pick is remembered');
  const again = await preferredPort(recorded, taken);
  t.not(again, recorded, 'picked once already: another port');
  t.ok(taken.has(again));
});

t.test('many picks of one process are all different', async (t) => {
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < 50; i++) ports.push(await preferredPort(undefined, taken));
  t.equal(new Set(ports).size, 50);
});
