import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditOutcome, AuditTrail } from './audit-trail.js';

/** What a request's detail holds, from its body, params, query and answer. */
type Describe = (r: {
  body: Record<string, unknown>;
  params: Record<string, string>;
  query: Record<string, string>;
  answer: Record<string, unknown>;
}) => Record<string, unknown>;

interface Audited {
  action: string;
  /** The kind of what it acts on, and where its id is (a route param, or a field of the answer). */
  target?: { kind: string; param?: string; answer?: string };
  detail?: Describe;
}

const named = (kind: string, plural: string): Record<string, Audited> => ({
  [`POST /api/${plural}`]: { action: `${kind}.create`, target: { kind, answer: 'id' } },
  [`PATCH /api/${plural}/:id`]: { action: `${kind}.update`, target: { kind, param: 'id' } },
  [`PUT /api/${plural}/:id`]: { action: `${kind}.update`, target: { kind, param: 'id' } },
  [`DELETE /api/${plural}/:id`]: { action: `${kind}.delete`, target: { kind, param: 'id' } },
});

/** A token's id without its secret: the part before the first `_`. */
const keyIdOf = (secret: string | undefined) => (secret ?? '').split('_')[0] ?? '';

/** Which widgets an answer holds (a dashboard's, in layout order), with what each reads. */
const widgetsOf = (answer: Record<string, unknown>) =>
  Array.isArray(answer.widgets)
    ? (answer.widgets as Array<Record<string, unknown>>).map((w) => ({ id: w.id, query: w.query }))
    : null;

/** A widget's change: the widget's query as it now is (a widget defines a read). */
const widgetChange: Audited['detail'] = ({ answer }) => ({ query: answer.query ?? null });

/**
 * What the audit trail records (docs/api/audit.md) by route: sign-ins, tokens, changes to users,
 * teams, streams, pipelines, triggers, channels, dashboards and widgets, exports and report
 * downloads. One table, read by one hook every request goes through: a route is recorded
 * by being named here, never by code in its handler. Reads are not here: each is recorded
 * where it begins, in the service every door calls (`ReadAudit`: queries, events and
 * their context, widgets' queries over the websocket), so a read is recorded once and a
 * new door cannot miss it.
 */
export const AUDITED: Readonly<Record<string, Audited>> = {
  'POST /api/auth/login': {
    action: 'auth.login',
    detail: ({ body }) => ({
      method: 'password',
      username: typeof body.username === 'string' ? body.username : null,
    }),
  },
  'GET /api/auth/oidc/callback': {
    action: 'auth.login',
    detail: () => ({ method: 'oidc' }),
  },
  'POST /api/authtokens': {
    action: 'token.create',
    target: { kind: 'token', answer: 'key_id' },
    detail: ({ answer }) => ({ token_type: answer.token_type ?? null }),
  },
  'DELETE /api/authtokens/:secret_key': {
    action: 'token.delete',
    target: { kind: 'token', param: 'secret_key' },
  },
  ...named('user', 'users'),
  ...named('team', 'teams'),
  ...named('stream', 'streams'),
  ...named('pipeline', 'pipelines'),
  ...named('trigger', 'triggers'),
  ...named('channel', 'channels'),
  ...Object.fromEntries(
    Object.entries(named('log_metric', 'log-metrics')).map(([route, a]) => [
      route,
      route.startsWith('PATCH') || route.startsWith('PUT')
        ? ({
            ...a,
            // A reset sets `counting_since` to the change's instant, which is `updated_at`.
            detail: ({ body, answer }) => ({
              changed: Object.keys(body).sort(),
              reset: answer.counting_since !== undefined && answer.counting_since === answer.updated_at,
            }),
          } satisfies Audited)
        : a,
    ]),
  ),
  'POST /api/log-metrics/:id/backfill': {
    action: 'log_metric.backfill',
    target: { kind: 'log_metric', param: 'id' },
    detail: ({ answer }) => ({ job_id: answer.id ?? null, from: answer.from ?? null, to: answer.to ?? null }),
  },
  // A dashboard's body may create and change widgets (which define reads).
  ...Object.fromEntries(
    Object.entries(named('dashboard', 'dashboards')).map(([route, a]) => [
      route,
      { ...a, detail: ({ answer }) => ({ widgets: widgetsOf(answer) }) } satisfies Audited,
    ]),
  ),
  'POST /api/dashboards/:id/widgets': {
    action: 'widget.create',
    target: { kind: 'widget', answer: 'id' },
    detail: (r) => ({ dashboard_id: r.params.id ?? null, ...widgetChange(r) }),
  },
  'PUT /api/widgets/:id': {
    action: 'widget.update',
    target: { kind: 'widget', param: 'id' },
    detail: widgetChange,
  },
  'PATCH /api/widgets/:id': {
    action: 'widget.update',
    target: { kind: 'widget', param: 'id' },
    detail: widgetChange,
  },
  'DELETE /api/widgets/:id': { action: 'widget.delete', target: { kind: 'widget', param: 'id' } },
  'GET /api/query/:qid/export': {
    action: 'export.download',
    target: { kind: 'query', param: 'qid' },
    detail: ({ query }) => ({ ftype: query.ftype ?? 'json' }),
  },
  // A report defines reads (run as its owner when it is generated, recorded then, `via: report`).
  'POST /api/reports': {
    action: 'report.create',
    target: { kind: 'report', answer: 'id' },
    detail: ({ body }) => ({ ftype: body.ftype ?? null, source: body.source ?? null }),
  },
  // Through a signed link (docs/api/schedules.md): no user, the address kept.
  'GET /api/reports/:id/file': {
    action: 'report.download',
    target: { kind: 'report', param: 'id' },
    detail: ({ query }) => (query.sig !== undefined ? { via: 'link' } : {}),
  },
  // Links are recorded (ADR 0034): those a delivery carries by the link records themselves.
  'POST /api/reports/:id/link': {
    action: 'report.link',
    target: { kind: 'report', param: 'id' },
    detail: ({ answer }) => ({
      via: 'request',
      link_id: answer.id ?? null,
      expires_at: answer.expires_at ?? null,
    }),
  },
  'DELETE /api/reports/:id/links/:link_id': {
    action: 'report.link_revoke',
    target: { kind: 'report', param: 'id' },
    detail: ({ params }) => ({ link_id: Number(params.link_id) }),
  },
  // Sending a test reaches the channel's destination: who tried which, and whether it answered.
  'POST /api/channels/:id/test': {
    action: 'channel.test',
    target: { kind: 'channel', param: 'id' },
    detail: ({ answer }) => ({ sent: answer.sent ?? null }),
  },
  // A schedule defines reads (each run is recorded by the scheduler as `schedule.run`).
  ...named('schedule', 'schedules'),
  // The cold tier's operations (docs/api/cold.md): a verify changes nothing but reads every file.
  'POST /api/cold/verify': {
    action: 'cold.verify',
    target: { kind: 'cold_job', answer: 'id' },
    detail: ({ body, answer }) => ({
      stream_id: body.stream_id ?? null,
      checksums: body.checksums ?? true,
      status: answer.status ?? null,
      problems: Array.isArray(answer.problems) ? answer.problems.length : null,
    }),
  },
  'POST /api/cold/import': {
    action: 'cold.import',
    target: { kind: 'cold_job', answer: 'id' },
    detail: ({ body, answer }) => ({
      path: typeof body.path === 'string' ? body.path : null,
      stream_id: body.stream_id ?? null,
      status: answer.status ?? null,
      events: typeof answer.events === 'number' ? answer.events : null,
    }),
  },
  // Backups (docs/api/backups.md): each request, whatever its outcome; the job's end is
  // recorded by the service as `backup.finish`.
  'POST /api/admin/backups': {
    action: 'backup.create',
    target: { kind: 'backup', answer: 'id' },
    detail: ({ body, answer }) => ({
      path: typeof body.path === 'string' ? body.path : null,
      since: typeof body.since === 'string' ? body.since : null,
      kind: typeof answer.kind === 'string' ? answer.kind : body.since ? 'incremental' : 'full',
      ...(typeof answer.code === 'string' ? { code: answer.code } : {}),
    }),
  },
  'DELETE /api/admin/backups/:id': { action: 'backup.cancel', target: { kind: 'backup', param: 'id' } },
  'GET /api/audit/export': {
    action: 'audit.export',
    detail: ({ query }) => ({ ftype: query.ftype ?? 'ndjson' }),
  },
};

const outcomeOf = (status: number): AuditOutcome =>
  status < 400 ? 'ok' : status === 401 || status === 403 ? 'denied' : 'error';

/** Answers up to this size are read for ids and counts; larger ones (exports) are not. */
const MAX_ANSWER = 1 << 20;

declare module 'fastify' {
  interface FastifyRequest {
    auditAnswer?: string;
    /** The body passed its schema (the handler was reached): only then is it read. */
    auditBodyValid?: boolean;
    /** The request failed its schema's validation (a 400 before the handler). */
    auditInvalid?: boolean;
    /** Who a sign-in that answers no token in JSON (single sign-on) signed in. */
    signedIn?: { user_id: number; username: string; token_key_id: string };
  }
}

/** Registers the hook that records every audited request, whatever its outcome. */
export function auditHook(app: FastifyInstance, trail: AuditTrail): void {
  const audited = (request: FastifyRequest) => AUDITED[`${request.method} ${request.routeOptions.url ?? ''}`];
  app.addHook('preHandler', async (request) => {
    if (audited(request)) request.auditBodyValid = true;
  });
  app.addHook('onError', async (request, _reply, error) => {
    if ((error as { validation?: unknown }).validation && audited(request)) request.auditInvalid = true;
  });
  // Recorded before the answer leaves: a client that reads the trail right after its answer
  // finds the record (onResponse runs after the bytes are sent, a race with that read).
  app.addHook('onSend', async (request, reply, payload) => {
    const a = audited(request);
    if (!a) return payload;
    if (typeof payload === 'string' && payload.length <= MAX_ANSWER) request.auditAnswer = payload;
    try {
      trail.record(entryOf(request, reply, a));
    } catch {
      // Recording never fails the request it records.
    }
    return payload;
  });
}

function entryOf(request: FastifyRequest, reply: FastifyReply, a: Audited) {
  let answer: Record<string, unknown> = {};
  try {
    const parsed = request.auditAnswer ? (JSON.parse(request.auditAnswer) as unknown) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      answer = parsed as Record<string, unknown>;
  } catch {
    // not JSON: no answer fields
  }
  const params = (request.params ?? {}) as Record<string, string>;
  // A body is read only once it passed its schema: one that failed (a 1 MiB username) is
  // recorded as a failed validation, without any of its values.
  const body =
    request.auditBodyValid && request.body && typeof request.body === 'object'
      ? (request.body as Record<string, unknown>)
      : {};
  const query = (request.query ?? {}) as Record<string, string>;
  const who = request.identity;
  const ok = reply.statusCode < 400;
  let action = a.action;
  let targetId: string | null = null;
  if (a.target?.param !== undefined && params[a.target.param] !== undefined)
    targetId = String(params[a.target.param]);
  if (a.target?.answer !== undefined && ok)
    targetId = answer[a.target.answer] === undefined ? null : String(answer[a.target.answer]);
  // A token is named by its key id, never its secret; deleting one's own session token is signing out.
  if (a.target?.kind === 'token' && a.target.param !== undefined) {
    targetId = keyIdOf(targetId ?? undefined);
    if (who && targetId === who.keyId) action = 'auth.logout';
  }
  // A sign-in: the actor is who signed in (on success, the answer's token owner).
  const signIn = a.action === 'auth.login';
  const sso = request.signedIn;
  return {
    at: new Date(),
    actor: sso
      ? { ...sso, address: request.ip ?? null }
      : {
          user_id:
            who?.userId ?? (signIn && ok && typeof answer.owner_id === 'number' ? answer.owner_id : null),
          username: who?.username ?? (signIn && typeof body.username === 'string' ? body.username : null),
          token_key_id:
            who?.keyId ?? (signIn && ok && typeof answer.key_id === 'string' ? answer.key_id : null),
          address: request.ip ?? null,
        },
    action,
    target: a.target ? { kind: a.target.kind, id: targetId } : null,
    detail: request.auditInvalid
      ? { validation: 'failed' }
      : a.detail
        ? a.detail({ body, params, query, answer })
        : {},
    outcome: outcomeOf(reply.statusCode),
  };
}
