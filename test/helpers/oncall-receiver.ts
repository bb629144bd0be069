/**
 * A loopback stand-in for the on-call vendors, for the alerting tests: it checks each
 * request against the vendor's documented shape and answers as the vendor does (202, or
 * 400 saying what is wrong), so a test sees the same outcome a real service would give.
 *
 * - PagerDuty Events API v2: `POST /v2/enqueue`, `{routing_key, event_action, dedup_key,
 *   payload: {summary, source, severity, ...}}` (payload only for trigger).
 * - Opsgenie Alert API: `POST /v2/alerts` (create: message, alias, description, priority,
 *   details...) and `POST /v2/alerts/{alias}/close?identifierType=alias`, with
 *   `Authorization: GenieKey <key>`.
 * - Teams Workflows: `POST /teams/...`, a message whose attachment is an Adaptive Card.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface VendorRequest {
  at: number;
  vendor: 'pagerduty' | 'opsgenie' | 'teams';
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** What the receiver found wrong with it (empty: valid). */
  problems: string[];
  status: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;

function pagerduty(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (!isText(body.routing_key, 200)) problems.push('routing_key missing');
  if (!['trigger', 'acknowledge', 'resolve'].includes(body.event_action as string))
    problems.push('event_action must be trigger, acknowledge or resolve');
  if (body.dedup_key !== undefined && !isText(body.dedup_key, 255)) problems.push('dedup_key over 255');
  if (body.event_action !== 'trigger') {
    if (!isText(body.dedup_key, 255)) problems.push('dedup_key required to resolve');
    return problems;
  }
  const p = body.payload;
  if (!isObject(p)) return [...problems, 'payload missing'];
  if (!isText(p.summary, 1024)) problems.push('payload.summary missing or over 1024');
  if (!isText(p.source, 255)) problems.push('payload.source missing');
  if (!['critical', 'error', 'warning', 'info'].includes(p.severity as string))
    problems.push('payload.severity invalid');
  if (p.timestamp !== undefined && Number.isNaN(Date.parse(String(p.timestamp))))
    problems.push('payload.timestamp not ISO 8601');
  for (const k of ['component', 'group', 'class'] as const)
    if (p[k] !== undefined && typeof p[k] !== 'string') problems.push(`payload.${k} not a string`);
  if (p.custom_details !== undefined && !isObject(p.custom_details))
    problems.push('payload.custom_details not an object');
  if (body.links !== undefined) {
    if (!Array.isArray(body.links)) problems.push('links not a list');
    else
      for (const l of body.links)
        if (!isObject(l) || typeof l.href !== 'string') problems.push('a link without href');
  }
  return problems;
}

function opsgenieCreate(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (!isText(body.message, 130)) problems.push('message missing or over 130');
  if (body.alias !== undefined && !isText(body.alias, 512)) problems.push('alias over 512');
  if (
    body.description !== undefined &&
    (typeof body.description !== 'string' || body.description.length > 15000)
  )
    problems.push('description over 15000');
  if (body.priority !== undefined && !['P1', 'P2', 'P3', 'P4', 'P5'].includes(body.priority as string))
    problems.push('priority invalid');
  if (body.source !== undefined && !isText(body.source, 100)) problems.push('source over 100');
  if (body.entity !== undefined && !isText(body.entity, 512)) problems.push('entity over 512');
  if (body.tags !== undefined && (!Array.isArray(body.tags) || body.tags.some((t) => !isText(t, 50))))
    problems.push('tags invalid');
  if (body.details !== undefined) {
    if (!isObject(body.details)) problems.push('details not an object');
    else if (Object.values(body.details).some((v) => typeof v !== 'string'))
      problems.push('details not strings');
  }
  return problems;
}

function teams(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (body.type !== 'message') problems.push('type must be message');
  const attachments = body.attachments;
  if (!Array.isArray(attachments) || attachments.length === 0) return [...problems, 'no attachments'];
  const a = attachments[0] as Record<string, unknown>;
  if (a.contentType !== 'application/vnd.microsoft.card.adaptive') problems.push('contentType not adaptive');
  const card = a.content;
  if (!isObject(card)) return [...problems, 'no card'];
  if (card.type !== 'AdaptiveCard') problems.push('content.type must be AdaptiveCard');
  if (typeof card.version !== 'string') problems.push('content.version missing');
  if (!Array.isArray(card.body)) problems.push('content.body not a list');
  else
    for (const element of card.body) {
      if (!isObject(element) || typeof element.type !== 'string')
        problems.push('a body element without type');
      else if (element.type === 'TextBlock' && typeof element.text !== 'string')
        problems.push('TextBlock text');
      else if (
        element.type === 'FactSet' &&
        (!Array.isArray(element.facts) ||
          element.facts.some(
            (f) => !isObject(f) || typeof f.title !== 'string' || typeof f.value !== 'string',
          ))
      )
        problems.push('FactSet facts must be {title, value} strings');
    }
  if (card.actions !== undefined && !Array.isArray(card.actions)) problems.push('actions not a list');
  else
    for (const action of (card.actions as unknown[]) ?? [])
      if (!isObject(action) || (action.type === 'Action.OpenUrl' && typeof action.url !== 'string'))
        problems.push('Action.OpenUrl without url');
  return problems;
}

/**
 * The receiver. `answer(request)` may replace the status of a valid request (to fail on
 * purpose); an invalid one always gets 400, as from the vendor.
 */
export async function oncallReceiver(answer: (r: VendorRequest) => number | undefined = () => undefined) {
  const got: VendorRequest[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://receiver');
      let body: Record<string, unknown> = {};
      const problems: string[] = [];
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        problems.push('not JSON');
      }
      if (!String(req.headers['content-type']).startsWith('application/json'))
        problems.push('content-type not JSON');
      let vendor: VendorRequest['vendor'];
      if (url.pathname === '/v2/enqueue') {
        vendor = 'pagerduty';
        problems.push(...pagerduty(body));
      } else if (url.pathname.startsWith('/v2/alerts')) {
        vendor = 'opsgenie';
        if (!/^GenieKey \S+$/.test(String(req.headers.authorization ?? '')))
          problems.push('Authorization: GenieKey <key> missing');
        if (url.pathname === '/v2/alerts') problems.push(...opsgenieCreate(body));
        else if (!/^\/v2\/alerts\/[^/]+\/close$/.test(url.pathname)) problems.push('not an alert action');
        else if (url.searchParams.get('identifierType') !== 'alias')
          problems.push('identifierType not alias');
      } else {
        vendor = 'teams';
        problems.push(...teams(body));
      }
      if (req.method !== 'POST') problems.push('not a POST');
      const request: VendorRequest = {
        at: Date.now(),
        vendor,
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        problems,
        status: 0,
      };
      request.status = problems.length ? 400 : (answer(request) ?? 202);
      got.push(request);
      const reply =
        vendor === 'pagerduty'
          ? problems.length
            ? { status: 'invalid event', message: 'Event object is invalid', errors: problems }
            : { status: 'success', message: 'Event processed', dedup_key: body.dedup_key }
          : vendor === 'opsgenie'
            ? { result: problems.length ? problems.join('; ') : 'Request will be processed', took: 0.01 }
            : {};
      res.writeHead(request.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    got,
    base,
    /** A Teams Workflows-like URL, its signature in the query as Teams' are. */
    teamsUrl: `${base}/teams/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=s3cr3tsig`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
