import WebSocket from 'ws';
import { TAIL_WINDOW } from '../shared/time-presets.js';
import { apiJson, CliError, type ServerTarget, tokenRefused, unreachable } from './api-client.js';
import { formatEvent, oldestFirst, wantsColour } from './format.js';
import type { GenericQuery } from './search.js';

/**
 * The window of the tailed Search: events stamped this long before now still show when
 * they arrive late. The server re-runs the Search over it every `liveRefreshMs`.
 */
/**
 * Events per update: new events beyond this many within one update (250 ms) are not
 * all shown. Every update carries the whole page, so a larger one costs every update.
 */
export const TAIL_PAGE = 500;

/**
 * Follows a query live over `/ws/live-updates`: a relative Search sorted by `-ts` that the
 * server tails, subscribed to by id. Prints each event committed after the Search was
 * created once (by ev_id), oldest first within each update. Resolves on SIGINT/SIGTERM
 * after closing the socket and removing the Search; rejects with a one-line CliError when
 * the server refuses or ends the connection.
 */
export async function tail(target: ServerTarget, o: { query: string; json: boolean }): Promise<void> {
  const created = await apiJson<GenericQuery>(target, '/api/query', {
    method: 'POST',
    body: {
      type: 'Search',
      params: { query: o.query, time_range: { preset: TAIL_WINDOW }, sort: ['-ts'], page_size: TAIL_PAGE },
    },
  });
  const q = created.body;
  const queryPath = `/api/query/${encodeURIComponent(q.query_id)}`;
  const remove = () =>
    apiJson(target, `${queryPath}/remove`, { signal: AbortSignal.timeout(1500) }).catch(() => undefined);
  if (q.status === 'ERROR') {
    await remove();
    throw new CliError(`tail failed: ${q.error ?? 'no reason given'}`);
  }
  // The server's clock: events it stored from here on are new (stored_at, Unix seconds).
  const since = Date.parse(q.created_at);
  const colour = !o.json && wantsColour(process.stdout);
  /** Printed events still on the page (ev_id → ts), pruned as they leave it. */
  const seen = new Map<string, number>();

  const show = (data: GenericQuery) => {
    const events = data.results?.events ?? [];
    const fresh = events
      .filter((e) => !seen.has(e.ev_id) && Math.round(Number(e.stored_at) * 1000) >= since)
      .sort(oldestFirst);
    let out = '';
    for (const e of fresh) {
      seen.set(e.ev_id, e.ts);
      out += `${o.json ? JSON.stringify(e) : formatEvent(e, colour)}\n`;
    }
    if (out) process.stdout.write(out);
    // A complete page holds the newest matches: an event older than all of them cannot
    // come back onto it, so it need not be remembered.
    if (data.status === 'SUCCESS' && events.length) {
      let oldest = Number.POSITIVE_INFINITY;
      for (const e of events) oldest = Math.min(oldest, e.ts);
      for (const [id, ts] of seen) if (ts < oldest) seen.delete(id);
    }
  };

  const wsUrl = `${target.url.replace(/^http/, 'ws')}/ws/live-updates`;
  const ws = new WebSocket(wsUrl, { headers: { authorization: `token ${target.token}` } });

  return new Promise<void>((resolve, reject) => {
    let opened = false;
    let stopping = false;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      // Nobody will watch the Search again: remove it, then close (cut if the server is mute).
      void remove().finally(() => {
        const done = () => (err ? reject(err) : resolve());
        if (ws.readyState === WebSocket.CLOSED) return done();
        const cut = setTimeout(() => {
          ws.terminate();
          done();
        }, 1000);
        ws.once('close', () => {
          clearTimeout(cut);
          done();
        });
        if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'bye');
        else ws.terminate();
      });
    };
    // Once: a second Ctrl-C while closing ends the process at once (the default).
    function stop() {
      stopping = true;
      finish();
    }
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);

    ws.on('unexpected-response', (req, res) => {
      if (res.statusCode === 401) {
        req.destroy();
        finish(tokenRefused(target));
        return;
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        req.destroy();
        let detail = '';
        try {
          detail = String((JSON.parse(body) as { detail?: unknown }).detail ?? '');
        } catch {
          // not JSON: the status says enough
        }
        finish(new CliError(detail || `${target.url} refused the websocket (${res.statusCode})`));
      });
    });
    ws.on('error', (err) => {
      finish(
        opened
          ? new CliError(`connection to ${target.url} failed: ${err.message}`)
          : unreachable(target.url, err),
      );
    });
    ws.on('open', () => {
      opened = true;
      ws.send(JSON.stringify(['subscribe', { query_id: q.query_id }]));
    });
    ws.on('message', (raw) => {
      let msg: [string, Record<string, unknown>];
      try {
        msg = JSON.parse(String(raw)) as [string, Record<string, unknown>];
      } catch {
        return;
      }
      const [command, params] = msg;
      if (stopping || settled) return;
      switch (command) {
        case 'subscribed':
          process.stderr.write(
            `Tailing ${o.query ? JSON.stringify(o.query) : 'all events'} on ${target.url} (Ctrl-C to stop).\n`,
          );
          return;
        case 'widget-update': {
          const data = params.data as GenericQuery;
          if (data.status === 'ERROR')
            finish(new CliError(`tail failed: ${data.error ?? 'no reason given'}`));
          else show(data);
          return;
        }
        case 'unsubscribed':
          finish(new CliError('the server ended the tail (its query was removed)'));
          return;
        case 'error':
          finish(new CliError(String(params.detail ?? 'the server reported an error')));
          return;
      }
    });
    ws.on('close', (code, reason) => {
      if (stopping || settled) return;
      const why = reason.length ? `: ${reason.toString()}` : '';
      finish(
        code === 4401
          ? new CliError(`the server closed the tail: the token is no longer valid${why}`)
          : new CliError(
              `connection to ${target.url} lost (close code ${code}${why}): is the server still running?`,
            ),
      );
    });
  });
}
