/**
 * Time formats of the `timestamp` step, as Elasticsearch's date processor takes them:
 * `ISO8601`, `UNIX` (seconds, fraction allowed), `UNIX_MS`, or a Java/Joda-style pattern
 * (`dd/MMM/yyyy:HH:mm:ss Z`, `EEE MMM dd HH:mm:ss yyyy`, `MMM d HH:mm:ss`).
 *
 * Written here rather than taken from a date library: the libraries of the field read
 * Unicode (date-fns) or their own (Luxon, Day.js) tokens, which differ from Joda's in
 * exactly the letters logs use (`Z`, `a`, `E`, `S`), and parse at several µs a call; a
 * pattern compiled once into one regular expression reads a time in well under one.
 *
 * Letters: `y`/`u` year (`yy` is 2000–2099), `M` month (`MMM`/`MMMM` by English name,
 * any case), `d` day, `H`/`k` hour of day, `h`/`K` hour of half-day with `a` (AM/PM), `m`,
 * `s`, `S` fraction (any number of digits; milliseconds kept), `E` day name (read, not
 * checked), `Z`/`X`/`x` zone offset (`+0200`, `+02:00`, `Z`), `z`/`ZZZ`/`VV` the zone
 * names `UTC`, `GMT` and `Z`. `'text'` is literal (`''` a quote); other characters are
 * literal, and a space matches one or more spaces (syslog pads days: `Jun  4`). A time
 * without a zone is read in the step's `timezone` (an offset, default UTC); one without a
 * year gets the latest year that keeps it at most a day after the event was received, as
 * syslog times do.
 */
import { checkedUtc, inferYear, parseIsoMs } from '../../core/time.js';
import { compileRegex, escapeRegex } from '../../filter/regex.js';

/** Reads a time; `receivedAt` (Unix ms) stands in for the year when the text has none. */
export type TimeParser = (text: string, receivedAt: number) => number | null;

export class TimeFormatError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_NAMES =
  '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DAY_NAMES = '(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*';

type Part = 'year' | 'year2' | 'month' | 'monthName' | 'day' | 'hour' | 'hour12' | 'ampm' | 'minute';
type Slot = Part | 'second' | 'fraction' | 'offset' | 'zoneName' | null;

/** Parses a zone offset (`+0200`, `+02:00`, `+02`, `Z`) into minutes east of UTC. */
export function parseOffset(text: string): number | null {
  if (text === 'Z' || text === 'z') return 0;
  const m = /^([+-])(\d\d):?(\d\d)?$/.exec(text);
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  if (Number(m[2]) > 18 || Number(m[3] ?? 0) > 59) return null;
  return m[1] === '-' ? -minutes : minutes;
}

/** Compiles one format; throws TimeFormatError for letters it does not know. */
export function compileTimeFormat(format: string, defaultOffsetMinutes = 0): TimeParser {
  switch (format) {
    case 'ISO8601':
      return (text) => parseIsoMs(text.trim());
    case 'UNIX':
      return (text) => (/^\d+(?:\.\d+)?$/.test(text.trim()) ? Math.floor(Number(text) * 1000) : null);
    case 'UNIX_MS':
      return (text) => (/^\d+$/.test(text.trim()) ? Number(text) : null);
    default:
      return compilePattern(format, defaultOffsetMinutes);
  }
}

function compilePattern(format: string, defaultOffset: number): TimeParser {
  let source = '^\\s*';
  const slots: Slot[] = [];
  for (let i = 0; i < format.length; ) {
    const ch = format[i] as string;
    if (ch === "'") {
      const end = format.indexOf("'", i + 1);
      if (end === i + 1) {
        source += "'";
        i += 2;
        continue;
      }
      if (end === -1) throw new TimeFormatError('unterminated quoted text', i);
      source += escapeRegex(format.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    if (!/[A-Za-z]/.test(ch)) {
      source += ch === ' ' ? ' +' : escapeRegex(ch);
      i++;
      continue;
    }
    let n = 1;
    while (format[i + n] === ch) n++;
    const [re, slot] = letter(ch, n, i);
    source += re;
    if (slot !== null) slots.push(slot);
    i += n;
  }
  // RE2: a format's pattern meets every record's text (`' +'` and `\s*` runs backtrack
  // exponentially in a JavaScript regular expression on a line of spaces).
  const re = compileRegex(`${source}\\s*$`, { ignoreCase: true });
  if (!slots.some((s) => s === 'day') || !slots.some((s) => s === 'month' || s === 'monthName'))
    throw new TimeFormatError('a time format needs at least a month and a day', 0);
  return (text, receivedAt) => {
    const m = re.exec(text);
    if (!m) return null;
    let year: number | null = null;
    let month = 1;
    let day = 1;
    let hour = 0;
    let minute = 0;
    let second = 0;
    let millis = 0;
    let pm: boolean | null = null;
    let offset = defaultOffset;
    for (let k = 0; k < slots.length; k++) {
      const value = m[k + 1] as string;
      switch (slots[k]) {
        case 'year':
          year = Number(value);
          break;
        case 'year2':
          year = 2000 + Number(value);
          break;
        case 'month':
          month = Number(value);
          break;
        case 'monthName':
          month = MONTHS.indexOf(value.slice(0, 3).toLowerCase()) + 1;
          break;
        case 'day':
          day = Number(value);
          break;
        case 'hour':
          hour = Number(value);
          break;
        case 'hour12':
          hour = Number(value) % 12;
          break;
        case 'ampm':
          pm = value.toLowerCase() === 'pm';
          break;
        case 'minute':
          minute = Number(value);
          break;
        case 'second':
          second = Number(value);
          break;
        case 'fraction':
          millis = Number(value.slice(0, 3).padEnd(3, '0'));
          break;
        case 'offset': {
          const o = parseOffset(value);
          if (o === null) return null;
          offset = o;
          break;
        }
        case 'zoneName':
          offset = 0;
          break;
        default:
          break;
      }
    }
    if (pm === true) hour += 12;
    if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
    const ms =
      year === null
        ? inferYear(month, day, hour, minute, second, millis, receivedAt + offset * 60_000)
        : checkedUtc(year, month, day, hour, minute, second, millis);
    return ms === null ? null : ms - offset * 60_000;
  };
}

function letter(ch: string, n: number, at: number): [string, Slot] {
  const digits = (min: number, max: number) => `(\\d{${min},${max}})`;
  switch (ch) {
    case 'y':
    case 'u':
    case 'Y':
      return n === 2 ? [digits(2, 2), 'year2'] : [digits(4, 4), 'year'];
    case 'M':
      if (n >= 3) return [`(${MONTH_NAMES})`, 'monthName'];
      return [n === 2 ? digits(2, 2) : digits(1, 2), 'month'];
    case 'd':
      return [n === 2 ? digits(2, 2) : digits(1, 2), 'day'];
    case 'H':
    case 'k':
      return [n === 2 ? digits(2, 2) : digits(1, 2), 'hour'];
    case 'h':
    case 'K':
      return [n === 2 ? digits(2, 2) : digits(1, 2), 'hour12'];
    case 'm':
      return [n === 2 ? digits(2, 2) : digits(1, 2), 'minute'];
    case 's':
      return [n === 2 ? digits(2, 2) : digits(1, 2), 'second'];
    case 'S':
      return ['(\\d{1,9})', 'fraction'];
    case 'a':
      return ['(am|pm)', 'ampm'];
    case 'E':
      return [DAY_NAMES, null];
    case 'Z':
      if (n >= 3) return ['(utc|gmt|z)', 'zoneName'];
      return ['(z|[+-]\\d\\d:?\\d\\d)', 'offset'];
    case 'X':
    case 'x':
      return ['(z|[+-]\\d\\d(?::?\\d\\d)?)', 'offset'];
    case 'z':
    case 'V':
      return ['(utc|gmt|z)', 'zoneName'];
    default:
      throw new TimeFormatError(`unsupported pattern letter "${ch}"`, at);
  }
}
