import { expect } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';

export type Who = { id: number; token: string };

/**
 * The log-metrics tests' app: two users, `ada` who may read the stream Payments
 * (`app:payments`) and `ben` who may not (both read Default), and an `ingest` of events
 * through the API (every one accepted).
 */
export async function twoReaders(env: Record<string, string> = {}): Promise<{
  t: TestApp;
  ada: Who;
  ben: Who;
  payments: number;
  ingest(events: object[]): Promise<void>;
}> {
  const t = await createTestApp(env);
  const ada = await t.user('ada');
  const ben = await t.user('ben');
  const made = await t.as(t.adminToken, {
    method: 'POST',
    url: '/api/streams',
    payload: { title: 'Payments', rule: 'app:payments', readers: { users: [ada.id] } },
  });
  expect(made.statusCode, made.body).toBe(201);
  const ingest = async (events: object[]) => {
    const res = await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: events });
    expect(res.json(), res.body).toMatchObject({ accepted: events.length, rejected: 0 });
  };
  return { t, ada, ben, payments: made.json().id as number, ingest };
}

/**
 * Five errors and an info event over two minutes from `iso(0)`: three of `payments` (two in
 * the first minute), two of `web` (one a minute).
 */
export const errorsSent = (iso: (s: number) => string) => [
  { ts: iso(2), app: 'payments', severity: 'error', message: 'card declined' },
  { ts: iso(3), app: 'payments', severity: 'error', message: 'card declined' },
  { ts: iso(62), app: 'payments', severity: 'error', message: 'card declined' },
  { ts: iso(4), app: 'web', severity: 'error', message: 'upstream timed out' },
  { ts: iso(65), app: 'web', severity: 'error', message: 'upstream timed out' },
  { ts: iso(5), app: 'web', severity: 'info', message: 'ok' },
];
