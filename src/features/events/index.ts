/** Events and fields: reading stored events, and what read-time enrichment adds to them. */

import type { Identity } from '../../core/identity.js';
import { component } from '../component.js';
import { eventRoutes } from './events-routes.js';
import { EventsService } from './events-service.js';
import { fieldRoutes } from './fields-routes.js';
import { FieldsService } from './fields-service.js';
import { ResultEnricher } from './result-enricher.js';

// What queries and reports are handed as `enricher`, to enrich what they present too.
export type { ResultEnricher };

declare module '../component.js' {
  interface Services {
    events: EventsService;
    fields: FieldsService;
    /** GeoIP and trigger data added to presented results (never to stored ones). */
    enricher: ResultEnricher;
  }
}

export const events = component({
  name: 'events',
  build({ events: store, geoip }, s) {
    // Trigger data shows only the triggers the caller may see.
    const triggers = s.triggers;
    const triggerMatches = (evIds: readonly string[], who: Identity) => triggers.matchesOf(evIds, who);
    const enricher = new ResultEnricher({ geoip, triggerMatches });
    const events = new EventsService(store, enricher, triggerMatches, s.readScopes, s.audit);
    const fields = new FieldsService(store, s.readScopes);
    return {
      provides: { events, fields, enricher },
      async routes(app) {
        await app.register(eventRoutes, { events });
        await app.register(fieldRoutes, { fields });
      },
      metrics: [events],
    };
  },
});
