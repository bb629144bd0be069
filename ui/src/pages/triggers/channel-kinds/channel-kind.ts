/**
 * A kind of notification channel as the web UI has it: one object in one file of this
 * folder (its names, its section of the form, its form values and the config they send)
 * and one entry of UI_CHANNEL_KINDS (index.ts). Its config's type is the API's
 * `<Type>ChannelConfig`. A section is declared, not drawn: ChannelForm.tsx draws each
 * control the same way for every kind (ids, errors, masked hints), so the files hold no
 * markup and the form's values are tested without a browser (test/unit/ui/channel-kinds.test.ts).
 */
import type { components } from '../../../api-types.generated.js';

type Schemas = components['schemas'];

/** The kinds of channel the API has. */
export type ApiChannelType = Schemas['Channel']['type'];

/** A kind's config as the API documents it (a credential read back masked). */
export type ConfigOf<T extends ApiChannelType> = Schemas[`${Capitalize<T>}ChannelConfig`];

/** A channel, its `config` (an open object in the document) as its kind has it. */
export type Channel = Omit<Schemas['Channel'], 'config' | 'type'> & {
  type: ApiChannelType;
  config: { [T in ApiChannelType]: Partial<ConfigOf<T>> }[ApiChannelType];
};

/** What the API answers for a kept secret; sent back unchanged, it keeps the stored value. */
export const KEPT_SECRET = '********';

/** A trigger's severities, the keys of PagerDuty's and Opsgenie's maps. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One control of a kind's section, in the form's order. */
export type KindField<V extends string> =
  | {
      /**
       * A setting's input (a select, given `options`): id `channel-<name>` (`_` as `-`), its
       * error the API's `config.<name>`.
       */
      name: V;
      label: string;
      hint?: string;
      placeholder?: string;
      /** It takes the room left in its row. */
      grow?: boolean;
      mono?: boolean;
      /** `url`: a URL input; `secret`: write-only (a password input, its hint saying when it is kept). */
      input?: 'url' | 'secret';
      options?: readonly { value: string; label: string }[];
    }
  | {
      /** A map from trigger severities to `choices`: values `<map>_<severity>`, errors `config.<map>_map…`. */
      map: 'severity' | 'priority';
      legend: string;
      hint: string;
      choices: readonly string[];
    }
  | {
      /** A body template and its content type (values `body_template`, `content_type`), folded while unused. */
      template: {
        variables: ReadonlyArray<{ title: string; names: readonly string[]; note?: string }>;
        contentTypes: readonly string[];
      };
    };

/** One kind of channel in the web UI (see the top of this file). */
export interface UiChannelKind<T extends ApiChannelType = ApiChannelType, V extends string = string> {
  readonly type: T;
  /** Its name in a list (`short`) and in the form's Type (`long`). */
  readonly names: { readonly short: string; readonly long: string };
  /** A schedule may deliver its reports to it (the server's kind has `reports`). */
  readonly carriesReports: boolean;
  /** Its section of the form, after Name and Type. */
  readonly fields: readonly KindField<V>[];
  /**
   * Its form values (one text a setting, a map's entries one each) from a config: the
   * edited channel's, `{}` for a new one, another kind's (read as unset). Kinds share a
   * value of one name (a URL), so it stays when the kind changes.
   */
  values(config: Partial<ConfigOf<T>>): Record<V, string>;
  /** Where it sends, as the channels list shows it. */
  target(config: Partial<ConfigOf<T>>): string;
  /** Filled enough to save (the API checks the rest). `given`: a value is there, a mask read from another kind not counted. */
  isComplete(given: (name: V) => boolean): boolean;
  /**
   * The `config` to send. `own(name)`: the value trimmed, a mask read from another kind
   * dropped; `values`: as typed; `editing`: the channel edited.
   */
  configOf(
    own: (name: V) => string,
    values: Readonly<Record<V, string>>,
    editing?: Channel,
  ): Record<string, unknown>;
}

/** The form values of a severity map: `<prefix>_<severity>`, the stored value or the API's default. */
export const mapValues = <P extends string>(
  prefix: P,
  stored: Record<string, string> | undefined,
  defaults: Record<Severity, string>,
) =>
  Object.fromEntries(SEVERITIES.map((s) => [`${prefix}_${s}`, stored?.[s] ?? defaults[s]])) as Record<
    `${P}_${Severity}`,
    string
  >;

/** The whole map to send, from its form values. */
export const mapOf = <P extends string>(prefix: P, values: Readonly<Record<`${P}_${Severity}`, string>>) =>
  Object.fromEntries(SEVERITIES.map((s) => [s, values[`${prefix}_${s}`]]));
