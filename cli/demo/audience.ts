/**
 * The campaign's 50 recipients, at the mailbox simulator's addresses (smtp/simulator.ts matches
 * the local part's prefix): readers who receive it, and the addresses that bounce, defer,
 * complain and are delivered only on a retry.
 */

export const CAMPAIGN = 'november-roasts';
const DOMAIN = 'example.net';

export interface Recipient {
  email: string;
  first_name: string;
  /** What the simulator does with it. */
  kind: 'reader' | 'bounce' | 'softbounce' | 'complaint' | 'defer';
}

const READERS = [
  'Ana García', 'Liam Walsh', 'Sofía Romero', 'Noah Becker', 'Emma Rossi', 'Mateo López', 'Olivia Brown', 'Lucas Martin',
  'Mia Schneider', 'Hugo Dubois', 'Isabella Conti', 'Ethan Clarke', 'Valentina Ruiz', 'Oscar Nilsson', 'Chloé Bernard', 'Jonas Weber',
  'Amelia Hughes', 'Leo Moreau', 'Martina Gómez', 'Finn Jansen', 'Ava Murphy', 'Pablo Navarro', 'Zoe Fischer', 'Samuel Costa',
  'Nora Lindqvist', 'Gabriel Silva', 'Elena Petrova', 'Adam Novak', 'Julia Kowalska', 'Tomás Herrera', 'Grace Kim', 'Marco Bianchi',
  'Alice Laurent', 'Diego Castro', 'Hannah Vogel', 'Iván Morales',
];

/** Lower-case ASCII for an address: accents dropped. */
const ascii = (text: string) => text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();

export function campaignRecipients(): Recipient[] {
  const readers = READERS.map((name): Recipient => {
    const [first, last] = name.split(' ') as [string, string];
    return { email: `${ascii(first)}.${ascii(last)}@${DOMAIN}`, first_name: first, kind: 'reader' };
  });
  const simulated = (kind: Exclude<Recipient['kind'], 'reader'>, names: string[]) =>
    names.map((first, i): Recipient => ({ email: `${kind}+${i + 1}@${DOMAIN}`, first_name: first, kind }));
  return [
    ...readers,
    ...simulated('bounce', ['Pat', 'Robin', 'Sam', 'Alex']),
    ...simulated('softbounce', ['Kim', 'Lee', 'Jo', 'Max']),
    ...simulated('complaint', ['Chris', 'Dana', 'Eli']),
    ...simulated('defer', ['Frankie', 'Jamie', 'Quinn']),
  ];
}
