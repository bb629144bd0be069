import type { Identity } from '../core/identity.js';
import { AppError } from '../errors/errors.js';

/**
 * The door a read came through, recorded as its audit record's `detail.via`: a request
 * (`http`), a live connection's subscription (`websocket`), a report being generated
 * (`report`: as its owner, with no client address), or an MCP tool call (`mcp`: never
 * recorded as a read of its own, the call's `mcp.tool` record names what it read).
 */
export type ReadVia = 'http' | 'websocket' | 'report' | 'mcp';

/** Where a read comes from: its door, and the client's address as the server sees it. */
export interface ReadOrigin {
  readonly via: ReadVia;
  readonly address: string | null;
}

/** One read, as the service that began it describes it (docs/api/audit.md). */
export interface ReadRecord {
  who: Identity;
  origin: ReadOrigin;
  /** `query.create`, `query.read`, `event.read`, `event.context`. */
  action: string;
  target: { kind: string; id: string | null };
  detail: Record<string, unknown>;
  outcome: 'ok' | 'denied' | 'error';
}

/**
 * Where services record the reads they begin (the audit trail implements it). Reads are
 * recorded where they begin, in the service every door calls, so a new door cannot
 * forget them; `read` never throws and never waits.
 */
export interface ReadAudit {
  read(record: ReadRecord): void;
}

/** How a refused read ended: `denied` for 401 and 403, `error` for anything else. */
export const outcomeOf = (err: unknown): ReadRecord['outcome'] =>
  err instanceof AppError && (err.status === 401 || err.status === 403) ? 'denied' : 'error';

/**
 * Runs a read and records it, whether it answers or throws (the error is thrown on).
 * `describe` adds what only the answer knows (the id of a query it made, a result count).
 * A read through MCP is only run: the tool call is one record (`mcp.tool`) with what it read.
 */
export async function recorded<T>(
  audit: ReadAudit,
  record: Omit<ReadRecord, 'outcome'>,
  read: () => Promise<T>,
  describe?: (answer: T) => { target?: ReadRecord['target']; detail?: Record<string, unknown> },
): Promise<T> {
  if (record.origin.via === 'mcp') return read();
  let answer: T;
  try {
    answer = await read();
  } catch (err) {
    audit.read({ ...record, outcome: outcomeOf(err) });
    throw err;
  }
  const known = describe?.(answer) ?? {};
  audit.read({
    ...record,
    target: known.target ?? record.target,
    detail: { ...record.detail, ...known.detail },
    outcome: 'ok',
  });
  return answer;
}
