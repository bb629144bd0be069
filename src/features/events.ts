/** Events and fields: reading stored events, and what read-time enrichment adds to them. */
import type { Identity } from '../domain/auth/identity.js';
import { EventsService } from '../domain/events/events-service.js';
import { FieldsService } from '../domain/fields/fields-service.js';
import { ResultEnricher } from '../domain/queries/result-enricher.js';
import { eventRoutes } from '../http/routes/events.js';
import { fieldRoutes } from '../http/routes/fields.js';
import { component } from './component.js';

declare module './component.js' {
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
