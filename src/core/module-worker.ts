import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a module given relative to `base` (a caller's
 * `import.meta.url`) without its extension: the compiled `.js` beside it in a build, or,
 * when the caller runs from TypeScript sources (tests, `npm run dev`), the `.ts` file
 * through tsx's loader, registered inside the worker.
 */
export function startModuleWorker(base: string, module: string, workerData: unknown): Worker {
  const fromSources = base.endsWith('.ts');
  const entry = new URL(`${module}${fromSources ? '.ts' : '.js'}`, base);
  if (!fromSources) return new Worker(entry, { workerData });
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { eval: true, workerData });
}
