/**
 * What the kinds' checks share: write-only credentials kept by their mask, a URL (kept when
 * it is the credential, its origin guarding what goes with it) and a map from trigger
 * severities to a vendor's values. Each problem is named by its `config.<key>` path.
 */
import type { Fail, KeepRefused } from './channel-kind.js';

/** How a secret is shown: it is write-only; sending this back keeps the stored one. */
export const SECRET_MASK = '********';

/** Trigger severities: the keys of PagerDuty's and Opsgenie's maps. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;

/** The message for a mask sent back that cannot keep the stored value. */
export const giveAgain = (stored: unknown, refused: KeepRefused): string =>
  !stored
    ? 'No stored value to keep: give the value.'
    : `Give the value again: a stored credential stays with its destination, and ${refused}.`;

/**
 * A URL as shown when it is the credential (a Slack incoming webhook's path): only its
 * origin (`https://hooks.slack.com/********`).
 */
export function maskedUrl(url: string): string {
  try {
    return `${new URL(url).origin}/${SECRET_MASK}`;
  } catch {
    return SECRET_MASK;
  }
}

/** A write-only text (a routing or API key): the mask keeps the stored one. */
export function secretText(
  raw: unknown,
  stored: string | undefined,
  key: string,
  fail: Fail,
  refused: KeepRefused,
): string {
  if (raw === SECRET_MASK) {
    if (stored && !refused) return stored;
    fail(key, giveAgain(stored, refused));
    return '';
  }
  if (typeof raw !== 'string' || raw.trim() === '' || raw.length > 200 || /[\r\n\0]/.test(raw))
    fail(key, 'Text of 1 to 200 characters on one line.');
  return typeof raw === 'string' ? raw : '';
}

/** A map from trigger severities to `values`; undefined when not given. */
export function severityMap(
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

const originOf = (url: string | undefined) => {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
};

/**
 * A channel's `url`: http or https, without user:password. When the URL is the credential
 * (`secretUrl`) it is shown masked, and sent back as shown it keeps the stored one (unless
 * `refused`). `keep`: whether what goes with the URL (a webhook's headers and secret) may be
 * kept by its mask: not when refused, nor for a new origin.
 */
export function checkUrl(
  raw: unknown,
  storedUrl: string | undefined,
  secretUrl: boolean,
  fail: Fail,
  refused: KeepRefused,
): { url: string; keep: KeepRefused } {
  let parsed: URL | undefined;
  try {
    parsed = typeof raw === 'string' && raw.length <= 2000 ? new URL(raw) : undefined;
  } catch {
    parsed = undefined;
  }
  const masked = secretUrl && !!storedUrl && raw === maskedUrl(storedUrl);
  const keptUrl = masked && !refused ? storedUrl : undefined;
  if (masked && refused) fail('url', giveAgain(storedUrl, refused));
  else if (keptUrl) parsed = new URL(keptUrl);
  const keep: KeepRefused =
    refused ??
    (storedUrl && parsed && originOf(storedUrl) !== parsed.origin ? "the URL's origin changed" : null);
  if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.username || parsed.password)
    fail('url', 'An http:// or https:// URL (without user:password; use headers).');
  return { url: keptUrl ?? String(raw), keep };
}
