import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Identity } from '../../core/identity.js';
import type { Log } from '../../core/log.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { AppError } from '../../errors/errors.js';
import type { ReadOrigin } from '../../query/read-audit.js';
import type { QueryRunner } from '../../query/runner.js';
import type { AuditTrail } from '../audit/index.js';
import { ArgumentError, checkArgs } from './mcp-arguments.js';
import { type ToolServices, ToolTimeout } from './mcp-tool-runs.js';
import { listedTools, TOOL_NAMED } from './mcp-tools.js';

/**
 * The protocol revisions served: the newest first (the SDK's LATEST_PROTOCOL_VERSION, held
 * equal by test/unit/mcp), the one answered to a client asking for another.
 */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

type Sdk = typeof import('@modelcontextprotocol/sdk/types.js');
let sdkLoading: Promise<Sdk> | undefined;
/**
 * The SDK's message schemas, loaded with the first message, not at start-up (they and zod
 * took ~0.2 s of every restart, for an endpoint most servers never see). Set by `handle`
 * before anything else of this file reads it.
 */
let sdk: Sdk;

/** The query language reference, served as a resource. */
export const QUERY_LANGUAGE_URI = 'logscope://query-language';
const QUERY_LANGUAGE_FILE = path.join(PACKAGE_ROOT, 'docs', 'query-language.md');
/** Most bytes a resource gives. */
const MAX_RESOURCE_BYTES = 65_536;
/** Longest string of a call's arguments kept in its audit record. */
const AUDIT_STRING = 1000;

/** What the model is told at `initialize` (at most 2,000 characters). */
export const INSTRUCTIONS = [
  'Logscope is a log search server: it holds log events (time ts, host, app, severity, message, pattern_id and any other fields) from many machines and apps.',
  'You read only what the token you were given may read: its user reads some streams, an admin everything; a query that finds nothing may mean no events or no right to them.',
  'Start with list_streams or list_fields to learn what is there, search_logs for events (newest first), aggregate for counts and statistics with pipes (| stats count() by host), top_patterns for the kinds of message, event_context for what happened around one event, explain_changes for what changed between two periods.',
  'Queries use the query language of the resource logscope://query-language (read it before writing complex queries): words match the message, field:value, AND/OR/NOT, field:[a TO b], field:/regex/.',
  'Time ranges are a preset such as "last_hour" or "last_24_hours", or {"from": ..., "to": ...} in ISO 8601 or Unix seconds. Every time in answers is ISO 8601 UTC.',
  'Arguments are checked: an error result names the argument at fault and says what is accepted; correct it and call again. Answers are capped: truncated says when an answer shows less than matched; narrow the query or the range then.',
].join('\n');

/** An MCP message's HTTP answer: a JSON-RPC response (200, 400) or nothing (202). */
export interface McpReply {
  status: 200 | 202 | 400;
  body?: Record<string, unknown>;
}

export interface McpServiceDeps {
  tools: ToolServices;
  runner: QueryRunner;
  audit: AuditTrail;
  log: Log;
  version: string;
  toolTimeoutMs: number;
}

type RequestId = string | number;

/** A JSON-RPC error to answer with: its code and message. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const rpcError = (id: RequestId | null, code: number, message: string) => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/** Cuts every string of a call's arguments for its audit record. */
function auditArgs(value: unknown): unknown {
  if (typeof value === 'string') return value.length > AUDIT_STRING ? value.slice(0, AUDIT_STRING) : value;
  if (Array.isArray(value)) return value.map(auditArgs);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, auditArgs(v)]));
  return value;
}

/**
 * The MCP server (docs/mcp.md), stateless: each message is answered on its own, as the
 * token's user, with nothing kept between messages but the calls running (so that
 * `notifications/cancelled` can stop one). Tools call the services the REST routes call.
 */
export class McpService {
  /** The tool calls running, by token and request id: what a cancellation names. */
  private readonly running = new Map<string, AbortController>();
  private queryLanguage: string | undefined;

  constructor(private readonly deps: McpServiceDeps) {}

  /** Answers one message (already JSON) from `who`; `closed` aborts when the connection goes. */
  async handle(message: unknown, who: Identity, origin: ReadOrigin, closed: AbortSignal): Promise<McpReply> {
    sdkLoading ??= import('@modelcontextprotocol/sdk/types.js');
    sdk = await sdkLoading;
    const { ErrorCode, isJSONRPCNotification, isJSONRPCRequest, JSONRPCMessageSchema } = sdk;
    if (!JSONRPCMessageSchema.safeParse(message).success) {
      const id = (message as { id?: unknown } | null)?.id;
      return {
        status: 400,
        body: rpcError(
          typeof id === 'string' || typeof id === 'number' ? id : null,
          ErrorCode.InvalidRequest,
          'Invalid Request: the body must be one JSON-RPC 2.0 request, notification or response.',
        ),
      };
    }
    if (isJSONRPCNotification(message)) {
      if (message.method === 'notifications/cancelled') this.cancel(who, message.params?.requestId);
      return { status: 202 };
    }
    if (!isJSONRPCRequest(message)) return { status: 202 };
    const { id, method } = message;
    const params = (message.params ?? {}) as Record<string, unknown>;
    try {
      const result = await this.request(method, params, id, who, origin, closed);
      return { status: 200, body: { jsonrpc: '2.0', id, result } };
    } catch (err) {
      if (err instanceof RpcError) return { status: 200, body: rpcError(id, err.code, err.message) };
      this.deps.log.error({ err }, 'MCP request failed');
      return { status: 200, body: rpcError(id, ErrorCode.InternalError, 'Internal error.') };
    }
  }

  private async request(
    method: string,
    params: Record<string, unknown>,
    id: RequestId,
    who: Identity,
    origin: ReadOrigin,
    closed: AbortSignal,
  ): Promise<Record<string, unknown>> {
    switch (method) {
      case 'initialize':
        return this.initialize(params);
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: listedTools() };
      case 'tools/call':
        return this.call(params, id, who, origin, closed);
      case 'resources/list':
        return {
          resources: [
            {
              uri: QUERY_LANGUAGE_URI,
              name: 'query-language',
              title: 'Logscope query language',
              mimeType: 'text/markdown',
            },
          ],
        };
      case 'resources/templates/list':
        return { resourceTemplates: [] };
      case 'resources/read': {
        if (params.uri !== QUERY_LANGUAGE_URI)
          throw new RpcError(-32002, `Resource not found: ${String(params.uri).slice(0, 200)}`);
        return { contents: [{ uri: QUERY_LANGUAGE_URI, mimeType: 'text/markdown', text: this.reference() }] };
      }
      default:
        throw new RpcError(sdk.ErrorCode.MethodNotFound, `Method not found: ${method.slice(0, 200)}`);
    }
  }

  private initialize(params: Record<string, unknown>) {
    if (!sdk.InitializeRequestParamsSchema.safeParse(params).success)
      throw new RpcError(
        sdk.ErrorCode.InvalidParams,
        'Invalid params: initialize takes protocolVersion, capabilities and clientInfo.',
      );
    const asked = params.protocolVersion as string;
    return {
      protocolVersion: (PROTOCOL_VERSIONS as readonly string[]).includes(asked)
        ? asked
        : sdk.LATEST_PROTOCOL_VERSION,
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      serverInfo: { name: 'logscope', title: 'Logscope', version: this.deps.version },
      instructions: INSTRUCTIONS,
    };
  }

  /** The query language page (docs/query-language.md), at most 64 KB. */
  private reference(): string {
    if (this.queryLanguage === undefined) {
      const text = readFileSync(QUERY_LANGUAGE_FILE, 'utf8');
      const bytes = Buffer.from(text, 'utf8');
      this.queryLanguage =
        bytes.length <= MAX_RESOURCE_BYTES ? text : bytes.subarray(0, MAX_RESOURCE_BYTES).toString('utf8');
    }
    return this.queryLanguage;
  }

  private cancel(who: Identity, requestId: unknown) {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    this.running.get(this.key(who, requestId))?.abort();
  }

  private key = (who: Identity, id: RequestId) => `${who.keyId}\u0000${typeof id}:${id}`;

  /** A tools/call: one audit record whatever its end. */
  private async call(
    params: Record<string, unknown>,
    id: RequestId,
    who: Identity,
    origin: ReadOrigin,
    closed: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const name = params.name;
    const record = (outcome: { isError: boolean; error?: string; returned: number }) =>
      this.deps.audit.record(
        {
          at: new Date(),
          actor: {
            user_id: who.userId,
            username: who.username,
            token_key_id: who.keyId,
            address: origin.address,
          },
          action: 'mcp.tool',
          target: { kind: 'mcp_tool', id: typeof name === 'string' ? name : String(name ?? '') },
          detail: {
            tool: name ?? null,
            arguments: auditArgs(params.arguments ?? {}),
            is_error: outcome.isError,
            ...(outcome.isError ? { error: outcome.error ?? '' } : {}),
            returned: outcome.returned,
          },
          outcome: outcome.isError ? 'error' : 'ok',
        },
        AUDIT_STRING,
      );
    const tool = typeof name === 'string' ? TOOL_NAMED.get(name) : undefined;
    if (!tool) {
      const message =
        typeof name === 'string'
          ? `Unknown tool: ${name.slice(0, 200)}`
          : 'Invalid params: name must be a string.';
      record({ isError: true, error: message, returned: 0 });
      throw new RpcError(sdk.ErrorCode.InvalidParams, message);
    }
    const controller = new AbortController();
    const abort = () => controller.abort();
    closed.addEventListener('abort', abort, { once: true });
    const key = this.key(who, id);
    this.running.set(key, controller);
    try {
      // Refused as POST /api/query is, past queryLivePerUser or the results' memory.
      this.deps.runner.admit(who.userId);
      const args = checkArgs(tool.args, params.arguments);
      const { answer, returned } = await tool.run(
        this.deps.tools,
        { who, origin, signal: controller.signal, ms: this.deps.toolTimeoutMs },
        args,
      );
      record({ isError: false, returned });
      return {
        content: [{ type: 'text', text: JSON.stringify(answer) }],
        structuredContent: answer,
        isError: false,
      };
    } catch (err) {
      const text = this.errorText(err);
      record({ isError: true, error: text, returned: 0 });
      return { content: [{ type: 'text', text }], isError: true };
    } finally {
      closed.removeEventListener('abort', abort);
      if (this.running.get(key) === controller) this.running.delete(key);
    }
  }

  /** What an `isError` result says: the argument at fault, the limit hit, never an engine's words. */
  private errorText(err: unknown): string {
    if (err instanceof ArgumentError || err instanceof ToolTimeout) return err.message;
    if (err instanceof AppError) {
      const retry = err.headers?.['Retry-After'];
      return retry === undefined ? err.message : `${err.message} Retry in ${retry} s.`;
    }
    this.deps.log.error({ err }, 'MCP tool call failed');
    return 'The call failed on the server; try again, or narrow the time range or the query.';
  }
}
