/**
 * THE list of channel kinds, and what derives from it: the API's `type` union and `config`
 * document, the checks of a channel's config, how a stored one is shown, which kinds carry
 * scheduled reports, and (senders.ts) the dispatch of a send. A new kind is a file of this
 * folder and an entry of CHANNEL_KINDS (docs/extending.md, "A channel kind").
 */
import { type TObject, Type } from 'typebox';
import { type FieldErrors, validationError } from '../../../errors/errors.js';
import { channelSchemas } from '../alert-schema.js';
import type { ChannelConfig, ChannelKind, KeepRefused, Masked } from './channel-kind.js';
import { maskedUrl, SECRET_MASK } from './config-checks.js';
import { email } from './email.js';
import { opsgenie } from './opsgenie.js';
import { pagerduty } from './pagerduty.js';
import { slack } from './slack.js';
import { teams } from './teams.js';
import { webhook } from './webhook.js';

/** Every kind of notification channel, in the order the API document names them. */
export const CHANNEL_KINDS = [webhook, slack, email, teams, pagerduty, opsgenie] as const;

export type ChannelType = (typeof CHANNEL_KINDS)[number]['type'];

/** The name of a kind's settings schema in the API document: `PagerdutyChannelConfig`. */
export const configSchemaId = <T extends string>(type: T) =>
  `${type.charAt(0).toUpperCase()}${type.slice(1)}ChannelConfig` as `${Capitalize<T>}ChannelConfig`;

/** What of a config reads back masked, in the API document's words. */
function maskedText(m: Masked): string {
  const whole = [...(m.keys ?? []), ...(m.valuesOf ?? []).map((key) => `each value of ${key}`)];
  const parts = [
    ...(whole.length
      ? [`${whole.join(' and ')} read${whole.length === 1 ? 's' : ''} back as "${SECRET_MASK}"`]
      : []),
    ...(m.url ? [`url reads back as its origin and /${SECRET_MASK}`] : []),
  ];
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** One kind in the description of `config`: `slack {url}: a message … (url reads back as …)`. */
function describeKind(kind: ChannelKind, schema: TObject): string {
  const required = new Set(schema.required ?? []);
  const keys = Object.keys(kind.settings).map((key) => (required.has(key) ? key : `${key}?`));
  return `${kind.type} {${keys.join(', ')}}: ${kind.about}${maskedText(kind.masked)}`;
}

/** Masks what of `config` is a credential (Masked), in place. */
function mask(m: Masked, config: Record<string, unknown>): void {
  for (const key of m.keys ?? []) if (typeof config[key] === 'string') config[key] = SECRET_MASK;
  for (const key of m.valuesOf ?? []) {
    const map = config[key];
    if (map && typeof map === 'object')
      config[key] = Object.fromEntries(Object.keys(map).map((name) => [name, SECRET_MASK]));
  }
  if (m.url && typeof config.url === 'string') config.url = maskedUrl(config.url);
}

/**
 * What derives from a list of kinds. Production builds it once from CHANNEL_KINDS
 * (`channelKinds`); a test builds one with a kind of its own the same way.
 */
export function channelKindRegistry<const K extends readonly ChannelKind[]>(kinds: K) {
  type KindType = K[number]['type'];
  const byType = new Map<string, ChannelKind>(kinds.map((kind) => [kind.type, kind]));
  if (byType.size !== kinds.length) throw new Error('Two channel kinds share a type.');
  const types = kinds.map((kind) => kind.type) as KindType[];
  /** Each kind's settings as the API document shows them (they check nothing: `check` does). */
  const configSchemas = kinds.map((kind) =>
    Type.Object(kind.settings, {
      $id: configSchemaId(kind.type),
      description: `The config of ${kind.title} channels: ${kind.about}.`,
      additionalProperties: false,
    }),
  );
  const TypeSchema = Type.Unsafe<KindType>(Type.Union(types.map((type) => Type.Literal(type))));
  // An open object to the validator: each kind's `check` names what is wrong, key by key.
  const byKind = kinds.map((kind, i) => describeKind(kind, configSchemas[i] as TObject)).join('; ');
  const schemaIds = kinds.map((kind) => configSchemaId(kind.type)).join(', ');
  const ConfigSchema = Type.Object(
    {},
    {
      additionalProperties: true,
      description: `The settings of the channel's type: ${byKind}. Each type's settings in full: ${schemaIds}. A masked value sent back as read keeps the stored one, for the same type, destination and editor.`,
    },
  );

  return {
    kinds,
    types,
    /** The kind of a stored channel; undefined for a type no longer in the list. */
    kindOf: (type: string): ChannelKind | undefined => byType.get(type),
    /** `type` in the API: the union of the kinds' types. */
    TypeSchema,
    configSchemas,
    /** The Channel, ChannelCreate, PatchedChannel and Delivery schemas over these kinds. */
    schemas: channelSchemas(TypeSchema, ConfigSchema),
    /** The kinds' names in the API's prose: "webhook, Slack, email, …". */
    titles: kinds.map((kind) => kind.title).join(', '),

    /**
     * Checks a channel's config for its type; returns it as stored (400 naming each problem
     * as `config.<key>`). A credential shown masked and sent back keeps its stored value only
     * where it was given: `refused` says why not (another kind, another editor), and the
     * kind's own rules may refuse it too; the value must then be given again.
     */
    checkConfig(
      type: string,
      body: object,
      stored?: ChannelConfig,
      refused: KeepRefused = null,
    ): ChannelConfig {
      const kind = byType.get(type);
      if (!kind)
        throw validationError(
          { type: [`Not a channel type (${types.join(', ')}).`] },
          `Not a channel type: ${type}`,
        );
      const raw = body as Record<string, unknown>;
      const errors: FieldErrors = {};
      const fail = (key: string, message: string) => {
        errors[`config.${key}`] = [message];
      };
      const allowed = Object.keys(kind.settings);
      for (const key of Object.keys(raw))
        if (!allowed.includes(key)) fail(key, `Not a ${type} setting (allowed: ${allowed.join(', ')}).`);
      const out = kind.check(raw, stored, fail, refused) as ChannelConfig;
      if (Object.keys(errors).length)
        throw validationError(errors, `Invalid ${type} channel: ${Object.keys(errors).join(', ')}`);
      return out;
    },

    /**
     * A stored config as shown: its credentials masked (write-only, to the owner too). A type
     * no longer listed gets every kind's masks.
     */
    present(type: string, config: ChannelConfig): ChannelConfig {
      const kind = byType.get(type);
      for (const k of kind ? [kind] : kinds) mask(k.masked, config);
      return config;
    },

    /** Whether a schedule may deliver its reports to a channel of this type. */
    carriesReports: (type: string): boolean => byType.get(type)?.reports !== undefined,
    /** Whether a report's run attaches its file for this type (email), not only its link. */
    attachesReports: (type: string): boolean => byType.get(type)?.reports?.attachesFile === true,
  };
}

export type ChannelKindRegistry = ReturnType<typeof channelKindRegistry<typeof CHANNEL_KINDS>>;

/** The production registry: the one list, derived once. */
export const channelKinds: ChannelKindRegistry = channelKindRegistry(CHANNEL_KINDS);
