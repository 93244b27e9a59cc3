import type { RenderLimits } from '../../../config/defaults.js';
import { renderMail, type RenderedMail, type RenderInput } from '../../../domain/mail/render.js';
import { RenderLimitExceeded } from '../../../engines/html/render-limit-exceeded.js';

/** One mail for a render thread (render-threads.ts). */
export interface RenderTask {
  input: RenderInput;
  limits: RenderLimits;
}

/**
 * What comes back from the thread. An error does not cross a thread as its class (it arrives as
 * a plain Error), so a failure says whether it was a render bound, and how long the thread
 * worked on the mail (the wait for a thread is not the mail's cost).
 */
export type RenderOutcome =
  | { ok: true; rendered: RenderedMail }
  | { ok: false; overBound: boolean; message: string; stack: string | undefined; ms: number };

/** Piscina's entry point (through render-thread.cts): one mail rendered on this thread. */
export default function renderTask(task: RenderTask): RenderOutcome {
  const started = performance.now();
  try {
    return { ok: true, rendered: renderMail(task.input, task.limits) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    return { ok: false, overBound: err instanceof RenderLimitExceeded, message: e.message, stack: e.stack, ms: performance.now() - started };
  }
}
