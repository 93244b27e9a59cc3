import type { MessagePort } from 'node:worker_threads';
import { processDocument, type ProcessedDocument } from '../../engines/beefree/document.js';

/** One document for a thread of the render pool (render-pool.ts). */
export interface RenderTask {
  config: unknown;
  meta: { subject: string | null; preheader: string | null };
  /** Told when the thread starts on the task: the time limit counts from then, not from the queue. */
  started: MessagePort;
}

/** Piscina's entry point: check and render one document on this worker thread. */
export default async function renderTask(task: RenderTask): Promise<ProcessedDocument> {
  task.started.postMessage('started');
  task.started.close();
  return processDocument(task.config, task.meta);
}
