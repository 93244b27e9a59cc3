import type * as api from './api.js';

/** What every page of the signed-in panel gets from the shell (main.ts). */
export interface Context {
  user: api.User;
  instances: api.Instance[];
  /** The instance the pages work on (the switcher's). */
  current: api.Instance;
  /** Shows a short message in the live region (screen readers announce it). */
  announce(message: string): void;
  /** Makes `slug` the current instance (as the switcher does) and draws the page again. */
  switchTo(slug: string): void;
  /**
   * Draws the current page again (after a change); resolves once it is drawn, so a change's
   * message is announced with the page that shows it (a newer draw started meanwhile wins).
   */
  refresh(): Promise<void>;
  /**
   * Draws the whole shell again with the user's instances as they are now (after accepting an
   * invitation or leaving an instance), on `slug` when it is one of them, announcing `message`.
   */
  reload(message: string, slug?: string): Promise<void>;
}
