import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../helpers/app.js';
import {
  JOURNAL_REMOTE,
  JOURNAL_UPLOAD,
  type JournalFields,
  journalExport,
  run,
} from '../../helpers/journal.js';
import { type Logscope, privateDir, searchEvents, skipFor, startLogscope } from '../../helpers/shippers.js';

// systemd's own uploader against a real Logscope: a journal file made by
// systemd-journal-remote from export-format entries, sent by systemd-journal-upload with
// the INGEST token in its --url (Debian's uploader cannot send headers).

const missing =
  !JOURNAL_UPLOAD || !JOURNAL_REMOTE
    ? 'no systemd-journal-upload (Debian systemd-journal-remote)'
    : undefined;
const skipAll = skipFor('the systemd-journal-upload tests', missing);

describe.skipIf(skipAll)(`systemd-journal-upload → Logscope on ${BACKEND}`, () => {
  let ls: Logscope;
  const dir = privateDir('journald');
  const marker = `jrnl${Date.now().toString(36)}`;
  const journal = path.join(dir.dir, 'remote.journal');
  const state = path.join(dir.dir, 'upload.state');
  const baseUs = BigInt(Date.now() - 60_000) * 1000n;
  const at = (k: number) => String(baseUs + BigInt(k) * 1_000_123n);

  beforeAll(async () => {
    ls = await startLogscope();
  });
  afterAll(async () => {
    await ls?.close();
    dir.remove();
  });

  /** Appends entries to the journal file (journal-remote adds to an existing one). */
  async function appendToJournal(name: string, entries: JournalFields[]) {
    const file = path.join(dir.dir, `${name}.export`);
    writeFileSync(file, journalExport(entries));
    await run(JOURNAL_REMOTE!, [`--output=${journal}`, file]);
  }

  async function upload(token = ls.ingestToken) {
    return run(JOURNAL_UPLOAD!, [
      `--file=${journal}`,
      `--url=http://127.0.0.1:${ls.httpPort}/api/ingest/journald/${token}`,
      `--save-state=${state}`,
      // It follows the file for new entries by default; once through it is done.
      '--follow=no',
    ]);
  }

  const common = { _BOOT_ID: '0123456789abcdef0123456789abcdef', _HOSTNAME: 'web1', _TRANSPORT: 'syslog' };

  it('stores every entry once with host, app, pid, severity, message and time; binary and multi-line values survive', async () => {
    await appendToJournal('first', [
      {
        __REALTIME_TIMESTAMP: at(0),
        __MONOTONIC_TIMESTAMP: '1000',
        ...common,
        SYSLOG_IDENTIFIER: 'sshd',
        _PID: '4242',
        PRIORITY: '3',
        _SYSTEMD_UNIT: 'ssh.service',
        MESSAGE: `${marker} Failed password for root from 203.0.113.9 port 5122 ssh2`,
      },
      {
        __REALTIME_TIMESTAMP: at(1),
        __MONOTONIC_TIMESTAMP: '2000',
        ...common,
        SYSLOG_IDENTIFIER: 'billing',
        _PID: '77',
        PRIORITY: '6',
        MESSAGE: `${marker} first line\nsecond line`,
        COREDUMP_BLOB: Buffer.from([0, 1, 2, 255]),
      },
      {
        __REALTIME_TIMESTAMP: at(2),
        __MONOTONIC_TIMESTAMP: '3000',
        ...common,
        SYSLOG_IDENTIFIER: 'kernel',
        PRIORITY: '4',
        MESSAGE: `${marker} eth0: link down`,
      },
    ]);
    await upload();
    const events = await searchEvents(ls, marker);
    expect(events.map((e) => e.message)).toEqual([
      `${marker} Failed password for root from 203.0.113.9 port 5122 ssh2`,
      `${marker} first line\nsecond line`,
      `${marker} eth0: link down`,
    ]);
    const [sshd, billing, kernel] = events;
    expect(sshd).toMatchObject({
      host: 'web1',
      app: 'sshd',
      severity: 'error',
      _SYSTEMD_UNIT: 'ssh.service',
    });
    expect(String(sshd!.proc_id)).toBe('4242');
    expect(sshd!.ts).toBe(Number(BigInt(at(0)) / 1000n) / 1000);
    expect(billing).toMatchObject({ app: 'billing', severity: 'info' });
    expect(billing!.COREDUMP_BLOB).toEqual([0, 1, 2, 255]);
    expect(kernel).toMatchObject({ app: 'kernel', severity: 'warning' });
    // The uploader's cursor is kept by Logscope as a field, for tracing an event back.
    expect(String(sshd!.__CURSOR)).toMatch(/^s=/);
  });

  it('a restart of the uploader sends only what was not acknowledged', async () => {
    await upload();
    expect(await searchEvents(ls, marker)).toHaveLength(3);
    await appendToJournal('second', [
      {
        __REALTIME_TIMESTAMP: at(3),
        __MONOTONIC_TIMESTAMP: '4000',
        ...common,
        SYSLOG_IDENTIFIER: 'sshd',
        _PID: '4243',
        PRIORITY: '5',
        MESSAGE: `${marker} Accepted publickey for deploy`,
      },
    ]);
    await upload();
    const events = await searchEvents(ls, marker);
    expect(events).toHaveLength(4);
    expect(events[3]).toMatchObject({
      app: 'sshd',
      severity: 'notice',
      message: `${marker} Accepted publickey for deploy`,
    });
  });

  it('a wrong token in the URL is refused with 401, and the uploader keeps its cursor', async () => {
    await appendToJournal('third', [
      {
        __REALTIME_TIMESTAMP: at(4),
        __MONOTONIC_TIMESTAMP: '5000',
        ...common,
        SYSLOG_IDENTIFIER: 'cron',
        MESSAGE: `${marker} late entry`,
      },
    ]);
    const refused = await upload('not-a-token').then(
      () => 'uploaded',
      (error: { stderr?: string }) => error.stderr ?? '',
    );
    expect(refused).toMatch(/401/);
    expect(await searchEvents(ls, marker)).toHaveLength(4);
    await upload();
    const events = await searchEvents(ls, marker);
    expect(events).toHaveLength(5);
    expect(events[4]!.message).toBe(`${marker} late entry`);
  });
});
