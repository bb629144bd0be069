import { type Kysely, sql } from 'kysely';
import type { OrderTerm, PageRequest } from '../../core/list.js';
import { own } from '../../core/own.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { NewTaskRow, TaskRow, TaskUpdate } from './tasks-table.js';

export interface TaskFilter {
  ownerIds?: number[];
  /** Assigned to any of these user ids or usernames. */
  assignedTo?: { ids: number[]; usernames: string[] };
  /** Case-insensitive substring of the title. */
  titleContains?: string;
  isOpen?: boolean;
  /** Overdue (or not) at the ISO time `at`: open with a due date before it. */
  overdue?: { value: boolean; at: string };
  /** true: no assignee; false: some assignee. */
  unassigned?: boolean;
}

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
const likeContains = (text: string) => `%${text.replace(/[!%_]/g, '!$&')}%`;

/**
 * Sort keys that are not plain columns: priority by rank (low < critical), and due_date
 * with undated tasks last in both directions (the dialects disagree on where nulls go).
 */
const ORDER_KEYS: Record<string, (desc: boolean) => OrderTerm[]> = {
  priority: (desc) => [{ field: 'priority_rank', desc }],
  due_date: (desc) => [
    { field: 'due_date_missing', desc: false },
    { field: 'due_date', desc },
  ],
};

export class TasksRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byId(id: number): Promise<TaskRow | undefined> {
    return this.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(filter: TaskFilter, page: PageRequest) {
    let q = this.db
      .selectFrom('tasks')
      .selectAll()
      .select([
        sql<number>`case priority when 'low' then 0 when 'medium' then 1 when 'high' then 2 else 3 end`.as(
          'priority_rank',
        ),
        sql<number>`case when due_date is null then 1 else 0 end`.as('due_date_missing'),
      ]);
    if (filter.ownerIds?.length) q = q.where('owner_id', 'in', filter.ownerIds);
    const assigned = filter.assignedTo;
    if (assigned) {
      q = q.where((eb) =>
        eb.or([
          ...(assigned.ids.length ? [eb('assigned_to', 'in', assigned.ids)] : []),
          eb(
            'assigned_to',
            'in',
            eb.selectFrom('users').select('users.id').where('users.username', 'in', assigned.usernames),
          ),
        ]),
      );
    }
    if (filter.titleContains !== undefined) {
      const pattern = likeContains(filter.titleContains);
      q = q.where(sql<boolean>`lower(title) like lower(${pattern}) escape '!'`);
    }
    if (filter.isOpen !== undefined) q = q.where('is_open', '=', filter.isOpen ? 1 : 0);
    const overdue = filter.overdue;
    if (overdue) {
      q = overdue.value
        ? q.where('is_open', '=', 1).where('due_date', 'is not', null).where('due_date', '<', overdue.at)
        : q.where((eb) =>
            eb.or([eb('is_open', '=', 0), eb('due_date', 'is', null), eb('due_date', '>=', overdue.at)]),
          );
    }
    if (filter.unassigned !== undefined) {
      q = q.where('assigned_to', filter.unassigned ? 'is' : 'is not', null);
    }
    const ordering = page.ordering.flatMap((t) => own(ORDER_KEYS, t.field)?.(t.desc) ?? [t]);
    return paginate(q, { ...page, ordering });
  }

  /** The open task a trigger last added to at or after `since` (ISO), if any. */
  openTaskOfTrigger(triggerId: number, since: string): Promise<TaskRow | undefined> {
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('trigger_id', '=', triggerId)
      .where('is_open', '=', 1)
      .where('updated_at', '>=', since)
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  insert(row: NewTaskRow): Promise<TaskRow> {
    return this.db.insertInto('tasks').values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, patch: TaskUpdate): Promise<TaskRow | undefined> {
    return this.db.updateTable('tasks').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('tasks').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
