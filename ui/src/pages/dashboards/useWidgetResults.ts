import { useEffect, useMemo, useRef, useState } from 'react';
import { api, errorText, isAbort } from '../../api';
import type { Live } from '../../live';
import type { RangeSel } from '../search/time-range';
import type { QueryData } from './charts';
import { asTimeRange } from './dashboard-address';
import type { Widget } from './grid';

/** What a widget's results are of: its query and kind, and the dashboard's range. */
const signature = (w: Widget, range: RangeSel | null) =>
  JSON.stringify([w.query, w.visualization.kind, range]);

/** A map places its values by GeoIP: its results are read with `add_geoip_data`. */
const geoOf = (w: Widget) => w.visualization.kind === 'map';

interface Held {
  sig: string;
  data: QueryData;
}

/**
 * The widgets' results, live over `conn`. Without a range, through the dashboard's
 * subscription: each widget's query as saved. With one, each widget's query over that
 * range (POST /api/query) and a subscription to it. Both start again when a widget's query
 * or kind, or the range, changes (an edit, a duplicate); results are kept with what they
 * are of, so a widget never shows those of its query before an edit or of another range.
 */
export function useWidgetResults(
  conn: Live | null,
  dashboardId: number,
  widgets: readonly Widget[],
  range: RangeSel | null,
): Record<number, QueryData | undefined> {
  const [held, setHeld] = useState<Record<number, Held>>({});
  const latest = useRef(widgets);
  latest.current = widgets;
  const sigs = useMemo(() => new Map(widgets.map((w) => [w.id, signature(w, range)])), [widgets, range]);
  const key = JSON.stringify([...sigs].sort((a, b) => a[0] - b[0]));

  useEffect(() => {
    // `key` is read so that a changed query, kind or range subscribes again.
    void key;
    if (!conn) return;
    const now = new Map(latest.current.map((w) => [w.id, w]));
    const put = (id: number, data: QueryData) => {
      const w = now.get(id);
      if (w) setHeld((h) => ({ ...h, [id]: { sig: signature(w, range), data } }));
    };
    if (!range) return conn.subscribeDashboard(dashboardId, (u) => put(u.widget_id, u.data as QueryData));

    const ctl = new AbortController();
    const offs: Array<() => void> = [];
    const failed = (id: number) => (err: unknown) => {
      if (!isAbort(err)) put(id, { status: 'ERROR', error: errorText(err) });
    };
    for (const w of now.values()) {
      const geo = geoOf(w) ? '?add_geoip_data=true' : '';
      const body = { type: w.query.type, params: { ...w.query.params, time_range: asTimeRange(range) } };
      api<QueryData>(`/api/query${geo}`, { body, signal: ctl.signal })
        .then((first) => {
          if (ctl.signal.aborted) return;
          put(w.id, first);
          const qid = first.query_id;
          if (!qid) return;
          const onUpdate = (update: unknown) => {
            if (!geo) return put(w.id, update as QueryData);
            // Updates come without GeoIP: a map reads its query again with it.
            api<QueryData>(`/api/query/${encodeURIComponent(qid)}${geo}`, { signal: ctl.signal })
              .then((q) => put(w.id, q))
              .catch(failed(w.id));
          };
          offs.push(
            conn.subscribeQuery(qid, onUpdate, (detail) => put(w.id, { status: 'ERROR', error: detail })),
          );
        })
        .catch(failed(w.id));
    }
    return () => {
      ctl.abort();
      for (const off of offs) off();
    };
  }, [conn, dashboardId, key, range]);

  const out: Record<number, QueryData | undefined> = {};
  for (const [id, sig] of sigs) {
    const h = held[id];
    out[id] = h && h.sig === sig ? h.data : undefined;
  }
  return out;
}
