import type { RenderTask } from './render-worker.js';
import type { ProcessedDocument } from '../../engines/beefree/document.js';

/*
 * The file the render pool's threads load (domain/templates/render-pool.ts), CommonJS on purpose.
 * piscina loads a task file with require() first, and on Node 20 require() of an ES module
 * (render-worker.js and MJML behind it) instantiates the whole graph synchronously; a thread
 * terminated in the middle of that (a web dyno stopped while its threads still load MJML, which
 * takes seconds on a loaded machine) aborted the whole process with a V8 fatal error
 * ("IsGraphAsync must be used on an instantiated module"), seen as a test file killed by SIGABRT.
 * Here the ES module is loaded by import(), asynchronously, and a thread terminated meanwhile
 * just ends. The default export is the promise of the handler: piscina awaits it before it calls
 * the thread ready, so no document is handed to a thread still loading (its time limit would
 * count the load).
 */
const handler: Promise<(task: RenderTask) => Promise<ProcessedDocument>> = import('./render-worker.js').then((m) => m.default);
export default handler;
