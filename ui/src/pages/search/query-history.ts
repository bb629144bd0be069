/**
 * The queries searched in this browser, newest first: the last HISTORY_SIZE distinct ones,
 * kept in localStorage (`logscope.queryHistory`, a JSON array of strings), offered by the
 * query box (↑ in the empty box, its History button). Other tabs' searches show too (the
 * `storage` event); a storage the browser refuses (private mode, quota) keeps none.
 */
import { useSyncExternalStore } from 'react';

export const HISTORY_SIZE = 50;
const KEY = 'logscope.queryHistory';
const NONE: readonly string[] = [];

const listeners = new Set<() => void>();
/** The list as last read (one array while nothing changes, as useSyncExternalStore needs). */
let cached: readonly string[] | null = null;

function read(): readonly string[] {
  try {
    const parsed: unknown = JSON.parse(window.localStorage.getItem(KEY) ?? '[]');
    if (!Array.isArray(parsed)) return NONE;
    return parsed.filter((q): q is string => typeof q === 'string' && q.trim() !== '').slice(0, HISTORY_SIZE);
  } catch {
    return NONE;
  }
}

function write(list: readonly string[]): void {
  try {
    if (list.length === 0) window.localStorage.removeItem(KEY);
    else window.localStorage.setItem(KEY, JSON.stringify(list));
  } catch {
    // Not kept: the list lasts as long as the page.
  }
  cached = list;
  for (const listener of listeners) listener();
}

/** The queries searched, newest first. */
export function queryHistory(): readonly string[] {
  cached ??= read();
  return cached;
}

/** `query` searched: first in the list (once), the oldest beyond HISTORY_SIZE dropped. Blank: not kept. */
export function rememberQuery(query: string): void {
  const q = query.trim();
  if (q === '') return;
  const list = queryHistory();
  if (list[0] === q) return;
  write([q, ...list.filter((other) => other !== q)].slice(0, HISTORY_SIZE));
}

export function clearQueryHistory(): void {
  write(NONE);
}

const onStorage = (e: StorageEvent) => {
  if (e.key !== KEY && e.key !== null) return;
  cached = null;
  for (const listener of listeners) listener();
};

function subscribe(listener: () => void): () => void {
  if (listeners.size === 0) window.addEventListener('storage', onStorage);
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) window.removeEventListener('storage', onStorage);
  };
}

/** The history, re-rendering as it changes (here or in another tab). */
export const useQueryHistory = () => useSyncExternalStore(subscribe, queryHistory);
