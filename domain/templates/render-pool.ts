import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError } from '../errors.js';
import { checkHtmlEstimate } from '../../engines/beefree/check/html-estimate.js';
import { checkMeta } from '../../engines/beefree/check/index.js';
import { finding } from '../../engines/beefree/check/finding.js';
import { processDocument, type ProcessedDocument } from '../../engines/beefree/document.js';
import type { RenderTask } from './render-worker.js';

/** What create, PATCH and validate hand a document to: processDocument, here or elsewhere. */
export interface DocumentProcessor {
  process(config: unknown, meta: { subject: string | null; preheader: string | null }): Promise<ProcessedDocument>;
  close(): Promise<void>;
}

/** On the caller's thread: for the CLI (its own process, one document at a time) and tests. */
export const inProcess: DocumentProcessor = {
  process: (config, meta) => processDocument(config ?? null, meta),
  close: async () => {},
};

/** How much lower than the event loop the render threads are scheduled (nice(2), 0 to 19). */
const RENDER_THREAD_NICENESS = 10;

export interface RenderPoolOptions {
  threads: number;
  timeoutMs: number;
  /** Documents that may wait for a thread; default QUEUED_PER_THREAD per thread. */
  maxQueued?: number;
}

/**
 * Waiting documents per thread before a new one is turned away (503 service_unavailable with
 * Retry-After). Each waits with its whole document in memory (up to the body limit), so an
 * unbounded queue lets a burst of large documents grow the dyno without end; 32 per thread is
 * far more than an editor's saves need, since a document takes a tenth of a second or so.
 */
export const QUEUED_PER_THREAD = 32;

/**
 * The web dyno's document processor: checking and rendering a document is synchronous CPU work
 * (MJML, the checks) of up to seconds, which on the event loop would stall every request of
 * every tenant (/healthz waited 13.7 s behind four large documents). So it runs on a pool of
 * worker threads (piscina), `threads` of them, and the event loop only moves the document there
 * and the result back. The HTML estimate (engines/beefree/check/html-estimate.ts) runs here
 * first: a document that cannot fit is refused without occupying a thread.
 *
 * Each document has `timeoutMs` from the moment a thread starts on it (the wait in the queue is
 * not counted: a busy pool does not fail documents that would render in time). Past it the
 * task is aborted, which makes piscina terminate that thread (a synchronous render cannot be
 * interrupted any other way) and start a fresh one, and the document gets a render_timeout
 * error (422 template_render_timeout). `close()` ends the threads when the dyno stops.
 */
export interface RenderPool extends DocumentProcessor {
  /** Documents a thread has finished with (rendered, refused or timed out). */
  completed(): number;
  /** Documents a thread is on right now. */
  running(): number;
}

export function renderPool(options: RenderPoolOptions): RenderPool {
  const pool = new Piscina<RenderTask, ProcessedDocument>({
    filename: new URL('./render-thread.cjs', import.meta.url).href,
    minThreads: options.threads,
    maxThreads: options.threads,
    // Never idle out: a thread's first document pays for loading MJML.
    idleTimeout: Number.MAX_SAFE_INTEGER,
    // Below the event loop's priority (nice(2) on the thread, through @napi-rs/nice): on a busy
    // core the dyno answers requests first and renders with what is left.
    niceIncrement: RENDER_THREAD_NICENESS,
  });
  const maxQueued = options.maxQueued ?? options.threads * QUEUED_PER_THREAD;
  let completed = 0;
  let running = 0;
  let admitted = 0;
  return {
    async process(config, meta) {
      if (config !== null && config !== undefined) {
        const tooLarge = checkHtmlEstimate(config);
        if (tooLarge.length > 0) return { errors: tooLarge, findings: checkMeta(meta), html: null, text: null, checkFailures: [] };
      }
      // Counted here, not by piscina's queueSize, which leaves out tasks that carry an abort
      // signal (ours all do: the timeout). One document per thread is on it; the rest wait.
      if (admitted >= options.threads + maxQueued) {
        throw new AppError('service_unavailable', `template rendering is busy (${admitted - options.threads} documents wait for a thread); retry shortly`, {}, { 'Retry-After': '2' });
      }
      admitted++;
      const abort = new AbortController();
      const { port1, port2 } = new MessageChannel();
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      // The two ports are not ordered with each other: a result may come before the start.
      port1.once('message', () => {
        if (done) return;
        running++;
        timer = setTimeout(() => abort.abort(), options.timeoutMs);
      });
      try {
        return await pool.run({ config: config ?? null, meta, started: port2 }, { signal: abort.signal, transferList: [port2] as never });
      } catch (err) {
        if (!abort.signal.aborted) throw err;
        return {
          errors: [
            finding('render_timeout', '', null, `rendering the document took longer than ${options.timeoutMs} ms, the maximum; simplify it`, {
              timeout_ms: options.timeoutMs,
            }),
          ],
          findings: checkMeta(meta),
          html: null,
          text: null,
          checkFailures: [],
        };
      } finally {
        admitted--;
        done = true;
        if (timer) {
          clearTimeout(timer);
          running--;
        }
        completed++;
        port1.close();
      }
    },
    async close() {
      await pool.destroy();
    },
    completed: () => completed,
    running: () => running,
  };
}
