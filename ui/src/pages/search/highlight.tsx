import { type ReactNode, useEffect, useSyncExternalStore } from 'react';
import { splitMarks } from './mark-terms';

export { queryTerms } from './mark-terms';

/** The terms of the search shown (Search.tsx sets them while it is up), and who reads them. */
let shownTerms: readonly string[] = [];
const readers = new Set<() => void>();
const setTerms = (terms: readonly string[]) => {
  shownTerms = terms;
  for (const r of readers) r();
};
const subscribe = (r: () => void) => {
  readers.add(r);
  return () => {
    readers.delete(r);
  };
};

/** Marks `terms` in every Marked text while the caller is mounted. */
export function useMarkTerms(terms: readonly string[]): void {
  useEffect(() => {
    setTerms(terms);
    return () => setTerms([]);
  }, [terms]);
}

/** A text with the search's terms marked. */
export function Marked({ text }: { text: string }): ReactNode {
  const terms = useSyncExternalStore(subscribe, () => shownTerms);
  const pieces = splitMarks(text, terms);
  if (pieces.length === 1 && !pieces[0]?.mark) return text;
  return pieces.map((p, i) =>
    // biome-ignore lint/suspicious/noArrayIndexKey: the pieces of one text, in order
    p.mark ? <mark key={i}>{p.text}</mark> : p.text,
  );
}
