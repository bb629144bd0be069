/** The websocket: live queries and widgets, the tail of this node's commits. */

import { component } from '../component.js';
import { LiveHub } from './live-hub.js';
import { liveRoutes } from './live-routes.js';
import { WidgetQueries } from './widget-queries.js';

export const live = component({
  name: 'live',
  build({ config, log, bus, batcher }, s) {
    const { dashboards, queries, runner, tokens } = s;
    return {
      provides: {},
      // One hub per app: an app's close closes its websockets (with 1001) and nothing else.
      async routes(app) {
        const widgetQueries = new WidgetQueries(dashboards, queries, runner, s.readScopes, s.audit);
        const hub = new LiveHub(queries, runner, widgetQueries, {
          maxBufferedBytes: config.liveBufferBytes,
          maxMessageBytes: 64 * 1024,
          maxUpdateBytes: config.liveUpdateMaxBytes,
          log,
          pingMs: 30_000,
          tailMs: 250,
          refreshMs: config.liveRefreshMs,
          identities: tokens,
          recheckMs: Math.max(1, config.tokenCacheSeconds) * 1000,
          ...(bus.kind === 'in-process' ? {} : { busConnected: () => bus.connected }),
        });
        // This node's commits come with their events (tailed in memory); the other nodes' as a summary.
        const offEvents = batcher.onCommit((events) => hub.eventsArrived(events));
        const offElsewhere = bus.subscribe('events-committed', (commit, remote) => {
          if (remote) hub.committedElsewhere(commit);
        });
        // Who may read what changed: shared widget queries are checked against each viewer.
        const offRights = bus.subscribe('rights-changed', () => hub.rightsChanged());
        const offMetrics = app.watchMetrics(hub);
        app.addHook('onClose', async () => {
          offEvents();
          offElsewhere();
          offRights();
          offMetrics();
          hub.close();
        });
        await app.register(liveRoutes, { hub });
      },
    };
  },
});
