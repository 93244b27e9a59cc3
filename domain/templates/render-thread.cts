import type { RenderTask } from './render-worker.js';
import type { ProcessedDocument } from './document.js';

/*
 * The file the render pool's threads load (domain/templates/render-pool.ts), CommonJS on purpose.
 * piscina loads a task file with require() first, and on Node 20 require() of an ES module
 * (render-worker.js and MJML behind it) instantiates the whole graph synchronously; a thread
 * terminated in the middle of that (a web dyno stopped while its threads still load MJML, which
 * takes seconds on a loaded machine) aborted the whole process with a V8 fatal error
 * ("IsGraphAsync must be used on an instantiated module"), seen as a test file killed by SIGABRT.
 * Here the ES module is loaded by import(), asynchronously, starting when the thread starts (so
 * the first document does not wait for MJML), and a thread terminated meanwhile just ends.
 */
const loading = import('./render-worker.js');
// Awaited by every task below; this only keeps a failed load from being an unhandled rejection
// of the thread before the first task reports it.
loading.catch(() => {});

export = async function renderThread(task: RenderTask): Promise<ProcessedDocument> {
  const worker = await loading;
  return worker.default(task);
};
