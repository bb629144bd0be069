import { ClickHouseError } from '@clickhouse/client';
import { outOfMemory, storeUnavailable } from '../../errors/errors.js';
import { NETWORK_UNREACHABLE, UNREACHABLE_REASONS } from '../../errors/startup.js';

/** Network failures: ClickHouse cannot be reached (503 store_unavailable, retried by clients). */
const UNREACHABLE = new Set([...NETWORK_UNREACHABLE, 'EPIPE', 'UND_ERR_SOCKET']);

/** ClickHouse error codes that mean "not enough memory for this query". */
const MEMORY_LIMIT_EXCEEDED = '241';

/**
 * An engine failure as clients may see it: unreachable → 503 store_unavailable, out of
 * memory → 503 out_of_memory; anything else unchanged (a 500, logged with its text).
 */
export function clickHouseError(err: unknown): unknown {
  let mapped: Error | null = null;
  if (isUnreachable(err))
    mapped = storeUnavailable(
      `The event store (ClickHouse) cannot be reached (${reason(err)}); retry once it is back.`,
    );
  else if (err instanceof ClickHouseError && err.code === MEMORY_LIMIT_EXCEEDED) mapped = outOfMemory();
  if (!mapped) return err;
  (mapped as Error & { cause?: unknown }).cause = err;
  return mapped;
}

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

function isUnreachable(err: unknown): boolean {
  if (err instanceof ClickHouseError) return false;
  if (UNREACHABLE.has(codeOf(err)) || UNREACHABLE.has(codeOf((err as { cause?: unknown } | null)?.cause)))
    return true;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /socket hang up|Timeout error|connect ECONNREFUSED/i.test(message);
}

/** Why a server could not be used, in words. */
export function reason(err: unknown): string {
  const code = codeOf(err) || codeOf((err as { cause?: unknown } | null)?.cause);
  if (UNREACHABLE_REASONS[code]) return UNREACHABLE_REASONS[code] as string;
  const message = (err as { message?: unknown } | null)?.message;
  return code || (typeof message === 'string' ? message.slice(0, 200) : 'no answer');
}
