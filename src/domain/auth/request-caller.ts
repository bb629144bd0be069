import { AsyncLocalStorage } from 'node:async_hooks';
import type { Identity } from './identity.js';

const callers = new AsyncLocalStorage<Identity>();

/**
 * Runs `fn` (and everything it starts) on behalf of `who`. The HTTP layer wraps every
 * authenticated handler in it, so a read-time step deep below a route that was not handed
 * the caller (trigger data added to events) can still show only what the caller may see.
 */
export const runAsCaller = <T>(who: Identity, fn: () => T): T => callers.run(who, fn);

/** The caller of the request being served, if any (none in the CLI or background work). */
export const currentCaller = (): Identity | undefined => callers.getStore();
