import type { RenderOutcome, RenderTask } from './render-task.js';

/*
 * The file the send worker's render threads load (render-threads.ts), CommonJS for the reason
 * domain/templates/render-thread.cts gives: the ES module is loaded by import(), asynchronously,
 * so a thread ended while it loads just ends, and piscina waits for the handler before it hands
 * the thread a mail.
 */
const handler: Promise<(task: RenderTask) => RenderOutcome> = import('./render-task.js').then((m) => m.default);
export default handler;
