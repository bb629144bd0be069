/**
 * The websocket client for `/ws/live-updates`: subscriptions to queries and dashboards,
 * reconnection with backoff (jittered; `retryNow` and the browser coming back online try
 * at once; every active subscription is sent again), and the session ending when the
 * server says the token is no longer valid.
 *
 * Messages both ways are JSON `[command, params]`. The server answers a subscription with
 * `subscribed`, then sends `widget-update {widget_id, dashboard_id, data}` for the current
 * state of each watched query and for every change after; for a query subscription
 * `widget_id` and `dashboard_id` are null and `data.query_id` names the query.
 */
import { api, type GenericQuery } from './api';

export type LiveState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A query's representation as the server sends it (GenericQuery of any type). */
export type LiveQuery = GenericQuery<unknown>;

export interface WidgetUpdate {
  widget_id: number;
  dashboard_id: number;
  data: unknown;
}

export interface Live {
  /**
   * Updates of one query (its GenericQuery representation). `onEnded` hears the server
   * refuse or end the subscription (the query is gone); it is then dropped here too.
   * Returns the unsubscribe.
   */
  subscribeQuery(
    queryId: string,
    onUpdate: (query: unknown) => void,
    onEnded?: (detail: string) => void,
  ): () => void;
  /** Updates of every widget of a dashboard. Returns the unsubscribe. */
  subscribeDashboard(dashboardId: number, onWidgetUpdate: (u: WidgetUpdate) => void): () => void;
  /** While reconnecting: try again now instead of after the backoff. */
  retryNow(): void;
  close(): void;
}

/** Close code of a connection whose token is no longer valid (src/features/live/live-hub.ts). */
export const CLOSE_TOKEN_INVALID = 4401;
/** Close code of a client that could not keep up (its send buffer filled). */
export const CLOSE_TOO_SLOW = 1013;

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 10_000;
/** Each wait is the backoff less up to this share, so that clients cut together do not all come back at once. */
const JITTER = 0.25;
/** A connection silent this long while subscriptions are active gets a ping. */
const PING_MS = 25_000;

type Target = { query_id: string } | { dashboard_id: number };
type Listener = (params: Record<string, unknown>) => void;

interface Sub {
  target: Target;
  listeners: Set<Listener>;
  /** Told when the server refuses or ends the subscription. */
  ended: Set<(detail: string) => void>;
}

const keyOf = (t: Target) => JSON.stringify(t);

export function liveUrl(token: string): string {
  const proto = window.location.protocol === 'https:' ? 'wss' : 'ws';
  return `${proto}://${window.location.host}/ws/live-updates?token=${encodeURIComponent(token)}`;
}

/**
 * Asks the API whether the token still holds: a 401 there runs the app's session-expired
 * path (api.ts's unauthorized handler). Resolves true when the token is refused.
 */
async function tokenRefused(): Promise<boolean> {
  try {
    await api('/api/users/me');
    return false;
  } catch (err) {
    return (err as { status?: number }).status === 401;
  }
}

export function openLive(opts: { token: string; onState?: (s: LiveState) => void }): Live {
  const subs = new Map<string, Sub>();
  let socket: WebSocket | null = null;
  let state: LiveState = 'connecting';
  let closed = false;
  let backoff = BACKOFF_MIN_MS;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let pinger: ReturnType<typeof setInterval> | null = null;

  const setState = (s: LiveState) => {
    if (s === state && s !== 'connecting') return;
    state = s;
    opts.onState?.(s);
  };

  /** Unsubscribes sent and not yet answered, by target. */
  const leaving = new Map<string, number>();

  const send = (command: string, params: unknown) => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify([command, params]));
  };

  const dispatch = (command: string, params: Record<string, unknown>) => {
    if (
      (command === 'error' || command === 'unsubscribed') &&
      params.target &&
      typeof params.target === 'object'
    ) {
      // A subscription the server refused or ended (its query was removed, its dashboard is
      // gone or invisible). One this client ended itself is no longer in `subs`.
      const key = keyOf(params.target as Target);
      // The answer to an unsubscribe of ours: a subscription to the same target made since
      // (a dashboard subscribed again after an edit) is not the one it ends.
      const ours = command === 'unsubscribed' || params.command === 'unsubscribe';
      const pending = leaving.get(key) ?? 0;
      if (ours && pending > 0) {
        if (pending === 1) leaving.delete(key);
        else leaving.set(key, pending - 1);
        return;
      }
      // Still listed (a dashboard with other widgets left): not ended.
      const still =
        Array.isArray(params.subscriptions) && params.subscriptions.some((t) => keyOf(t as Target) === key);
      if (command === 'unsubscribed' && still) return;
      const sub = subs.get(key);
      if (!sub) return;
      subs.delete(key);
      const detail = typeof params.detail === 'string' ? params.detail : 'The subscription ended.';
      for (const l of [...sub.ended]) l(detail);
      return;
    }
    if (command !== 'widget-update') return;
    const data = params.data as { query_id?: unknown } | undefined;
    let key: string;
    if (typeof params.dashboard_id === 'number') key = keyOf({ dashboard_id: params.dashboard_id });
    else if (params.widget_id == null && typeof data?.query_id === 'string')
      key = keyOf({ query_id: data.query_id });
    else return;
    const sub = subs.get(key);
    if (!sub) return;
    for (const l of [...sub.listeners]) l(params);
  };

  const stop = () => {
    if (retry) clearTimeout(retry);
    retry = null;
    if (pinger) clearInterval(pinger);
    pinger = null;
  };

  const connect = () => {
    if (closed) return;
    // Unsubscribes sent on an earlier connection are answered on none.
    leaving.clear();
    let opened = false;
    const ws = new WebSocket(liveUrl(opts.token));
    socket = ws;
    ws.onopen = () => {
      opened = true;
      backoff = BACKOFF_MIN_MS;
      setState('open');
      for (const sub of subs.values()) send('subscribe', sub.target);
      pinger = setInterval(() => send('ping', {}), PING_MS);
    };
    ws.onmessage = (e) => {
      if (typeof e.data !== 'string') return;
      let msg: unknown;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (!Array.isArray(msg) || typeof msg[0] !== 'string') return;
      const params = msg[1] && typeof msg[1] === 'object' ? (msg[1] as Record<string, unknown>) : {};
      dispatch(msg[0], params);
    };
    ws.onclose = (e) => {
      if (socket !== ws) return;
      socket = null;
      if (pinger) clearInterval(pinger);
      pinger = null;
      if (closed) return;
      if (e.code === CLOSE_TOKEN_INVALID) {
        closed = true;
        setState('closed');
        void tokenRefused();
        return;
      }
      setState('reconnecting');
      const wait = Math.round(backoff * (1 - JITTER * Math.random()));
      backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
      const again = () => {
        retry = setTimeout(() => {
          retry = null;
          connect();
        }, wait);
      };
      // A refused upgrade (bad token: 401 before any frame) shows only as a failed
      // connection: ask the API whether the session is over before trying again.
      if (!opened) {
        void tokenRefused().then((refused) => {
          if (closed) return;
          if (refused) {
            closed = true;
            setState('closed');
          } else again();
        });
      } else again();
    };
  };

  /** Connects now when a retry is waiting (not while a connection or a session check is under way). */
  const retryNow = () => {
    if (closed || !retry) return;
    clearTimeout(retry);
    retry = null;
    connect();
  };
  // The browser back online: no need to wait out the backoff.
  window.addEventListener('online', retryNow);

  setState('connecting');
  connect();

  const subscribe = (target: Target, listener: Listener, onEnded?: (detail: string) => void) => {
    const key = keyOf(target);
    let sub = subs.get(key);
    if (!sub) {
      sub = { target, listeners: new Set(), ended: new Set() };
      subs.set(key, sub);
      send('subscribe', target);
    }
    sub.listeners.add(listener);
    if (onEnded) sub.ended.add(onEnded);
    return () => {
      const s = subs.get(key);
      if (onEnded) s?.ended.delete(onEnded);
      if (!s?.listeners.delete(listener) || s.listeners.size) return;
      subs.delete(key);
      if (socket?.readyState === WebSocket.OPEN) leaving.set(key, (leaving.get(key) ?? 0) + 1);
      send('unsubscribe', target);
    };
  };

  return {
    subscribeQuery(queryId, onUpdate, onEnded) {
      return subscribe({ query_id: queryId }, (p) => onUpdate(p.data), onEnded);
    },
    subscribeDashboard(dashboardId, onWidgetUpdate) {
      return subscribe({ dashboard_id: dashboardId }, (p) => onWidgetUpdate(p as unknown as WidgetUpdate));
    },
    retryNow,
    close() {
      window.removeEventListener('online', retryNow);
      if (closed) return;
      closed = true;
      stop();
      subs.clear();
      const ws = socket;
      socket = null;
      if (ws && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) ws.close(1000);
      setState('closed');
    },
  };
}
