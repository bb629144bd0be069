/**
 * Issue 29: every pattern that meets data runs in linear time. A sweep of every built-in
 * pipeline pattern, every grok library pattern and every time format the built-ins use,
 * each on adversarial inputs (long runs that make a backtracking engine try every split),
 * under a time bound per input; then the whole built-in set on the same records.
 */
import { describe, expect, it } from 'vitest';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import { BUILTIN_PIPELINES, builtinPipelineSet } from '../../../../src/ingest/pipelines/builtin-pipelines.js';
import { compileTrustedPattern } from '../../../../src/ingest/pipelines/grok.js';
import { GROK_LIBRARY } from '../../../../src/ingest/pipelines/grok-library.js';
import { compileTimeFormat } from '../../../../src/ingest/pipelines/time-format.js';

const KB64 = 64 * 1024;
/**
 * A backtracking engine takes seconds on some of these (a quadratic match of 64 KiB is
 * ~4·10⁹ steps); RE2 is linear: its slowest, `%{USERNAME}` matching all 64 KiB, took
 * 50 ms on a normal day and 110 on a day the machine ran at half speed.
 */
const BOUND_MS = 250;

const runs = (unit: string, bytes = KB64) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
const ADVERSARIAL: string[] = [
  runs(' '),
  runs('a'),
  runs('1'),
  runs('1.'),
  runs('a '),
  runs(':'),
  runs('['),
  runs('\t '),
  ` ${runs(' ', 80)}x`,
  `Dec${runs(' ', 80)}x`,
  `Dec 10 06:55:46${runs(' ')}x`,
  `Dec 10 06:55:46 ${runs('a')}`,
  `Dec 10 06:55:46 host ${runs('a', 120)}`,
  `<1>${runs('1', 128)}`,
  `2024-01-02T03:04:05Z ${runs('a-', 2000)}`,
  `Failed password for ${runs('a ', KB64)}`,
  `pam_unix(${runs('(', 4000)}`,
  `${runs('1.1.', 4000)}x`,
  `[${runs('[a] ', 8000)}`,
  `10.0.0.1 - ${runs('- ', 8000)}`,
  `IN= OUT= ${runs('MAC= ', 8000)}`,
  `${runs('a:', 4000)}::`,
];
// The same after a syslog header (what the syslog-line pipeline reads on), and each with a
// line break at the end, which `.` does not match: a greedy run then retries every split.
for (const base of [...ADVERSARIAL]) {
  ADVERSARIAL.push(
    `${base}\n`,
    `Dec 10 06:55:46 host ${base}\n`,
    `Dec 10 06:55:46 host app: ${base.slice(0, 8000)}\nx`,
  );
}

/** The slowest call of `f` over the adversarial inputs, and on which. */
function slowest(f: (text: string) => unknown): { ms: number; input: string } {
  // A pattern compiles on its first text (a built-in's, grok.ts), one form for texts with a
  // colon and one for texts without: both first, so the bound is the matching's.
  f('');
  f(':');
  let worst = { ms: 0, input: '' };
  for (const input of ADVERSARIAL) {
    const started = performance.now();
    f(input);
    const ms = performance.now() - started;
    if (ms > worst.ms) worst = { ms, input: `${input.slice(0, 40)}… (${input.length})` };
  }
  return worst;
}

const builtinPatterns = BUILTIN_PIPELINES.flatMap((def) =>
  (def.steps as Array<Record<string, { patterns?: string[] }>>).flatMap((step) =>
    (step.grok?.patterns ?? []).map((pattern) => [def.key, pattern] as const),
  ),
);
const builtinFormats = [
  ...new Set(
    BUILTIN_PIPELINES.flatMap((def) =>
      (def.steps as Array<Record<string, { formats?: string[] }>>).flatMap(
        (step) => step.timestamp?.formats ?? [],
      ),
    ),
  ),
];

describe('no pattern that meets data backtracks', () => {
  it.each(builtinPatterns)('built-in %s: %s', (_key, pattern) => {
    const extract = compileTrustedPattern(pattern);
    const worst = slowest(extract);
    expect(worst.ms, `slowest on ${worst.input}`).toBeLessThan(BOUND_MS);
  });

  it.each(Object.keys(GROK_LIBRARY))('grok library %%{%s}, anchored and not', (name) => {
    for (const pattern of [`%{${name}:f}`, `^%{${name}:f}$`, `^%{${name}:f} %{${name}:g}`]) {
      const worst = slowest(compileTrustedPattern(pattern));
      expect(worst.ms, `${pattern} slowest on ${worst.input}`).toBeLessThan(BOUND_MS);
    }
  });

  // A user's format may begin or end with a space, or hold runs of them: each space is a
  // ` +` run that overlaps its neighbours (and the `\s*` at both ends) in a backtracking engine.
  it.each([
    ...builtinFormats,
    'yyyy-MM-dd HH:mm:ss',
    'EEE, d MMM yyyy HH:mm:ss Z',
    'MMM     d    HH:mm:ss',
    ' MMM d HH:mm:ss',
    'MMM d HH:mm:ss ',
  ])('time format "%s"', (format) => {
    const parse = compileTimeFormat(format);
    const worst = slowest((text) => parse(text, Date.now()));
    expect(worst.ms, `slowest on ${worst.input}`).toBeLessThan(BOUND_MS);
  });

  it('the whole built-in set on each adversarial record, with and without an app', () => {
    const set = builtinPipelineSet();
    for (const app of [undefined, 'sshd', 'su', 'kernel', 'nginx', 'apache']) {
      const worst = slowest((message) => {
        const r = normaliseRecord(app ? { message, app } : { message }, {
          receivedAt: Date.now(),
          intake: 'test',
          newId: () => 'id',
        });
        if (r.ok) set.run(r.event);
      });
      expect(worst.ms, `app ${app}: slowest on ${worst.input}`).toBeLessThan(4 * BOUND_MS);
    }
  });
});

/**
 * The class, not the instance: a JavaScript regular expression built at run time (from a
 * user's pattern or from data) is how a backtracking stall gets in. Each such place in
 * src/ is named here with why it is linear; a new one fails until it uses RE2
 * (filter/regex.ts) or is added here with its reason.
 */
const AUDITED_DYNAMIC_REGEXPS: Record<string, string> = {
  'src/features/triggers/trigger-index.ts':
    'an alternation of escaped literals (no quantifier): one pass per start position',
};

describe('no JavaScript regular expression is built at run time outside the audited places', () => {
  it('finds new RegExp( only where audited', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const path = await import('node:path');
    const found = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (/\.tsx?$/.test(entry.name) && /\bRegExp\(/.test(readFileSync(file, 'utf8'))) found.add(file);
      }
    };
    walk('src');
    expect([...found].sort()).toEqual(Object.keys(AUDITED_DYNAMIC_REGEXPS).sort());
  });
});
