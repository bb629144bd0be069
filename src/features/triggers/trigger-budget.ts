import { AppError } from '../../errors/errors.js';
import { type Condition, patternRateReadsPerHour } from '../alerting/index.js';
import type { TriggersRepository } from './triggers-repository.js';

/**
 * The store reads one user's pattern_rate triggers may cost (docs/api/triggers.md, setting
 * `patternRateReadsPerHour`): each enabled trigger costs `patternRateReadsPerHour(condition)`
 * reads an hour, whatever the day holds (its rolling baseline is kept, not read again). A
 * trigger that would take its owner past the budget is refused with a 409 naming it; its
 * owner may widen windows, use the `previous` baseline, or disable another.
 */
export async function checkReadBudget(
  repo: TriggersRepository,
  ownerId: number,
  next: { id?: number; condition?: string | undefined; enabled?: number | undefined },
  perHour: number,
): Promise<void> {
  const condition = next.condition === undefined ? undefined : (JSON.parse(next.condition) as Condition);
  if (next.enabled === 0 || condition?.type !== 'pattern_rate') return;
  const wanted = patternRateReadsPerHour(condition);
  let used = 0;
  for (const row of await repo.enabledOwnedBy(ownerId)) {
    const c = JSON.parse(row.condition) as Condition;
    if (row.id !== next.id && c.type === 'pattern_rate') used += patternRateReadsPerHour(c);
  }
  if (used + wanted > perHour)
    throw new AppError(
      409,
      'limit_reached',
      `This pattern_rate trigger costs ${wanted} store reads an hour and its owner's enabled ones ${used}: more than the ${perHour} one user's may (setting patternRateReadsPerHour). Widen its window, compare with the previous window, or disable another.`,
    );
}
