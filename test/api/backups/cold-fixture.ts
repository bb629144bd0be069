import { expect } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { noonDaysBack } from '../../helpers/events.js';
import { event } from '../../helpers/seed.js';

/**
 * Events in the cold tier for a backup to hold: a stream `Old` (`app:old`) that keeps 2 days
 * hot, `perDay` of its events at noon of each day `daysBack`, moved cold by a round of the
 * mover (those of 1 day back stay hot). Default keeps all its days hot.
 */
export async function oldEventsMovedCold(
  t: TestApp,
  daysBack: readonly number[],
  perDay: number,
): Promise<void> {
  const old = await t.as(t.adminToken, {
    method: 'POST',
    url: '/api/streams',
    payload: { title: 'Old', rule: 'app:old', hot_days: 2 },
  });
  expect(old.statusCode, old.body).toBe(201);
  const now = Date.now();
  await t.rt.events.append(
    daysBack.flatMap((back) =>
      Array.from({ length: perDay }, (_, i) =>
        event({ ts: noonDaysBack(back, now) + i * 1000, app: 'old', message: `old day ${back} #${i}` }),
      ),
    ),
  );
  expect((await t.rt.services.coldMoves.run(now)).errors).toEqual([]);
}
