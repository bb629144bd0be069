import type { EventStore } from '../../event-store/event-store.js';
import type {
  ChangesResult,
  ExecOptions,
  QueryPlan,
  TablePlan,
  TableResult,
} from '../../event-store/query-plan.js';
import {
  groupedPatterns,
  type PatternLookup,
  pipeGroups,
  plainOpts,
  templateRows,
} from './grouped-patterns.js';

/**
 * A Table whose pipes list `patterns`, with the ids that stage counts as one row: those of
 * one template text, decided as the Patterns query decides them (`templateRows`), so the
 * pipe lists the rows that query lists (docs/api/patterns.md#one-row-per-template).
 */
async function groupedTable(
  store: EventStore,
  plan: TablePlan,
  opts: ExecOptions,
  lookup: PatternLookup,
): Promise<TablePlan> {
  if (!plan.program.stages.some((st) => st.s === 'patterns')) return plan;
  const groups = pipeGroups((await templateRows(store, plan, plainOpts(opts), lookup)).rows.values());
  const stages = plan.program.stages.map((st) => (st.s === 'patterns' ? { ...st, groups } : st));
  return { ...plan, program: { ...plan.program, stages } };
}

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

/** An Explain's pattern changes with their template's text. */
async function changeTemplates(
  r: ChangesResult,
  templates: (ids: readonly string[]) => Promise<Map<string, string>>,
): Promise<ChangesResult> {
  const ids = r.changes.filter((c) => c.field === null).map((c) => String(c.value));
  if (!ids.length) return r;
  const text = await templates(ids);
  return {
    ...r,
    changes: r.changes.map((c) =>
      c.field === null ? { ...c, template: text.get(String(c.value)) ?? '' } : c,
    ),
  };
}

/**
 * The event store as the query runner reads it: a Patterns plan's results come grouped by
 * template text (one item per text, its ids from every app summed: grouped-patterns.ts)
 * with that text, which the metadata store keeps, not the event store, so everything made
 * from them (answers, widgets, exports, reports) shows it. A Table's `patterns` pipe groups
 * ids as that query does (`groupedTable`) and its columns get their text too, and so do an
 * Explain's pattern changes. Every other call goes to the store as it is.
 */
export function withTemplates(store: EventStore, lookup: PatternLookup): EventStore {
  const execute: EventStore['execute'] = async (plan, opts) => {
    const p = plan as QueryPlan;
    if (p.kind === 'patterns') return (await groupedPatterns(store, p, opts ?? {}, lookup)) as never;
    if (p.kind === 'table') {
      const grouped = await groupedTable(store, p, opts ?? {}, lookup);
      return (await tableTemplates(grouped, await store.execute(grouped, opts), (ids) =>
        lookup.templates(ids),
      )) as never;
    }
    const result = await store.execute(plan, opts);
    if (p.kind === 'changes')
      return (await changeTemplates(result as ChangesResult, (ids) =>
        lookup.templates(ids),
      )) as typeof result;
    return result;
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'execute') return execute;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
