/**
 * A channel kind is one file and one entry of CHANNEL_KINDS: a throw-away kind
 * (test/fixtures/channel-kinds/ntfy.ts) added to a registry built as production builds its
 * own becomes a type of the API, has its settings documented and checked, its credential
 * masked and kept by its mask only where it was given, and is sent through the senders.
 * And no file of alerting, schedules or their web UI pages outside the channel-kinds/
 * folders names a kind.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors/errors.js';
import {
  CHANNEL_KINDS,
  channelKindRegistry,
  channelKinds,
} from '../../../src/features/alerting/channel-kinds/registry.js';
import { slack } from '../../../src/features/alerting/channel-kinds/slack.js';
import type { Notification } from '../../../src/features/alerting/notification.js';
import type { ReportNotice } from '../../../src/features/alerting/report-notice.js';
import { Senders } from '../../../src/features/alerting/senders.js';
import { makeAjv } from '../../../src/http/validator.js';
import { ntfy } from '../../fixtures/channel-kinds/ntfy.js';

const registry = channelKindRegistry([...CHANNEL_KINDS, ntfy]);

/** A schema as the API document holds it (JSON). */
const json = (schema: unknown) => JSON.parse(JSON.stringify(schema));
const ids = (kinds: typeof registry | typeof channelKinds) =>
  kinds.configSchemas.map((s) => json(s).$id as string);
const configDescription = (kinds: typeof registry | typeof channelKinds): string =>
  json(kinds.schemas.ChannelSchema).properties.config.description;

/** What a refused config answers: the 400's message and its fields. */
function refusal(check: () => unknown): { message: string; errors: unknown } {
  try {
    check();
  } catch (err) {
    if (err instanceof AppError && err.status === 400) return { message: err.message, errors: err.errors };
    throw err;
  }
  throw new Error('not refused');
}

const TOPIC = 'https://ntfy.example/alerts';

const test: Notification = {
  kind: 'test',
  trigger: null,
  condition: null,
  group: {},
  count: 0,
  window_seconds: null,
  fired_at: '2026-11-27T10:00:00.000Z',
  samples: [],
  search_url: null,
};

/** Senders whose posts are recorded, not made: the dispatch is what is tested here. */
class RecordingSenders extends Senders {
  readonly posts: unknown[] = [];
  override async post(
    url: string,
    body: string,
    headers: Record<string, string>,
    opts?: { contentType?: string; final4xx?: boolean },
  ): Promise<void> {
    this.posts.push({ url, body, headers, opts });
  }
}
const sendersOver = (kinds?: typeof registry) =>
  new RecordingSenders({ smtpUrl: '', smtpFrom: '', denyCidrs: new BlockList() }, kinds);

describe('a channel kind added to the list', () => {
  it('is a type of the API: of a channel, of its create and of a delivery', () => {
    const schemas = json(registry.schemas);
    const literal = { type: 'string', const: 'ntfy' };
    expect(registry.types).toEqual([...channelKinds.types, 'ntfy']);
    expect(schemas.ChannelSchema.properties.type.anyOf).toContainEqual(literal);
    expect(schemas.DeliverySchema.properties.channel_type.anyOf).toContainEqual(literal);
    const body = { name: 'Push', type: 'ntfy', config: { url: TOPIC } };
    expect(makeAjv(false).compile(registry.schemas.ChannelCreateSchema)(body)).toBe(true);
    expect(makeAjv(false).compile(channelKinds.schemas.ChannelCreateSchema)(body)).toBe(false);
  });

  it('has its settings in the API document: a schema of its own, and its line of `config`', () => {
    expect(ids(registry)).toEqual([...ids(channelKinds), 'NtfyChannelConfig']);
    expect(json(registry.configSchemas.at(-1))).toMatchObject({
      type: 'object',
      required: ['url'],
      properties: { url: { type: 'string' }, token: { type: 'string' } },
      additionalProperties: false,
    });
    expect(configDescription(registry)).toContain(
      'ntfy {url, token?}: a push message to a topic (token reads back as "********")',
    );
    expect(configDescription(registry)).toContain('NtfyChannelConfig');
    expect(configDescription(channelKinds)).not.toContain('ntfy');
  });

  it('has its config checked: its settings only, each problem named', () => {
    expect(refusal(() => registry.checkConfig('ntfy', { url: 'ftp://x', priority: 5 }))).toEqual({
      message: 'Invalid ntfy channel: config.priority, config.url',
      errors: {
        'config.priority': ['Not a ntfy setting (allowed: url, token).'],
        'config.url': ['An http:// or https:// URL (without user:password; use headers).'],
      },
    });
    expect(registry.checkConfig('ntfy', { url: TOPIC, token: 'tk_1' })).toEqual({
      url: TOPIC,
      token: 'tk_1',
    });
    expect(refusal(() => channelKinds.checkConfig('ntfy', { url: TOPIC })).errors).toEqual({
      type: [`Not a channel type (${channelKinds.types.join(', ')}).`],
    });
  });

  it('has its credential masked, and kept by its mask only for its destination and editor', () => {
    const stored = registry.checkConfig('ntfy', { url: TOPIC, token: 'tk_1' });
    const shown = registry.present('ntfy', { ...stored });
    expect(shown).toEqual({ url: TOPIC, token: '********' });
    expect(registry.checkConfig('ntfy', shown, stored)).toEqual(stored);
    expect(
      refusal(() => registry.checkConfig('ntfy', { ...shown, url: 'https://elsewhere.example/a' }, stored))
        .errors,
    ).toEqual({
      'config.token': [
        "Give the value again: a stored credential stays with its destination, and the URL's origin changed.",
      ],
    });
    const editor = 'you did not set where this channel sends';
    expect(refusal(() => registry.checkConfig('ntfy', shown, stored, editor)).errors).toEqual({
      'config.token': [
        `Give the value again: a stored credential stays with its destination, and ${editor}.`,
      ],
    });
  });

  it('is sent through the senders, and carries no report as it has no `reports`', async () => {
    const senders = sendersOver(registry);
    await senders.send('ntfy', { url: TOPIC, token: 'tk_1' }, test);
    expect(senders.posts).toEqual([
      {
        url: TOPIC,
        body: 'Logscope test notification: this channel works.',
        headers: { authorization: 'Bearer tk_1' },
        opts: { contentType: 'text/plain' },
      },
    ]);
    expect(registry.carriesReports('ntfy')).toBe(false);
    await expect(
      senders.send('ntfy', { url: TOPIC }, { kind: 'report' } as ReportNotice),
    ).rejects.toMatchObject({ message: 'a ntfy channel does not carry reports', final: true });
    // Production's senders do not know it: a stored channel of a type no longer listed.
    await expect(sendersOver().send('ntfy', { url: TOPIC }, test)).rejects.toMatchObject({
      message: 'no sender for a ntfy channel',
      final: true,
    });
  });

  it('is refused when its type is one the list has', () => {
    expect(() => channelKindRegistry([...CHANNEL_KINDS, slack])).toThrow('Two channel kinds share a type.');
  });
});

describe('the production list', () => {
  it('is the six kinds, their schemas named by type, and says which carry reports', () => {
    expect(channelKinds.types).toEqual(['webhook', 'slack', 'email', 'teams', 'pagerduty', 'opsgenie']);
    expect(ids(channelKinds)).toEqual([
      'WebhookChannelConfig',
      'SlackChannelConfig',
      'EmailChannelConfig',
      'TeamsChannelConfig',
      'PagerdutyChannelConfig',
      'OpsgenieChannelConfig',
    ]);
    expect(channelKinds.types.filter(channelKinds.carriesReports)).toEqual([
      'webhook',
      'slack',
      'email',
      'teams',
    ]);
    expect(channelKinds.types.filter(channelKinds.attachesReports)).toEqual(['email']);
  });
});

/** Where a kind's name would be a branch of a switch: the features that send, and the web UI's pages. */
const SCANNED = [
  'src/features/alerting',
  'src/features/schedules',
  'ui/src/pages/triggers',
  'ui/src/pages/schedules',
];
/** The kinds' own files: the server's and the web UI's. */
const KIND_FOLDERS = ['src/features/alerting/channel-kinds', 'ui/src/pages/triggers/channel-kinds'];

function codeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return KIND_FOLDERS.includes(p) ? [] : codeFiles(p);
    return /\.tsx?$/.test(d.name) ? [p] : [];
  });
}

describe('the kinds are named in one place', () => {
  it('no file outside channel-kinds/ names a kind (migrations aside)', () => {
    const named = SCANNED.flatMap(codeFiles).flatMap((file) => {
      // A migration's SQL names the kinds of its time: history, not a branch.
      const code = readFileSync(file, 'utf8').replace(/sql`[^`]*`/g, '');
      return channelKinds.types
        .filter((type) => new RegExp(`['"]${type}['"]`).test(code))
        .map((type) => `${file}: ${type}`);
    });
    expect(named).toEqual([]);
  });
});
