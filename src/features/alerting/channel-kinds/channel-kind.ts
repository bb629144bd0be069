/**
 * A kind of notification channel (webhook, Slack, PagerDuty, …) is one object of this
 * shape in one file of this folder, and one entry of CHANNEL_KINDS (registry.ts): its
 * settings, how a config of it is checked and shown, and what it sends. Everything else
 * (the API's type union and config document, the checks of a create or an update, the
 * masking, the senders' dispatch, which kinds a schedule may deliver to) derives from that
 * list; no other file names a kind.
 */
import type { Static, TObject, TProperties } from 'typebox';
import type { Notification } from '../notification.js';
import type { ReportNotice } from '../report-notice.js';

/** Names a problem of a config by its key: the 400's `config.<key>`. */
export type Fail = (key: string, message: string) => void;

/**
 * Why a stored credential may not be kept by sending its mask back (null: it may): it stays
 * with the destination it was given for, and with whoever gave it (channels-service.ts).
 */
export type KeepRefused = string | null;

/**
 * A failed attempt, with what a person reading the deliveries list needs to know. `final`:
 * trying again cannot help (a vendor refused the request itself), so it is not retried.
 */
export class SendError extends Error {
  constructor(
    message: string,
    readonly final = false,
  ) {
    super(message);
  }
}

export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** The vendor bases a kind may send to instead of its default (settings of config-schema.ts). */
export interface VendorSettings {
  /** PagerDuty Events API base (`https://events.pagerduty.com`). */
  pagerdutyUrl?: string | undefined;
  /** Opsgenie API base replacing both regions' (empty: by the channel's region). */
  opsgenieUrl?: string | undefined;
}

/**
 * How a kind sends (senders.ts): every way out keeps the outbound rules (denied addresses,
 * the timeout, the answer read bounded, no redirect followed), so a kind cannot forget them.
 */
export interface Outbound {
  /**
   * POSTs `body`; a status outside 2xx is a SendError. `final4xx`: a vendor's 4xx (but 408
   * and 429) refuses the request itself, so it is not retried.
   */
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    opts?: { contentType?: string; final4xx?: boolean },
  ): Promise<void>;
  /** Sends a mail through smtpUrl (a SendError without one). */
  mail(to: readonly string[], subject: string, text: string, attachments?: MailAttachment[]): Promise<void>;
  readonly settings: VendorSettings;
}

/** What a send may need besides the notification: a test's keys are the channel's. */
export interface SendContext {
  channelId?: number;
  now?: () => number;
}

/**
 * What of a stored config reads back masked (SECRET_MASK), to its owner too: a credential
 * is write-only. Sending the mask back keeps the stored value, which the kind's `check`
 * decides (only for the same kind, destination and editor).
 */
export interface Masked {
  /** Settings shown as SECRET_MASK (a webhook's secret, a routing or API key). */
  keys?: readonly string[];
  /** Maps whose every value is shown as SECRET_MASK (a webhook's header values). */
  valuesOf?: readonly string[];
  /** The URL is the credential (a Slack incoming webhook, a Teams workflow's signed URL): only its origin is shown. */
  url?: boolean;
}

/** A channel's config as stored (JSON): its shape is its kind's, known to its kind alone. */
export type ChannelConfig = Record<string, unknown>;

/** A kind's config as stored: what its settings' schema describes. */
export type ConfigOf<P extends TProperties> = Static<TObject<P>>;

/** One kind of notification channel (see the top of this file). */
export interface ChannelKind<T extends string = string, P extends TProperties = TProperties> {
  /** Its `type` in the API and the channels table. */
  readonly type: T;
  /** Its name in the API's prose ("Slack", "PagerDuty"). */
  readonly title: string;
  /**
   * Its settings, in the order the API names them: the only keys its config takes, and its
   * schema in the API document (`<Type>ChannelConfig`). The document only: `check` validates.
   */
  readonly settings: P;
  /** What it is and sends, for the API document's description of a channel's `config`. */
  readonly about: string;
  readonly masked: Masked;
  /**
   * Checks a config given for it and returns it as stored, naming each problem through
   * `fail` (keys outside its settings are already named). `stored`: the channel's config before (of
   * another kind when the kind changed: `refused` then says so); a masked credential sent
   * back keeps its stored value only when `refused` is null and the kind's own rules agree
   * (a webhook's URL origin, an Opsgenie region), else it must be given again.
   */
  check(
    raw: Record<string, unknown>,
    stored: Partial<ConfigOf<P>> | undefined,
    fail: Fail,
    refused: KeepRefused,
  ): ConfigOf<P>;
  /** Sends a firing, a recovery or a test, once (the delivery queue retries); fails with a SendError. */
  send(config: ConfigOf<P>, n: Notification, out: Outbound, ctx: SendContext): Promise<void>;
  /** Absent: it carries no scheduled report (a schedule refuses it; the on-call kinds page people). */
  readonly reports?: {
    /** A run attaches the report's file (up to scheduleAttachMaxBytes) for it; the others get the link. */
    readonly attachesFile: boolean;
    send(config: ConfigOf<P>, n: ReportNotice, out: Outbound): Promise<void>;
  };
}
