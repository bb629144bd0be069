/**
 * The Alerting page's channel form, what it sends: each kind's config from the form's
 * values, masked keys and URLs sent back as read only for the kind they were read from, and
 * the lists it offers (template variables, severity and priority maps) against the server's.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../../src/features/alerting/body-template.js';
import { SEVERITIES } from '../../../src/features/alerting/channel-kinds/config-checks.js';
import { OPSGENIE_PRIORITIES } from '../../../src/features/alerting/channel-kinds/opsgenie.js';
import { PAGERDUTY_SEVERITIES } from '../../../src/features/alerting/channel-kinds/pagerduty.js';
import { channelKinds } from '../../../src/features/alerting/channel-kinds/registry.js';
import * as ui from '../../../ui/src/pages/triggers/channel-kinds/index.js';

const channel = (type: ui.ChannelType, config: ui.Channel['config']): ui.Channel => ({
  id: 7,
  name: 'c',
  type,
  config,
  owner: 1,
  decided_by: 1,
  created_at: '2026-11-27T00:00:00Z',
  updated_at: '2026-11-27T00:00:00Z',
});

describe('channel form values', () => {
  it('a new PagerDuty channel sends its key and the whole severity map, defaults filled in', () => {
    const values = { ...ui.initialValues(), name: 'PD', type: 'pagerduty' as const, routing_key: ' key-1 ' };
    expect(ui.isComplete(values)).toBe(true);
    expect(ui.configOf({ ...values, severity_high: 'critical' })).toEqual({
      routing_key: 'key-1',
      severity_map: { critical: 'critical', high: 'critical', medium: 'warning', low: 'info' },
    });
    expect(ui.isComplete({ ...values, routing_key: '' })).toBe(false);
  });

  it('an edited Opsgenie channel sends its masked key back as read, with its region and map', () => {
    const editing = channel('opsgenie', { api_key: '********', region: 'eu', priority_map: { low: 'P5' } });
    const values = ui.initialValues(editing);
    expect(values).toMatchObject({
      api_key: '********',
      region: 'eu',
      priority_low: 'P5',
      priority_high: 'P2',
    });
    expect(ui.configOf(values, editing)).toEqual({
      api_key: '********',
      region: 'eu',
      priority_map: { critical: 'P1', high: 'P2', medium: 'P3', low: 'P5' },
    });
  });

  it('a masked Teams URL keeps the stored one for Teams only: another kind gets no URL from it', () => {
    const editing = channel('teams', { url: 'https://prod.example.com/********' });
    const values = ui.initialValues(editing);
    expect(ui.configOf(values, editing)).toEqual({ url: 'https://prod.example.com/********' });
    const asWebhook = { ...values, type: 'webhook' as const };
    expect(ui.isComplete(asWebhook, editing)).toBe(false);
    expect(ui.configOf(asWebhook, editing)).toEqual({ url: '' });
  });

  it('a webhook keeps its masked secret and headers, sends its template and content type, and drops them when cleared', () => {
    const editing = channel('webhook', {
      url: 'http://127.0.0.1:9/h',
      secret: '********',
      headers: { authorization: '********' },
      body_template: '{{headline}}',
      content_type: 'text/plain',
    });
    const values = ui.initialValues(editing);
    expect(ui.configOf(values, editing)).toEqual({
      url: 'http://127.0.0.1:9/h',
      secret: '********',
      headers: { authorization: '********' },
      body_template: '{{headline}}',
      content_type: 'text/plain',
    });
    expect(ui.configOf({ ...values, secret: '', body_template: ' ', content_type: '' }, editing)).toEqual({
      url: 'http://127.0.0.1:9/h',
      headers: { authorization: '********' },
    });
  });

  it('email sends its recipients as a list', () => {
    const values = {
      ...ui.initialValues(),
      name: 'M',
      type: 'email' as const,
      to: 'a@x.org, b@x.org\nc@x.org',
    };
    expect(ui.configOf(values)).toEqual({ to: ['a@x.org', 'b@x.org', 'c@x.org'] });
  });
});

describe('what the form offers, against the server', () => {
  it('every template variable listed is one the server knows', () => {
    for (const group of ui.TEMPLATE_VARIABLES)
      for (const name of group.names) {
        const source =
          name === 'samples'
            ? '{{#samples}}{{ev_id}} {{ts}} {{message}}{{/samples}}'
            : `{{${name.replace('<field>', 'host')}}}`;
        expect(() => parseTemplate(source), name).not.toThrow();
      }
  });

  it('the maps offer the severities, PagerDuty severities and Opsgenie priorities the server takes', () => {
    expect(ui.SEVERITIES).toEqual(SEVERITIES);
    expect(ui.PAGERDUTY_SEVERITIES).toEqual(PAGERDUTY_SEVERITIES);
    expect(ui.OPSGENIE_PRIORITIES).toEqual(OPSGENIE_PRIORITIES);
    for (const s of SEVERITIES) {
      expect(PAGERDUTY_SEVERITIES).toContain(ui.PAGERDUTY_DEFAULTS[s]);
      expect(OPSGENIE_PRIORITIES).toContain(ui.OPSGENIE_DEFAULTS[s]);
    }
  });

  it("the kinds are the server's, and carry reports where the server's do", () => {
    expect(ui.UI_CHANNEL_KINDS.map((k) => k.type).sort()).toEqual([...channelKinds.types].sort());
    for (const kind of ui.UI_CHANNEL_KINDS) {
      expect(kind.carriesReports, kind.type).toBe(channelKinds.carriesReports(kind.type));
      expect(ui.carriesReports(kind.type)).toBe(kind.carriesReports);
    }
  });

  it('each kind lists where it sends, its map values named after its fields', () => {
    const pd = channel('pagerduty', { routing_key: '********' });
    expect(ui.target(pd)).toBe('routing key ********');
    expect(ui.target(channel('opsgenie', { api_key: '********', region: 'eu' }))).toBe(
      'EU region, API key ********',
    );
    expect(ui.target(channel('email', { to: ['a@x.org', 'b@x.org'] }))).toBe('a@x.org, b@x.org');
    // Every value a kind's section shows is one of the form's values.
    const values = ui.initialValues();
    for (const kind of ui.UI_CHANNEL_KINDS)
      for (const field of kind.fields as readonly ui.KindField<string>[]) {
        if ('name' in field) expect(values, `${kind.type}: ${field.name}`).toHaveProperty(field.name);
        if ('map' in field) for (const s of ui.SEVERITIES) expect(values).toHaveProperty(`${field.map}_${s}`);
      }
  });
});
