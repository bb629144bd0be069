import { errorContext } from './query';

/** The query with the place of its syntax error marked (the message says it in words). */
export function ErrorContext({ query, at }: { query: string; at: number }) {
  const c = errorContext(query, at);
  return (
    <span className="query-error-context" aria-hidden="true">
      {c.before}
      <mark className={c.at ? undefined : 'at-end'}>{c.at || ' '}</mark>
      {c.after}
    </span>
  );
}
