/**
 * THE web UI's list of channel kinds, and what the form and the lists take from it: each
 * kind's names, its section and form values, what it sends, whether it carries reports.
 * The list is the API's kinds (KINDS_ARE_THE_APIS does not compile otherwise; a kind's
 * config type is the API's), in the order the form offers them.
 */
import { type ApiChannelType, type Channel, KEPT_SECRET, type UiChannelKind } from './channel-kind.js';
import { email } from './email.js';
import { opsgenie } from './opsgenie.js';
import { pagerduty } from './pagerduty.js';
import { slack } from './slack.js';
import { teams } from './teams.js';
import { webhook } from './webhook.js';

export const UI_CHANNEL_KINDS = [webhook, slack, teams, email, pagerduty, opsgenie] as const;

type Kind = (typeof UI_CHANNEL_KINDS)[number];
export type ChannelType = Kind['type'];

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only while the list's kinds are the API's (the generated types tell a new one). */
export type KindsAreTheApis = Same<ChannelType, ApiChannelType> extends true ? true : never;
export const KINDS_ARE_THE_APIS: KindsAreTheApis = true;

export {
  type Channel,
  KEPT_SECRET,
  type KindField,
  SEVERITIES,
  type Severity,
  type UiChannelKind,
} from './channel-kind.js';
export { OPSGENIE_DEFAULTS, OPSGENIE_PRIORITIES } from './opsgenie.js';
export { PAGERDUTY_DEFAULTS, PAGERDUTY_SEVERITIES } from './pagerduty.js';
export { CONTENT_TYPES, TEMPLATE_VARIABLES } from './webhook.js';

const BY_TYPE = new Map<string, UiChannelKind>(UI_CHANNEL_KINDS.map((kind) => [kind.type, kind]));
/** A kind of the list (its type is one: the API's). */
export const kindOf = (type: ChannelType): UiChannelKind => BY_TYPE.get(type) as UiChannelKind;

/** Each kind's name in a list, and in the form's Type. */
export const TYPE_NAMES = Object.fromEntries(
  UI_CHANNEL_KINDS.map((kind) => [kind.type, kind.names]),
) as Record<ChannelType, Kind['names']>;

export const TYPES = UI_CHANNEL_KINDS.map((kind) => ({ value: kind.type, label: kind.names.long }));

/** Whether a schedule may deliver its reports to a channel of this type. */
export const carriesReports = (type: string): boolean => BY_TYPE.get(type)?.carriesReports === true;

/** Where a channel sends, as its list shows it. */
export const target = (c: Channel): string => kindOf(c.type).target(c.config);

/** The names of every kind's form values. */
type ValueName<K> = K extends UiChannelKind<ApiChannelType, infer V> ? V : never;

/** The form's values: one text a setting, a map's entries one each; kinds share a value of one name. */
export type ChannelValues = { name: string; type: ChannelType } & Record<ValueName<Kind>, string>;

/** The form's first values: a new channel's, or those of the one edited (secrets as masked). */
export function initialValues(editing?: Channel): ChannelValues {
  const config = editing?.config ?? {};
  return Object.assign(
    { name: editing?.name ?? '', type: editing?.type ?? UI_CHANNEL_KINDS[0].type },
    ...UI_CHANNEL_KINDS.map((kind) => (kind as UiChannelKind).values(config)),
  ) as ChannelValues;
}

/**
 * A value as sent: a masked one (a key, a Teams or Slack URL) stands for the stored value
 * only for the kind it was read from; once the kind changes it is no value.
 */
function own(value: string, values: ChannelValues, editing: Channel | undefined): string {
  const masked = value === KEPT_SECRET || value.endsWith(`/${KEPT_SECRET}`);
  return masked && editing?.type !== values.type ? '' : value.trim();
}

/** The form's values by name, for a kind's functions. */
const byName = (values: ChannelValues) => values as unknown as Readonly<Record<string, string>>;

/** The settings the form gives, filled enough to save (the API checks the rest). */
export function isComplete(values: ChannelValues, editing?: Channel): boolean {
  if (!values.name.trim()) return false;
  return kindOf(values.type).isComplete((name) => own(byName(values)[name] ?? '', values, editing) !== '');
}

/** The `config` to send for the form's kind; masks sent back as read keep the stored values. */
export function configOf(values: ChannelValues, editing?: Channel): Record<string, unknown> {
  const ownValue = (name: string) => own(byName(values)[name] ?? '', values, editing);
  return kindOf(values.type).configOf(ownValue, byName(values), editing);
}
