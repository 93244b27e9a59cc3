import { Piscina } from 'piscina';
import type { RenderLimits } from '../../../config/defaults.js';
import type { RenderedMail, RenderInput } from '../../../domain/mail/render.js';
import { RenderLimitExceeded } from '../../../engines/html/render-limit-exceeded.js';
import type { RenderOutcome, RenderTask } from './render-task.js';

/**
 * Renders one mail: resolves with its message, or rejects with RenderLimitExceeded (a render
 * bound; `ms` on it is the time spent on the mail) or another error.
 */
export interface MailRenderer {
  render(input: RenderInput, limits: RenderLimits): Promise<RenderedMail>;
  close(): Promise<void>;
}

/** A render bound reached, with the time the mail took before it was given up. */
export class RenderBoundReached extends RenderLimitExceeded {
  constructor(message: string, readonly ms: number) {
    super(message);
  }
}

/** How much lower than the event loop the render threads are scheduled (nice(2), 0 to 19), as the web dyno's template threads. */
const RENDER_THREAD_NICENESS = 10;

/**
 * The worker dyno's renderer: a mail's rendering (merge tags, the text part, every link signed
 * for tracking) is synchronous CPU work of up to RENDER_MAX_MS. On the event loop it held up
 * everything else of the process for that long at each step: a transaction of the event pump
 * awaiting its next statement stayed open (its row locks on the mails held) through a render of
 * 1 MB at every await, 13 s in all on a loaded CI machine, and SMTP replies and the inbound
 * listener waited. On RENDER_THREADS worker threads (piscina) the event loop only moves the mail
 * there and the message back.
 */
export function renderThreads(threads: number): MailRenderer {
  const pool = new Piscina<RenderTask, RenderOutcome>({
    filename: new URL('./render-thread.cjs', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    niceIncrement: RENDER_THREAD_NICENESS,
  });
  return {
    async render(input, limits) {
      return settled(await pool.run({ input, limits }));
    },
    async close() {
      await pool.destroy();
    },
  };
}

/** The thread's outcome as the caller's: the message (attachments as Buffers again: a thread hands them back as Uint8Arrays), or the error. */
function settled(outcome: RenderOutcome): RenderedMail {
  if (outcome.ok) {
    const rendered = outcome.rendered;
    return { ...rendered, attachments: rendered.attachments.map((a) => ({ ...a, content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength) })) };
  }
  const err = outcome.overBound ? new RenderBoundReached(outcome.message, outcome.ms) : new Error(outcome.message);
  if (outcome.stack) err.stack = outcome.stack;
  throw err;
}
