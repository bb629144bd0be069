import { useCallback, useRef } from 'react';
import type { TimeRange } from '../../api';
import { type FieldInfo, fetchFields } from './FieldList';
import type { RangeSel } from './time-range';

/**
 * Every field of the events of `range` (whatever the query), for the query box's completion
 * and an empty result's field fix: read when first asked, again after a minute or once the
 * range changed. The function keeps its identity; it reads the latest range.
 */
export function useRangeFields(range: RangeSel): () => Promise<FieldInfo[]> {
  const rangeRef = useRef(range);
  rangeRef.current = range;
  const cache = useRef<{ key: string; at: number; fields: Promise<FieldInfo[]> } | null>(null);
  return useCallback(() => {
    const r = rangeRef.current;
    const key = JSON.stringify(r);
    const c = cache.current;
    if (c && c.key === key && Date.now() - c.at < 60_000) return c.fields;
    const timeRange: TimeRange =
      r.kind === 'absolute' ? { ts_from: r.from, ts_to: r.to } : { preset: r.preset };
    const fields = fetchFields('', timeRange).then((answer) => answer.fields);
    fields.catch(() => {
      cache.current = null;
    });
    cache.current = { key, at: Date.now(), fields };
    return fields;
  }, []);
}
