/**
 * The settings of the on-call channel kinds and of a webhook's body template, checked as
 * channels-service.ts checks the others: each problem named by its `config.<key>` path.
 */
import { isJsonType, parseTemplate, TEMPLATE_MAX_BYTES, TemplateError } from './body-template.js';
import {
  OPSGENIE_PRIORITIES,
  type OpsgenieConfig,
  PAGERDUTY_SEVERITIES,
  type PagerdutyConfig,
  SEVERITIES,
} from './oncall-payloads.js';

/** How a secret is shown: it is write-only; sending this back keeps the stored one. */
export const SECRET_MASK = '********';

type Fail = (key: string, message: string) => void;

/** A write-only text (a routing or API key): the mask keeps the stored one. */
function secretText(raw: unknown, stored: string | undefined, key: string, fail: Fail): string {
  if (raw === SECRET_MASK) {
    if (stored) return stored;
    fail(key, 'No stored value to keep: give the value.');
    return '';
  }
  if (typeof raw !== 'string' || raw.trim() === '' || raw.length > 200 || /[\r\n\0]/.test(raw))
    fail(key, 'Text of 1 to 200 characters on one line.');
  return typeof raw === 'string' ? raw : '';
}

/** A map from trigger severities to `values`; undefined when not given. */
function severityMap(
  raw: unknown,
  values: readonly string[],
  key: string,
  fail: Fail,
): Record<string, string> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    fail(key, `An object from severities (${SEVERITIES.join(', ')}) to ${values.join(', ')}.`);
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [severity, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!(SEVERITIES as readonly string[]).includes(severity))
      fail(`${key}.${severity}`, `Not a severity (${SEVERITIES.join(', ')}).`);
    else if (typeof value !== 'string' || !values.includes(value))
      fail(`${key}.${severity}`, `One of ${values.join(', ')}.`);
    else out[severity] = value;
  }
  return out;
}

export function checkPagerduty(
  raw: Record<string, unknown>,
  stored: Partial<PagerdutyConfig> | undefined,
  fail: Fail,
): PagerdutyConfig {
  const out: PagerdutyConfig = {
    routing_key: secretText(raw.routing_key, stored?.routing_key, 'routing_key', fail),
  };
  const map = severityMap(raw.severity_map, PAGERDUTY_SEVERITIES, 'severity_map', fail);
  if (map) out.severity_map = map;
  return out;
}

export function checkOpsgenie(
  raw: Record<string, unknown>,
  stored: Partial<OpsgenieConfig> | undefined,
  fail: Fail,
): OpsgenieConfig {
  const out: OpsgenieConfig = { api_key: secretText(raw.api_key, stored?.api_key, 'api_key', fail) };
  if (raw.region !== undefined && raw.region !== null) {
    if (raw.region !== 'us' && raw.region !== 'eu') fail('region', 'us or eu.');
    else out.region = raw.region;
  }
  const map = severityMap(raw.priority_map, OPSGENIE_PRIORITIES, 'priority_map', fail);
  if (map) out.priority_map = map;
  return out;
}

/** A media type as a Content-Type header carries it (`type/subtype`, parameters allowed). */
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;[^\r\n\0]*)?$/;

/** A webhook's `body_template` and `content_type`, as stored (absent ones left out). */
export function checkTemplate(
  raw: Record<string, unknown>,
  fail: Fail,
): { body_template?: string; content_type?: string } {
  const out: { body_template?: string; content_type?: string } = {};
  const contentType = raw.content_type;
  if (contentType !== undefined && contentType !== null) {
    if (typeof contentType !== 'string' || contentType.length > 200 || !MEDIA_TYPE.test(contentType))
      fail('content_type', 'A media type (application/json, text/plain; charset=utf-8).');
    else out.content_type = contentType;
  }
  const template = raw.body_template;
  if (template !== undefined && template !== null && template !== '') {
    if (typeof template !== 'string') fail('body_template', 'Text: a template.');
    else if (Buffer.byteLength(template) > TEMPLATE_MAX_BYTES)
      fail('body_template', `At most ${TEMPLATE_MAX_BYTES} bytes.`);
    else {
      try {
        parseTemplate(template);
        out.body_template = template;
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        fail('body_template', `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`);
      }
    }
  } else if (out.content_type && !isJsonType(out.content_type))
    // Without a template the body is the JSON notification: it must say so.
    fail('content_type', 'Without a body_template the body is JSON: leave content_type out.');
  return out;
}
