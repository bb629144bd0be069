import type { Static } from 'typebox';
import { can, type Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import { type FieldErrors, notFound, permissionDenied, validationError } from '../../errors/errors.js';
import type { UsersRepository } from '../identity/index.js';
import type { TaskSchema } from './task-schema.js';
import type { TaskFilter, TasksRepository } from './tasks-repository.js';
import type { TaskPriority, TaskRow, TaskUpdate } from './tasks-table.js';

export type { TaskPriority };

/** Task representation. */
export type Task = Static<typeof TaskSchema>;

/** The writable fields of a task, as a body gives them (all optional for PATCH). */
export interface TaskInput {
  title?: string | undefined;
  description?: string | undefined;
  /** A user id or a username; null for none. */
  assigned_to?: number | string | null | undefined;
  is_open?: boolean | undefined;
  due_date?: string | null | undefined;
  priority?: TaskPriority | undefined;
  ev_ids?: string[] | undefined;
}

export type FullTaskInput = TaskInput & { title: string };

export interface TaskListFilter {
  owners?: number[] | undefined;
  /** User ids or usernames; a value matches either. */
  assignedTo?: string[] | undefined;
  title?: string | undefined;
  isOpen?: boolean | undefined;
  isOverdue?: boolean | undefined;
  unassigned?: boolean | undefined;
}

/** A task lists at most this many event ids (the body schema's limit). */
const EV_IDS_MAX = 1000;

/** Which of these event ids name events `who` may not read (hidden-events.ts). */
export type HiddenEvents = (who: Identity, evIds: readonly string[]) => Promise<Set<string>>;

/** What POST starts from and PUT resets an omitted field to. */
const withDefaults = (input: FullTaskInput): Required<TaskInput> => ({
  title: input.title,
  description: input.description ?? '',
  assigned_to: input.assigned_to ?? null,
  is_open: input.is_open ?? true,
  due_date: input.due_date ?? null,
  priority: input.priority ?? 'medium',
  ev_ids: input.ev_ids ?? [],
});

const present = (row: TaskRow, nowIso: string): Task => ({
  id: row.id,
  title: row.title,
  description: row.description,
  owner: row.owner_id,
  assigned_to: row.assigned_to,
  is_open: row.is_open === 1,
  due_date: row.due_date,
  // Stored due dates are canonical ISO strings, so text order is time order.
  is_overdue: row.is_open === 1 && row.due_date !== null && row.due_date < nowIso,
  priority: row.priority,
  ev_ids: JSON.parse(row.ev_ids) as string[],
  trigger_id: row.trigger_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
  closed_at: row.closed_at,
});

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;
const DUE_DATE_MESSAGE = 'Must be an ISO 8601 date-time or a date YYYY-MM-DD.';

/**
 * A due date as canonical ISO UTC text, or an error message. A date alone is midnight
 * UTC; a date-time without an offset is UTC (as ingestion reads times). Impossible
 * calendar values (Feb 30, 25:00) are refused rather than rolled over as Date.parse does.
 */
export function parseDueDate(raw: string): string | { error: string } {
  const d = DATE_ONLY.exec(raw);
  const m = d ?? DATE_TIME.exec(raw);
  if (!m) return { error: DUE_DATE_MESSAGE };
  const [year, month, day, hour = 0, minute = 0, second = 0] = [1, 2, 3, 4, 5, 6].map((i) =>
    Number(m[i] ?? 0),
  ) as [number, number, number, number, number, number];
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  const offH = Number(m[10] ?? 0);
  const offM = Number(m[11] ?? 0);
  if (
    monthDays === undefined ||
    day < 1 ||
    day > monthDays ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    offH > 23 ||
    offM > 59
  ) {
    return { error: DUE_DATE_MESSAGE };
  }
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day);
  t.setUTCHours(hour, minute, second, ms);
  const offsetMinutes = (m[9] === '-' ? -1 : 1) * (offH * 60 + offM);
  const utc = new Date(t.getTime() - offsetMinutes * 60_000);
  const iso = utc.toISOString();
  // Keep stored dates four-digit-year ISO text, whose text order is time order.
  if (!/^\d{4}-/.test(iso)) return { error: 'Must be between the years 0000 and 9999.' };
  return iso;
}

/**
 * Tasks are a team's board: every user sees every task, but only the event ids among its
 * `ev_ids` that they may read (docs/api/tasks.md: a task a trigger opened lists what its trigger
 * matched). The owner, the assignee, holders of `manage_tasks` and admins may change a
 * task; the owner and admins may delete it.
 */
export class TasksService {
  constructor(
    private readonly tasks: TasksRepository,
    private readonly users: UsersRepository,
    private readonly hiddenOf: HiddenEvents,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Tasks as `who` is shown them: without the ids of events they may not read. */
  private async shown(who: Identity, rows: readonly TaskRow[], nowIso: string): Promise<Task[]> {
    const tasks = rows.map((r) => present(r, nowIso));
    const hidden = await this.hiddenOf(who, [...new Set(tasks.flatMap((t) => t.ev_ids))]);
    if (hidden.size) for (const t of tasks) t.ev_ids = t.ev_ids.filter((id) => !hidden.has(id));
    return tasks;
  }

  private async shownOne(who: Identity, row: TaskRow, nowIso: string): Promise<Task> {
    return (await this.shown(who, [row], nowIso))[0] as Task;
  }

  async list(who: Identity, filter: TaskListFilter, page: PageRequest): Promise<Page<Task>> {
    const nowIso = this.now().toISOString();
    const repoFilter: TaskFilter = {};
    if (filter.owners?.length) repoFilter.ownerIds = filter.owners;
    if (filter.assignedTo?.length) {
      repoFilter.assignedTo = {
        ids: filter.assignedTo.filter((v) => /^\d+$/.test(v)).map(Number),
        usernames: filter.assignedTo,
      };
    }
    if (filter.title) repoFilter.titleContains = filter.title;
    if (filter.isOpen !== undefined) repoFilter.isOpen = filter.isOpen;
    if (filter.isOverdue !== undefined) repoFilter.overdue = { value: filter.isOverdue, at: nowIso };
    if (filter.unassigned !== undefined) repoFilter.unassigned = filter.unassigned;
    const res = await this.tasks.list(repoFilter, page);
    return { count: res.count, rows: await this.shown(who, res.rows, nowIso) };
  }

  async get(who: Identity, id: number): Promise<Task> {
    return this.shownOne(who, await this.find(id), this.now().toISOString());
  }

  /** Creates a task owned by the caller. */
  async create(who: Identity, input: FullTaskInput): Promise<Task> {
    const row = await this.insert(who.userId, input, null);
    return this.shownOne(who, row, row.created_at);
  }

  /**
   * Opens a task for a trigger (owned by its owner, linked to it); answers its id. Its
   * event ids are the trigger's matches, shown to each reader as they may read them.
   */
  async openForTrigger(ownerId: number, input: FullTaskInput, triggerId: number): Promise<number> {
    return (await this.insert(ownerId, input, triggerId)).id;
  }

  private async insert(ownerId: number, input: FullTaskInput, triggerId: number | null): Promise<TaskRow> {
    const now = this.now().toISOString();
    const values = await this.validate(withDefaults(input));
    const row = await this.tasks.insert({
      title: input.title,
      description: values.description ?? '',
      owner_id: ownerId,
      assigned_to: values.assigned_to ?? null,
      is_open: values.is_open ?? 1,
      due_date: values.due_date ?? null,
      priority: values.priority ?? 'medium',
      ev_ids: values.ev_ids ?? '[]',
      trigger_id: triggerId,
      created_at: now,
      updated_at: now,
      closed_at: values.is_open === 0 ? now : null,
    });
    return row;
  }

  /** The open task a trigger last extended at or after `since` (ISO), if any. */
  openTaskOfTrigger(triggerId: number, since: string): Promise<TaskRow | undefined> {
    return this.tasks.openTaskOfTrigger(triggerId, since);
  }

  /** Adds event ids to a task just read (up to `max` listed), marking it updated. */
  async addEvents(row: TaskRow, evIds: readonly string[], max: number): Promise<void> {
    const merged = [...new Set([...(JSON.parse(row.ev_ids) as string[]), ...evIds])].slice(0, max);
    await this.tasks.update(row.id, { ev_ids: JSON.stringify(merged), updated_at: this.now().toISOString() });
  }

  /** PUT: every writable field; the omitted ones go back to their defaults. */
  replace(who: Identity, id: number, input: FullTaskInput): Promise<Task> {
    return this.change(who, id, withDefaults(input));
  }

  /** PATCH: only the given fields. */
  update(who: Identity, id: number, input: TaskInput): Promise<Task> {
    return this.change(who, id, input);
  }

  async delete(who: Identity, id: number): Promise<void> {
    const row = await this.find(id);
    if (row.owner_id !== who.userId && !who.isAdmin) {
      throw permissionDenied('Only the owner of a task or an administrator may delete it.');
    }
    if (!(await this.tasks.delete(id))) throw notFound('No such task.');
  }

  private async change(who: Identity, id: number, input: TaskInput): Promise<Task> {
    const current = await this.find(id);
    if (current.owner_id !== who.userId && current.assigned_to !== who.userId && !can(who, 'manage_tasks')) {
      throw permissionDenied('Only the owner, the assignee or a task manager may change this task.');
    }
    const values = await this.validate(input);
    if (input.ev_ids !== undefined) {
      // The ids of events the caller may not read are not theirs to drop (they are not shown them).
      const stored = JSON.parse(current.ev_ids) as string[];
      const hidden = await this.hiddenOf(who, stored);
      const given = JSON.parse(values.ev_ids ?? '[]') as string[];
      values.ev_ids = JSON.stringify(
        [...new Set([...given, ...stored.filter((id) => hidden.has(id))])].slice(0, EV_IDS_MAX),
      );
    }
    const now = this.now().toISOString();
    if (values.is_open !== undefined) {
      // Closing an already closed task keeps the time it was first closed.
      values.closed_at = values.is_open === 1 ? null : current.is_open === 0 ? current.closed_at : now;
    }
    const row = await this.tasks.update(id, { ...values, updated_at: now });
    if (!row) throw notFound('No such task.');
    return this.shownOne(who, row, now);
  }

  private async find(id: number): Promise<TaskRow> {
    const row = await this.tasks.byId(id);
    if (!row) throw notFound('No such task.');
    return row;
  }

  /** Checks what the body schema cannot and turns the input into column values. */
  private async validate(input: TaskInput): Promise<TaskUpdate> {
    const errors: FieldErrors = {};
    const out: TaskUpdate = {};
    if (input.title !== undefined) {
      if (!input.title.trim()) errors.title = ['May not be blank.'];
      out.title = input.title;
    }
    if (input.description !== undefined) out.description = input.description;
    if (input.assigned_to !== undefined) {
      const wanted = input.assigned_to;
      // A form field arrives as text: digits are an id, anything else a username.
      const user =
        wanted === null
          ? null
          : typeof wanted === 'number' || /^\d+$/.test(wanted)
            ? await this.users.byId(Number(wanted))
            : await this.users.byUsername(wanted);
      if (wanted !== null && !user) errors.assigned_to = [`User ${JSON.stringify(wanted)} does not exist.`];
      out.assigned_to = user ? user.id : null;
    }
    if (input.is_open !== undefined) out.is_open = input.is_open ? 1 : 0;
    if (input.due_date !== undefined) {
      // Form encodings cannot send null: an empty due date clears it.
      const parsed = input.due_date === null || input.due_date === '' ? null : parseDueDate(input.due_date);
      if (parsed !== null && typeof parsed === 'object') errors.due_date = [parsed.error];
      else out.due_date = parsed;
    }
    if (input.priority !== undefined) out.priority = input.priority;
    if (input.ev_ids !== undefined) out.ev_ids = JSON.stringify([...new Set(input.ev_ids)]);
    if (Object.keys(errors).length) {
      const summary = Object.entries(errors)
        .map(([field, messages]) => `${field}: ${messages.join(' ')}`)
        .join('; ');
      throw validationError(errors, `Invalid input: ${summary}`);
    }
    return out;
  }
}
