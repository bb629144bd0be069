import type { Identity } from '../../core/identity.js';
import { type ActionScope, actionsForEvents } from '../../enrich/actions.js';
import { type GeoIpLookup, withGeo } from '../../enrich/geoip.js';
import type { CommonParamValues, PresentOptions, QueryTypeName } from '../../query/types/query-type.js';
import type { TriggerMatch } from '../triggers/triggers-service.js';

/** What enrichment reads from. */
export interface ResultEnricherDeps {
  /** Null when no GeoIP database could be opened: add_geoip_data then adds nothing. */
  geoip: GeoIpLookup | null;
  /** The trigger matches of events that `who` may see, by event id (add_trigger_data). */
  triggerMatches: (
    evIds: readonly string[],
    who: Identity,
  ) => Promise<ReadonlyMap<string, readonly TriggerMatch[]>>;
}

type EventJson = Record<string, unknown>;

/** The flags that shape an answer beyond the type's own presentation. */
export type EnrichOptions = Pick<PresentOptions, 'actionsHint' | 'addTriggerData' | 'addGeoipData'> & {
  /** Whom the answer is for: trigger data shows only the triggers they may see (none without). */
  who?: Identity;
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The read-time step after a type's `present`: adds what the query-string flags ask for to
 * presented results (QueriesService.represent) and to one event (EventsService.get).
 * Never changes stored results: it returns new objects.
 */
export class ResultEnricher {
  constructor(private readonly deps: ResultEnricherDeps) {}

  /** Presented results of a query of `type` with `params`, enriched as `opts` asks. */
  async enrich(
    type: QueryTypeName,
    results: unknown,
    opts: EnrichOptions,
    params: CommonParamValues,
  ): Promise<unknown> {
    if (!isRecord(results)) return results;
    switch (type) {
      case 'Search':
        return this.search(results, opts, {
          time_range: params.time_range,
          filter: params.filter,
          query: params.query,
        });
      case 'TopN':
      case 'LastN':
        return this.geo(results, opts);
      case 'Summary':
      case 'Timeline':
      case 'Patterns':
      case 'Table':
      case 'Explain':
      case 'Metric':
        return results;
      default:
        return type satisfies never;
    }
  }

  /** One presented event (GET /api/events/{ev_id}). */
  async event(event: EventJson, opts: EnrichOptions): Promise<EventJson> {
    let out = event;
    if (opts.actionsHint) {
      // A GeoIP TopN must find the event: its own second is the scope.
      const ts = typeof event.ts === 'number' ? Math.floor(event.ts) : undefined;
      const scope: ActionScope = ts === undefined ? {} : { time_range: { ts_from: ts, ts_to: ts + 1 } };
      out = { ...out, actions: actionsForEvents([event], scope) };
    }
    if (opts.addTriggerData) [out] = (await this.addTriggerData([out], opts.who)) as [EventJson];
    return out;
  }

  private async search(results: Record<string, unknown>, opts: EnrichOptions, scope: ActionScope) {
    if (!Array.isArray(results.events)) return results;
    let events = results.events as EventJson[];
    const out: Record<string, unknown> = { ...results };
    // Before trigger data: `triggers` is not a field to act on.
    if (opts.actionsHint) out.actions = actionsForEvents(events, scope);
    if (opts.addTriggerData) events = await this.addTriggerData(events, opts.who);
    out.events = events;
    return out;
  }

  private geo(results: Record<string, unknown>, opts: EnrichOptions) {
    const geoip = this.deps.geoip;
    if (!opts.addGeoipData || !geoip || !Array.isArray(results.items)) return results;
    return { ...results, items: withGeo(results.items as { value: unknown }[], geoip) };
  }

  /**
   * add_trigger_data (Search and events): each event carries
   * `triggers: [{trigger_id, name, severity, matched_at}]`, empty when it matched none.
   */
  private async addTriggerData(events: EventJson[], who: Identity | undefined): Promise<EventJson[]> {
    const ids = events.flatMap((e) => (typeof e.ev_id === 'string' ? [e.ev_id] : []));
    const matches = who ? await this.deps.triggerMatches(ids, who) : new Map<string, TriggerMatch[]>();
    return events.map((e) => ({
      ...e,
      triggers: (matches.get(e.ev_id as string) ?? []).map(({ trigger_id, name, severity, matched_at }) => ({
        trigger_id,
        name,
        severity,
        matched_at,
      })),
    }));
  }
}
