import { describe, expect, it } from 'vitest';
import {
  parseTemplate,
  renderTemplate,
  TemplateError,
  templateVariables,
} from '../../../src/features/alerting/body-template.js';
import type { Notification } from '../../../src/features/alerting/notification.js';

const render = (template: string, vars: Record<string, unknown>, type = 'application/json') =>
  renderTemplate(parseTemplate(template), vars, type);

const firing: Notification = {
  kind: 'fire',
  trigger: { id: 7, name: 'Disk "full"', severity: 'high', description: 'line one\nline two' },
  condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 2, group_by: ['host'] },
  group: { host: 'web-1' },
  count: 3,
  window_seconds: 60,
  fired_at: '2026-11-27T10:00:00.000Z',
  samples: [
    { ev_id: 'a', ts: 1, message: 'say "hi"\\now' },
    { ev_id: 'b', ts: 2, message: null },
  ],
  search_url: 'http://logs.test/search?q=x',
};

describe('webhook body templates', () => {
  it('escapes {{name}} as inside a JSON string for a JSON type, and not otherwise', () => {
    const vars = templateVariables(firing);
    expect(render('{"t": "{{trigger.name}}", "d": "{{trigger.description}}"}', vars)).toBe(
      '{"t": "Disk \\"full\\"", "d": "line one\\nline two"}',
    );
    expect(JSON.parse(render('{"t": "{{trigger.name}}", "d": "{{trigger.description}}"}', vars))).toEqual({
      t: 'Disk "full"',
      d: 'line one\nline two',
    });
    // Numbers and booleans as they are; objects as their compact JSON, escaped; null as nothing.
    expect(render('{{count}} {{is_fire}} {{is_test}} [{{pattern}}]', vars)).toBe('3 true false []');
    expect(render('"{{group}}"', vars)).toBe('"{\\"host\\":\\"web-1\\"}"');
    expect(render('{{{group}}}', vars)).toBe('{"host":"web-1"}');
    expect(render('{{&trigger.name}}|{{{trigger.name}}}', vars)).toBe('Disk "full"|Disk "full"');
    expect(render('{{trigger.name}}', vars, 'text/plain')).toBe('Disk "full"');
    expect(render('{{trigger.name}}', vars, 'application/vnd.example+json; charset=utf-8')).toBe(
      'Disk \\"full\\"',
    );
    expect(render('{{group.host}} {{group_text}} {{condition.type}} {{kind}}', vars)).toBe(
      'web-1 host=web-1 threshold fire',
    );
  });

  it('renders sections: a list per item, a true or object value once, a false one not', () => {
    const vars = templateVariables(firing);
    expect(render('{{#samples}}[{{ev_id}}:{{message}}:{{count}}]{{/samples}}', vars)).toBe(
      '[a:say \\"hi\\"\\\\now:3][b::3]',
    );
    expect(
      render(
        '{{#is_fire}}F{{/is_fire}}{{#is_recover}}R{{/is_recover}}{{^is_recover}}!R{{/is_recover}}',
        vars,
      ),
    ).toBe('F!R');
    expect(render('{{#trigger}}{{name}}/{{severity}}{{/trigger}}', vars, 'text/plain')).toBe(
      'Disk "full"/high',
    );
    expect(render('{{#pattern}}P{{/pattern}}{{^pattern}}no pattern{{/pattern}}', vars)).toBe('no pattern');
    const falsy = { kind: '', count: 0, samples: [], group: {}, headline: null, is_fire: false };
    expect(
      render(
        '{{#kind}}a{{/kind}}{{#count}}b{{/count}}{{#samples}}c{{/samples}}{{#headline}}d{{/headline}}{{#is_fire}}e{{/is_fire}}{{#link}}f{{/link}}',
        falsy,
      ),
    ).toBe('');
    expect(
      render('{{^kind}}a{{/kind}}{{^count}}b{{/count}}{{^samples}}c{{/samples}}{{^link}}f{{/link}}', falsy),
    ).toBe('abcf');
    // An object, even an empty one, renders once.
    expect(render('{{#group}}g{{/group}}', falsy)).toBe('g');
    expect(render('{{#headline}}{{.}}{{/headline}}', { headline: 'a"b' })).toBe('a\\"b');
    expect(render('a{{! a comment }}b', {})).toBe('ab');
  });

  it('renders a variable of another kind as missing', () => {
    const vars = templateVariables(firing);
    expect(render('[{{report.title}}][{{link}}][{{schedule.name}}][{{run.at}}]', vars)).toBe('[][][][]');
    const test = templateVariables({ ...firing, kind: 'test', trigger: null, condition: null, group: {} });
    expect(render('{{kind}}:{{is_test}}:{{trigger.name}}:{{condition.type}}', test)).toBe('test:true::');
  });

  it('refuses what does not parse, naming the name or the position', () => {
    const fails = (template: string) => {
      try {
        parseTemplate(template);
      } catch (err) {
        expect(err).toBeInstanceOf(TemplateError);
        return (err as Error).message;
      }
      throw new Error(`parsed: ${template}`);
    };
    expect(fails('{"a": "{{trigger.nmae}}"}')).toBe('unknown variable "trigger.nmae" at line 1, column 8');
    expect(fails('x\n  {{nope}}')).toBe('unknown variable "nope" at line 2, column 3');
    expect(fails('{{ev_id}}')).toMatch(/unknown variable "ev_id"/);
    expect(fails('{{samples.message}}')).toMatch(/unknown variable "samples.message"/);
    expect(fails('{{#samples}}x')).toBe('section "samples" opened at line 1, column 1 is not closed');
    expect(fails('{{#samples}}{{/trigger}}')).toMatch(
      /"\{\{\/trigger\}\}" at line 1, column 13 does not close "samples"/,
    );
    expect(fails('{{/samples}}')).toMatch(/closes no section/);
    expect(fails('a {{kind')).toBe('unterminated tag at line 1, column 3');
    expect(fails('{{{kind}}')).toBe('unterminated tag at line 1, column 1');
    expect(fails('{{a b}}')).toMatch(/is not a name/);
    // Inside a list, its items' names are known, and the outer ones still.
    expect(() =>
      parseTemplate('{{#samples}}{{ev_id}}{{ts}}{{message}}{{count}}{{.}}{{/samples}}'),
    ).not.toThrow();
    expect(() => parseTemplate('{{#group}}{{host}}{{/group}}{{group.any_field}}')).not.toThrow();
  });
});
