import type { Schemas } from '../../api';
import { useApi } from '../../useApi';

type ReadableStream = Schemas['Stream'];

/** A `stream:<id>` term written by the picker (or by hand), at the start or anywhere. */
const STREAM_TERM = /(^|\s)stream:\S+(\s+AND)?(?=\s|$)/gi;

/** The query with its `stream:` terms replaced by one for `id` (none: every stream). */
export function withStream(query: string, id: number | null): string {
  const rest = query
    .replace(STREAM_TERM, ' ')
    .replace(/^\s*AND\s+/i, '')
    .trim();
  if (id === null) return rest;
  return rest ? `stream:${id} AND ${rest}` : `stream:${id}`;
}

/** The stream a query names with one `stream:<id>` term, if it names exactly one. */
export function streamOf(query: string): number | null {
  const terms = [...query.matchAll(/(?:^|\s)stream:(\d+)(?=\s|$)/gi)];
  return terms.length === 1 ? Number(terms[0]?.[1]) : null;
}

/** The streams the caller may read (GET /api/streams), null until known. */
export function useReadableStreams(): readonly ReadableStream[] | null {
  return useApi<{ count: number; results: ReadableStream[] }>('/api/streams').data?.results ?? null;
}

/** Said to a user who may read no stream: their searches find nothing, and whom to ask. */
export function NoStreams(props: { streams: readonly ReadableStream[] | null; isAdmin: boolean }) {
  if (!props.streams || props.streams.length > 0 || props.isAdmin) return null;
  return (
    <p role="status" className="notice stream-none">
      You may read no stream yet, so every search finds nothing. Ask an administrator (or someone who manages
      streams) to add you, or a team of yours, to a stream’s readers.
    </p>
  );
}

/**
 * Narrows a search to one of the streams the caller may read: it writes `stream:<id>`
 * into the query (the query language's own term), so the address, the live tail and the
 * field list follow it as any other term. Shown when there are two streams or more.
 */
export function StreamPicker(props: {
  streams: readonly ReadableStream[] | null;
  query: string;
  onChange: (query: string) => void;
}) {
  const list = props.streams ?? [];
  if (list.length < 2) return null;
  const current = streamOf(props.query);
  return (
    <select
      aria-label="Stream"
      className="stream-picker"
      value={current === null ? '' : String(current)}
      onChange={(e) =>
        props.onChange(withStream(props.query, e.target.value ? Number(e.target.value) : null))
      }
    >
      <option value="">All streams</option>
      {list.map((s) => (
        <option key={s.id} value={s.id}>
          {s.title}
        </option>
      ))}
    </select>
  );
}
