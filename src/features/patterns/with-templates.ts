import type { EventStore } from '../../event-store/event-store.js';
import type { PatternsResult, QueryPlan, TablePlan, TableResult } from '../../event-store/query-plan.js';

/** A Table's `template` columns (the `patterns` pipe's) hold pattern ids from the store: their text instead. */
async function tableTemplates(
  plan: TablePlan,
  r: TableResult,
  templates: (ids: readonly string[]) => Promise<Map<string, string>>,
): Promise<TableResult> {
  const at = plan.program.columns.flatMap((c, i) => (c.template ? [i] : []));
  if (!at.length || !r.rows.length) return r;
  const ids = [...new Set(r.rows.flatMap((row) => at.map((i) => row[i])))].filter(
    (v): v is string => typeof v === 'string',
  );
  const text = await templates(ids);
  return {
    ...r,
    rows: r.rows.map((row) =>
      row.map((v, i) => (at.includes(i) && typeof v === 'string' ? (text.get(v) ?? '') : v)),
    ),
  };
}

/**
 * The event store as the query runner reads it: a Patterns plan's results come with each
 * pattern's template text (which the metadata store keeps, not the event store), so
 * everything made from them (answers, widgets, exports, reports) shows it. Every other
 * call goes to the store as it is.
 */
export function withTemplates(
  store: EventStore,
  templates: (ids: readonly string[]) => Promise<Map<string, string>>,
): EventStore {
  const execute: EventStore['execute'] = async (plan, opts) => {
    const result = await store.execute(plan, opts);
    const p = plan as QueryPlan;
    if (p.kind === 'table')
      return (await tableTemplates(p, result as TableResult, templates)) as typeof result;
    if (p.kind !== 'patterns') return result;
    const r = result as PatternsResult;
    const text = await templates(r.items.map((i) => i.patternId));
    return {
      ...r,
      items: r.items.map((i) => ({ ...i, template: text.get(i.patternId) ?? '' })),
    } as typeof result;
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'execute') return execute;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
