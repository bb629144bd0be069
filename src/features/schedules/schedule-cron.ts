/**
 * A schedule's cron (docs/api/schedules.md): five fields checked here, by our grammar, so a mistake is
 * named by its field and value; the instants it names in a time zone are computed by
 * croner, whose daylight-saving rule is ISC/Vixie cron's (a time of day in a
 * spring-forward gap runs at the first instant after it, a repeated hour runs once; an
 * expression with `*` in its minute or hour field runs at every matching wall-clock
 * reading), and whose day rule is Vixie's (both day fields restricted: either may match).
 */
import { Cron } from 'croner';
import { fieldError } from '../../errors/errors.js';

/** Longest cron text accepted. */
export const CRON_MAX_LENGTH = 100;

interface FieldDef {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS: readonly FieldDef[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  // Names count from the field's first value: JAN is 1, SUN is 0.
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 0, max: 7, names: DAYS },
];

/** One field's values, and whether it was `*` (unrestricted). */
interface FieldValues {
  star: boolean;
  values: Set<number>;
}

const RANGE_ITEM = /^(\*|[0-9A-Za-z]+(?:-[0-9A-Za-z]+)?)(?:\/([0-9]+))?$/;
const NUMBER = /^[0-9]{1,2}$/;

function fieldValue(def: FieldDef, text: string): number {
  const upper = text.toUpperCase();
  const named = def.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + (def.name === 'month' ? 1 : 0);
  if (!NUMBER.test(text)) throw cronError(`${def.name}: "${text}" is not a number${nameHint(def)}`);
  const n = Number(text);
  if (n < def.min || n > def.max) throw cronError(`${def.name}: ${n} is outside ${def.min}-${def.max}`);
  return n;
}

const nameHint = (def: FieldDef) =>
  def.names ? ` or a name (${def.names[0]}-${def.names[def.names.length - 1]})` : '';

const cronError = (message: string) => fieldError('cron', message);

function parseField(def: FieldDef, text: string): FieldValues {
  const values = new Set<number>();
  let star = false;
  for (const item of text.split(',')) {
    const m = RANGE_ITEM.exec(item);
    if (!m) throw cronError(`${def.name}: "${item}" is not *, n, a-b, */s, a-b/s or a list of those`);
    const [, range = '', stepText] = m;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isSafeInteger(step) || step < 1 || step > def.max)
      throw cronError(`${def.name}: step ${stepText} is outside 1-${def.max}`);
    let from = def.min;
    let to = def.max;
    if (range === '*') star ||= stepText === undefined;
    else if (range.includes('-')) {
      const [a = '', b = ''] = range.split('-');
      from = fieldValue(def, a);
      to = fieldValue(def, b);
      if (from > to) throw cronError(`${def.name}: range ${range} runs backwards`);
    } else {
      from = fieldValue(def, range);
      // `n/s` is not ours (croner reads it one way, other crons another).
      if (stepText !== undefined) throw cronError(`${def.name}: a step needs * or a range (${item})`);
      to = from;
    }
    for (let v = from; v <= to; v += step) values.add(def.name === 'day-of-week' && v === 7 ? 0 : v);
  }
  return { star, values };
}

/** A valid cron's fields: what the description and the DST rule read. */
export interface ParsedCron {
  text: string;
  fields: FieldValues[];
}

/** Checks a cron against §23's grammar; throws a 400 on `cron` naming the field and value. */
export function parseCron(text: string): ParsedCron {
  if (text.length > CRON_MAX_LENGTH) throw cronError(`At most ${CRON_MAX_LENGTH} characters.`);
  const parts = text.trim().split(/\s+/);
  if (text.trim() === '' || parts.length !== 5)
    throw cronError(
      `Five fields (minute hour day-of-month month day-of-week), not ${text.trim() === '' ? 0 : parts.length}; no seconds field and no @-macros.`,
    );
  return { text: parts.join(' '), fields: parts.map((p, i) => parseField(FIELDS[i] as FieldDef, p)) };
}

function cronOf(parsed: ParsedCron, timeZone: string): Cron {
  try {
    return new Cron(parsed.text, { timezone: timeZone, paused: true, mode: '5-part', domAndDow: false });
  } catch (err) {
    // Our grammar is a subset of croner's: this is a gap between the two, told as it is.
    throw cronError(`"${parsed.text}": ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The next `count` run times strictly after `after`, in order. Throws a 400 on `cron` when
 * the expression never runs (`0 0 30 2 *`).
 */
export function nextRuns(parsed: ParsedCron, timeZone: string, after: Date, count: number): Date[] {
  const cron = cronOf(parsed, timeZone);
  const runs: Date[] = [];
  let from = after;
  while (runs.length < count) {
    const next = cron.nextRun(from);
    if (!next) break;
    runs.push(next);
    from = next;
  }
  if (!runs.length)
    throw cronError(`"${parsed.text}" never runs (no date matches its day and month fields).`);
  return runs;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Values as a short list: `1, 3 and 5`. */
const listed = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const ordinal = (n: number) =>
  `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;

/** A short English reading: `every Monday at 08:00 (Europe/Berlin)`. */
export function describeCron(parsed: ParsedCron, timeZone: string): string {
  const [minute, hour, dom, month, dow] = parsed.fields as [
    FieldValues,
    FieldValues,
    FieldValues,
    FieldValues,
    FieldValues,
  ];
  const sorted = (f: FieldValues) => [...f.values].sort((a, b) => a - b);
  let when: string;
  if (!minute.star && !hour.star && minute.values.size * hour.values.size <= 4) {
    const times = sorted(hour).flatMap((h) => sorted(minute).map((m) => `${pad(h)}:${pad(m)}`));
    when = `at ${listed(times)}`;
  } else if (minute.star && hour.star) when = 'every minute';
  else {
    const mins = minute.star ? 'every minute' : `at minute ${listed(sorted(minute).map(String))}`;
    const hours = hour.star ? 'of every hour' : `past hour ${listed(sorted(hour).map(String))}`;
    when = `${mins} ${hours}`;
  }
  const days: string[] = [];
  if (!dom.star) days.push(`on the ${listed(sorted(dom).map(ordinal))}`);
  if (!dow.star) days.push(`on ${listed(sorted(dow).map((d) => DAY_NAMES[d] ?? String(d)))}`);
  let day = days.join(' or ');
  if (!dow.star && dom.star) day = `every ${listed(sorted(dow).map((d) => DAY_NAMES[d] ?? String(d)))}`;
  const months = month.star ? '' : ` in ${listed(sorted(month).map((m) => MONTH_NAMES[m - 1] ?? String(m)))}`;
  const lead = day.startsWith('every') ? `${day} ${when}` : `${when}${day ? ` ${day}` : ' every day'}`;
  return `${lead}${months} (${timeZone})`;
}

const ZONE_TEXT = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;
let canonicalZones: Map<string, string> | undefined;

/**
 * An IANA zone name in its canonical spelling, or null: an unknown name, an offset, or an
 * abbreviation (`CEST`, and the legacy all-capitals zones such as `EST`, which read as
 * abbreviations and do not follow their region's daylight-saving rules).
 */
export function canonicalTimeZone(name: string): string | null {
  if (!ZONE_TEXT.test(name)) return null;
  if (name.toUpperCase() === 'UTC') return 'UTC';
  if (!name.includes('/') && name === name.toUpperCase()) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  canonicalZones ??= new Map(Intl.supportedValuesOf('timeZone').map((z) => [z.toLowerCase(), z]));
  const lower = name.toLowerCase();
  return canonicalZones.get(lower) ?? (resolved.toLowerCase() === lower ? resolved : name);
}

/** The local date and time of an instant in a zone: `2027-03-28 09:00`. */
export function localDateTime(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}
