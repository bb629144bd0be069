import { describe, expect, it } from 'vitest';
import { groupingAccuracy } from '../../../../src/ingest/patterns/grouping-accuracy.js';
import {
  MAX_TEMPLATES_PER_GROUP,
  MAX_TOKENS,
  maskToken,
  TemplateMiner,
  tokenize,
  WILDCARD,
} from '../../../../src/ingest/patterns/template-miner.js';
import { readLoghubCsv } from '../../../helpers/loghub.js';

/** Drain's published grouping accuracy on these Loghub-2k datasets: the floor (docs/api/patterns.md). */
const DRAIN: Record<string, number> = { OpenSSH: 0.788, Linux: 0.69, Apache: 1.0 };

describe('the template miner', () => {
  it('groups the Loghub samples at least as well as Drain on each, with FGA ≥ 0.85 on average', () => {
    let fga = 0;
    for (const name of Object.keys(DRAIN)) {
      const rows = readLoghubCsv(`${name}_2k.log_structured.csv`);
      const miner = new TemplateMiner();
      const predicted = rows.map((r) => miner.match(name, r.Content ?? '').id);
      const r = groupingAccuracy(
        rows.map((x) => x.EventId ?? ''),
        predicted,
      );
      expect(r.ga, name).toBeGreaterThanOrEqual(DRAIN[name] as number);
      fga += r.fga;
    }
    expect(fga / 3).toBeGreaterThanOrEqual(0.85);
  });

  it('masks values by their form, inside tokens, in frames and after keys; words stay', () => {
    expect(maskToken('sshd[1234]:')).toBe('sshd[<*>]:');
    expect(maskToken('[173.234.31.186]')).toBe('[<*>]');
    expect(maskToken('rhost=218.188.2.4')).toBe('rhost=<*>');
    expect(maskToken('rhost=220-135-151-1.hinet-ip.hinet.net')).toBe('rhost=<*>');
    expect(maskToken('ns.marryaldkfaczcz.com')).toBe(WILDCARD);
    expect(maskToken('/etc/httpd/conf/workers2.properties')).toBe(WILDCARD);
    expect(maskToken('550e8400-e29b-41d4-a716-446655440000')).toBe(WILDCARD);
    expect(maskToken('0x7f3a')).toBe(WILDCARD);
    expect(maskToken('12ms')).toBe(WILDCARD);
    expect(maskToken('[fe80::1]:8080')).toBe(WILDCARD);
    expect(maskToken('deadbeef')).toBe('deadbeef');
    expect(maskToken('password')).toBe('password');
    expect(maskToken('ruser=')).toBe('ruser=');
    // Values pipelines extracted are variables whatever their form.
    expect(tokenize('Accepted password for alice', ['alice'])).toEqual([
      'Accepted',
      'password',
      'for',
      WILDCARD,
    ]);
    // The value is the last token equal to it: a user named `user` leaves the word alone.
    expect(tokenize('Invalid user user from 10.0.0.1', ['user', '10.0.0.1'])).toEqual([
      'Invalid',
      'user',
      WILDCARD,
      'from',
      WILDCARD,
    ]);
  });

  it('varies a key’s value and keeps its key; a key without a value is another form', () => {
    const miner = new TemplateMiner();
    const remote = miner.match('pam', 'authentication failure; tty=NODEVssh ruser= rhost=10.0.0.1');
    const named = miner.match('pam', 'authentication failure; tty=ssh ruser= rhost=example.org');
    expect(named.id).toBe(remote.id);
    expect(remote.tokens.slice(2)).toEqual(['tty=<*>', 'ruser=', 'rhost=<*>']);
    // No remote host: its own template, whatever else it shares.
    const local = miner.match('pam', 'authentication failure; tty=:0 ruser= rhost=');
    expect(local.id).not.toBe(remote.id);
    expect(miner.match('pam', 'authentication failure; tty=pts/1 ruser= rhost=10.0.0.2').id).toBe(remote.id);
    expect(remote.tokens.slice(2)).toEqual(['tty=<*>', 'ruser=', 'rhost=<*>']);
  });

  it('keeps a template’s id when it generalises, and gives the same ids to the same messages', () => {
    const lines = [
      'Invalid user webmaster from 173.234.31.186',
      'Invalid user test9 from 52.80.34.196',
      'Invalid user admin from 5.188.10.180',
      'Connection closed by 10.0.0.1 [preauth]',
    ];
    const a = new TemplateMiner();
    const first = a.match('sshd', lines[0] as string).id;
    const second = a.match('sshd', lines[1] as string);
    expect(second.id).toBe(first);
    expect(second.tokens.join(' ')).toBe('Invalid user <*> from <*>');
    expect(a.match('sshd', lines[2] as string).id).toBe(first);
    const closed = a.match('sshd', lines[3] as string).id;
    expect(closed).not.toBe(first);
    expect(first).toMatch(/^[A-Za-z0-9]{12,16}$/);
    // Another process (a restart, another node) fed the same messages: the same ids.
    const b = new TemplateMiner();
    expect(lines.map((l) => b.match('sshd', l).id)).toEqual([first, first, first, closed]);
    // Each app has its own templates.
    expect(b.match('nginx', lines[0] as string).id).not.toBe(first);
  });

  it('tells messages apart by their second word until a third shows it is a value', () => {
    const miner = new TemplateMiner();
    const password = miner.match('sshd', 'Failed password for invalid user alice from 10.0.0.1 port 22 ssh2');
    const none = miner.match('sshd', 'Failed none for invalid user bob from 10.0.0.2 port 23 ssh2');
    expect(none.id).not.toBe(password.id);
    expect(miner.match('sshd', 'Failed password for invalid user alice from 10.0.0.3 port 24 ssh2').id).toBe(
      password.id,
    );
    expect(password.tokens[1]).toBe('password');
    // A word after the first that keeps changing is a value: the third makes one template.
    const ids = new Set(
      ['ann', 'bob', 'cid', 'dan', 'eve'].map((w) => miner.match('app', `User ${w} logged in`).id),
    );
    expect(ids.size).toBe(2);
    expect(miner.match('app', 'User zed logged in').tokens).toEqual(['User', WILDCARD, 'logged', 'in']);
  });

  it('gives empty, huge, binary and 10,000-token messages a template at once', () => {
    const miner = new TemplateMiner();
    const hostile = [
      '',
      'x'.repeat(1 << 20),
      Array.from({ length: 10_000 }, (_, i) => `w${i}`).join(' '),
      String.fromCharCode(...Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)),
      ' \t\n ',
    ];
    for (const m of hostile) {
      const t0 = performance.now();
      const t = miner.match('app', m);
      expect(performance.now() - t0, `${m.length} characters`).toBeLessThan(20);
      expect(t.id).toMatch(/^[A-Za-z0-9]+$/);
      expect(t.tokens.length).toBeLessThanOrEqual(MAX_TOKENS);
    }
    expect(tokenize(Array.from({ length: 10_000 }, () => 'word').join(' '))).toHaveLength(MAX_TOKENS);
  });

  it('holds at most its cap of templates per app, forgetting the rarest', () => {
    const miner = new TemplateMiner({ maxTemplatesPerApp: 10 });
    const word = (n: number) =>
      String.fromCharCode(97 + (n % 26)) + String.fromCharCode(97 + Math.floor(n / 26));
    for (let i = 0; i < 5; i++) miner.match('app', 'frequent message here');
    const kept = miner.match('app', 'frequent message here').id;
    for (let i = 0; i < 200; i++) miner.match('app', `${word(i)} distinct line`);
    expect(miner.size).toBe(10);
    expect(miner.match('app', 'frequent message here').id).toBe(kept);
    expect(miner.size).toBe(10);
    // What the forgotten templates were compared in goes with them: 200 first words, 10 groups.
    expect(miner.groupCount).toBe(10);
  });

  it('compares a message with at most its group’s cap of templates, forgetting the group’s rarest', () => {
    const miner = new TemplateMiner();
    for (let i = 0; i < 5; i++) miner.match('app', 'user login kept as it is said often');
    const kept = miner.match('app', 'user login kept as it is said often').id;
    let seed = 3;
    const word = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return `w${seed.toString(36)}`;
    };
    // Fresh words after the same first word, the same length: one group.
    for (let i = 0; i < MAX_TEMPLATES_PER_GROUP * 4; i++)
      miner.match('app', `user ${word()} ${word()} ${word()} ${word()} ${word()} ${word()} ${word()}`);
    expect(miner.size).toBe(MAX_TEMPLATES_PER_GROUP);
    expect(miner.groupCount).toBe(1);
    expect(miner.match('app', 'user login kept as it is said often').id).toBe(kept);
  });

  it('holds at most its cap of templates over all apps, forgetting among the rarest', () => {
    const forgotten: string[] = [];
    const miner = new TemplateMiner({ maxTemplates: 50, onForget: (t) => forgotten.push(t.app) });
    for (let i = 0; i < 20; i++) miner.match('steady', 'the steady kind of message');
    const steady = miner.match('steady', 'the steady kind of message').id;
    // An `app` of many values (a request id put there by mistake): each value its own template.
    for (let i = 0; i < 5_000; i++) miner.match(`request-${i}`, `handled request number ${i}`);
    expect(miner.size).toBe(50);
    expect(miner.groupCount).toBe(50);
    expect(forgotten).toHaveLength(5_001 - 50);
    expect(forgotten).not.toContain('steady');
    expect(miner.match('steady', 'the steady kind of message').id).toBe(steady);
    expect(miner.get(steady)?.count).toBe(22);
  });
});
