import { createHash } from 'node:crypto';

/**
 * An online template miner (docs/api/patterns.md): each message, as it arrives, joins the template it
 * is most like, and a template that generalises (a constant turned out to vary) keeps its
 * id. Designed from the literature and made to use what a log store knows:
 *
 * - Tokens that are variables by their form are masked before any comparison: IP
 *   addresses (with a port or in brackets), numbers and hex ids (also inside a token:
 *   `sshd[1234]:`, `uid=0`), UUIDs, MAC addresses, times and dates, URLs, e-mail
 *   addresses, paths and fully qualified host names. Values a pipeline already extracted
 *   from the message (`src_ip`, `user`, …) are variables by definition: given as `known`,
 *   they are masked too.
 * - Messages are grouped first by app (each app its own set of templates), token count,
 *   first constant token and the token after it, as Drain's fixed-depth parse tree does
 *   (He et al., ICWS 2017), so a message is compared with the few templates that could
 *   hold it, and two that differ in their leading words (`Failed password …`, `Failed
 *   none …`) are two templates.
 * - Within a group a message joins the template sharing the largest part of its constant
 *   tokens; a position becomes a variable only when the rest agrees enough. A constant
 *   word made of letters only weighs more than one with digits or punctuation, because
 *   words are the text of a message and the rest its values (Brain, Yu et al. 2023, makes
 *   the same observation with token frequencies).
 *
 * Lines are capped (`MAX_TOKENS` tokens, `MAX_CHARS` characters): what is beyond is one
 * variable, so a 1 MiB or 10,000-token line costs what a long ordinary one does.
 */

export const MAX_TOKENS = 64;
export const MAX_CHARS = 4096;
/** Templates kept per app; beyond it the rarest of the app's is forgotten. */
export const MAX_TEMPLATES_PER_APP = 5000;
/**
 * Templates kept in all, over every app (an `app` of many values, each with templates of
 * its own, is bounded too); beyond it the rarest of the `EVICTION_SAMPLE` held longest is
 * forgotten, and the others go to the back.
 */
export const MAX_TEMPLATES = 100_000;
export const EVICTION_SAMPLE = 32;
export const WILDCARD = '<*>';
/** The share of a template's constant weight a message must have to join it. */
export const SIMILARITY = 0.7;
/** Groups under one first word, the second word's `<*>` among them (Drain's `maxChild`). */
export const MAX_CHILDREN = 100;

export interface MinedTemplate {
  id: string;
  app: string;
  tokens: string[];
  count: number;
}

/** Characters a token holds, as bits (`charsOf`): what a form cannot match without. */
const DIGIT = 1;
const DOT = 2;
const SLASH = 4;
const AT = 8;
const COLON = 16;
const BACKSLASH = 32;

/** The bits of the characters `token` holds, in one pass (most tokens are short). */
function charsOf(token: string): number {
  let bits = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) bits |= DIGIT;
    // Letters, the commonest, are nothing a form needs.
    else if ((c | 32) >= 97 && (c | 32) <= 122) continue;
    else if (c === 46) bits |= DOT;
    else if (c === 47) bits |= SLASH;
    else if (c === 64) bits |= AT;
    else if (c === 58) bits |= COLON;
    else if (c === 92) bits |= BACKSLASH;
  }
  return bits;
}

const NUMBER = /^[-+]?\d+(?:[.,]\d+)*[a-zA-Z%]{0,3}$/;
const HEX = /^(?=[a-fA-F]*\d)[0-9a-fA-F]{8,}$/;
const HEX_0X = /^0x[0-9a-fA-F]+$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const MAC = /^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$/;
const URL_FORM = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/\S+$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[a-zA-Z]{2,}$/;
const PATH = /^(?:[~.]?\/[^/\s]*){2,}$|^\/[^\s/]+$|^[A-Za-z]:\\/;
const FQDN = /^[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+){2,}\.?$/;
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * Whether a whole token is a variable by its form. Each form is tried only when the token
 * holds what it cannot match without (a length, a character: `chars`), so most tokens are
 * refused before any regex runs.
 */
function isVariableForm(t: string, chars: number): boolean {
  // numbers, signed, with decimals or a unit suffix of letters (12ms, 1.5s, 64KB)
  if ((isDigit(t.charCodeAt(0)) || isDigit(t.charCodeAt(1))) && NUMBER.test(t)) return true;
  // hex ids and hashes (with a digit: `deadbeef` alone is a word)
  if ((chars & DIGIT) !== 0 && t.length >= 8 && HEX.test(t)) return true;
  if (t.startsWith('0x') && HEX_0X.test(t)) return true;
  if (t.length === 36 && UUID.test(t)) return true;
  if ((chars & COLON) !== 0 && t.length === 17 && MAC.test(t)) return true;
  // URLs and e-mail addresses
  if ((chars & COLON) !== 0 && (chars & SLASH) !== 0 && t.includes('://') && URL_FORM.test(t)) return true;
  if ((chars & AT) !== 0 && EMAIL.test(t)) return true;
  // paths: /a/b, ./a, ~/a, /a, C:\a
  if (((chars & SLASH) !== 0 || ((chars & BACKSLASH) !== 0 && t.includes(':\\'))) && PATH.test(t))
    return true;
  // fully qualified host names (three labels or more)
  return (chars & DOT) !== 0 && FQDN.test(t);
}
/**
 * Values inside a token: IPv4 (with a port), times, hex runs with a digit, numbers; digits
 * right after a letter only from three on (`ssh2`, `eth0` and `utf8` are names, `user1234` a value).
 */
const INNER_VALUE =
  /\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?|\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?|(?<![A-Za-z])(?:0x)?[0-9a-fA-F]*\d[0-9a-fA-F]*(?:[.:-][0-9a-fA-F]+)*|(?<=[A-Za-z])\d{3,}/g;
/** A token without any of these is a word (a hex id has a digit, a host a dot, a path a slash). */
const MAYBE_VALUE = DIGIT | DOT | SLASH | AT | COLON | BACKSLASH;
/** An IPv6 address (also in brackets, with a port). */
const IPV6 = /^\[?[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}\]?(?::\d+)?$/;
const WORD = /^[A-Za-z]+$/;

/** Punctuation around a token's value: `(host)`, `[1.2.3.4]`, `"x",`. */
const OPENS = '([{<"\'';
const CLOSES = ')]}>"\',;:.';

/**
 * A token as compared: a variable by its form becomes `<*>`, and so does a value in a
 * frame (`[1.2.3.4]` → `[<*>]`), after a key (`rhost=host.example.net` → `rhost=<*>`) or
 * inside a word (`sshd[1234]:` → `sshd[<*>]:`).
 */
export function maskToken(token: string): string {
  const chars = charsOf(token);
  // Most tokens are words: nothing in them can be a value.
  if ((chars & MAYBE_VALUE) === 0) return token;
  if ((chars & COLON) !== 0 && token.includes('::') && IPV6.test(token)) return WILDCARD;
  const eq = token.indexOf('=');
  if (eq > 0 && eq < token.length - 1) return `${token.slice(0, eq + 1)}${maskToken(token.slice(eq + 1))}`;
  let start = 0;
  while (start < token.length && OPENS.includes(token[start] as string)) start++;
  let end = token.length;
  while (end > start && CLOSES.includes(token[end - 1] as string)) end--;
  // In a frame (`[1.2.3.4]`, `(host)`, `"x",`): the value inside it.
  if ((start > 0 || end < token.length) && end > start) {
    const core = maskValue(token.slice(start, end));
    if (core === WILDCARD) return `${token.slice(0, start)}${WILDCARD}${token.slice(end)}`;
  }
  return maskValue(token, chars);
}

function maskValue(token: string, chars = charsOf(token)): string {
  if (isVariableForm(token, chars)) return WILDCARD;
  if ((chars & DIGIT) === 0) return token;
  const masked = token.replace(INNER_VALUE, WILDCARD);
  return masked === WILDCARD || /^[^A-Za-z]*$/.test(masked) ? WILDCARD : masked;
}

/**
 * A message's tokens, masked, capped at `MAX_TOKENS` (the rest one variable). A `known`
 * value masks the last token equal to it, not every one: a value follows what names it
 * (`Invalid user user from …`: the user is the second `user`, the first is the text).
 */
export function tokenize(message: string, known?: readonly string[]): string[] {
  const text = message.length > MAX_CHARS ? message.slice(0, MAX_CHARS) : message;
  const raw = text.split(/\s+/);
  const values: number[] = [];
  if (known) for (const v of known) values.push(raw.lastIndexOf(v));
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const t = raw[i] as string;
    if (!t) continue;
    if (out.length === MAX_TOKENS - 1) {
      out.push(WILDCARD);
      break;
    }
    out.push(values.includes(i) ? WILDCARD : maskToken(t));
  }
  return out;
}

/**
 * Values pipelines or intake put in columns (`user`, `src_ip`, `dst_ip`): where the message
 * holds them, they are variables (`tokenize`'s `known`).
 */
export function knownValues(e: {
  user: string | null;
  src_ip: string | null;
  dst_ip: string | null;
}): string[] | undefined {
  if (e.user === null && e.src_ip === null && e.dst_ip === null) return undefined;
  const known: string[] = [];
  for (const v of [e.user, e.src_ip, e.dst_ip]) if (v && v !== WILDCARD) known.push(v);
  return known;
}

/** How much a constant token says about a message: words most, values least. */
const weight = (token: string) => (WORD.test(token) ? 2 : 1);

/**
 * Two tokens at one position that no variable can make alike: the same masked value in
 * another frame (`(uid=<*>)`, `LOGIN(uid=<*>)`), or a key without a value and the same
 * key with one (`rhost=` and `rhost=<*>`: a value absent is a form of its own, not one
 * more value). Only a position whose tokens are plain words or whole values becomes a
 * variable.
 */
function differsInKind(a: string, b: string): boolean {
  if (a.includes(WILDCARD) && b.includes(WILDCARD)) return true;
  const emptyA = a.endsWith('=');
  if (emptyA === b.endsWith('=')) return false;
  return emptyA ? b.startsWith(a) : a.startsWith(b);
}

/**
 * Templates compared with each other (one app, length, first and second word), and where
 * the group hangs, to let go of it once its last template is forgotten.
 */
class Group {
  readonly members: Cluster[] = [];
  constructor(
    private readonly byFirst: Map<string, Branch>,
    readonly first: string,
    readonly second: string,
  ) {}

  /** Takes an empty group out of the tree (a first word's own group once its others are gone too). */
  release(): void {
    const branch = this.byFirst.get(this.first);
    if (!branch) return;
    if (branch.more?.get(this.second) === this) {
      branch.more.delete(this.second);
      if (branch.more.size === 0) branch.more = null;
    }
    if (branch.more === null && branch.group.members.length === 0) this.byFirst.delete(this.first);
  }
}

/**
 * The groups under one first word, by the second: the group of the first second word
 * seen, and a map only when there are more (most first words have one).
 */
interface Branch {
  group: Group;
  more: Map<string, Group> | null;
}

interface Cluster extends MinedTemplate {
  /** The miner's clock when it last matched: of the rarest, the least recent is forgotten first. */
  used: number;
  /** The group it is in, to leave it when forgotten. */
  group: Group;
}

/**
 * The miner: `match` gives a message's template (created or generalised as needed).
 * Deterministic: the same messages in the same order give the same templates and ids.
 */
export class TemplateMiner {
  /**
   * Groups by app, then token count (an index: at most MAX_TOKENS), then first constant
   * token and the token after it: no key is made per message or per template.
   */
  private readonly groups = new Map<string, Array<Map<string, Branch> | undefined>>();
  private readonly byId = new Map<string, Cluster>();
  private readonly perApp = new Map<string, Set<Cluster>>();
  private clock = 0;

  constructor(
    private readonly opts: {
      /** Share of a template's constant weight a message must have to join it (0–1). */
      similarity?: number;
      maxTemplatesPerApp?: number;
      /** Templates held in all (`MAX_TEMPLATES`). */
      maxTemplates?: number;
      /** Told of each template made or generalised (for the other nodes of a cluster). */
      onChange?: (t: MinedTemplate) => void;
      /** Told of each template forgotten (beyond the cap of its app, or of all). */
      onForget?: (t: MinedTemplate) => void;
    } = {},
  ) {}

  /**
   * Takes up a template made before (by this process before a restart, or by another
   * node): messages like it get its id. Its tokens are the template's, variables `<*>`.
   */
  adopt(t: { id: string; app: string; tokens: readonly string[]; count: number }): void {
    const held = this.byId.get(t.id);
    if (held) {
      // Known already: it takes up what the other made more general.
      if (held.tokens.length === t.tokens.length) generalise(held, t.tokens);
      return;
    }
    this.hold({
      id: t.id,
      app: t.app,
      tokens: t.tokens.slice(0, MAX_TOKENS).map(intern),
      count: t.count,
      used: 0,
    });
  }

  /** A template held now, by its id. */
  get(id: string): MinedTemplate | undefined {
    return this.byId.get(id);
  }

  /** How many templates are held. */
  get size(): number {
    return this.byId.size;
  }

  /** How many groups templates are compared in (each held by a template; for tests). */
  get groupCount(): number {
    let n = 0;
    for (const byLength of this.groups.values())
      for (const byFirst of byLength) for (const b of byFirst?.values() ?? []) n += 1 + (b.more?.size ?? 0);
    return n;
  }

  /** The template of a message from `app`; `known`: values pipelines extracted from it. */
  match(app: string, message: string, known?: readonly string[]): MinedTemplate {
    const tokens = tokenize(message, known);
    const group = this.groupOf(app, tokens);
    this.clock += 1;
    const best = this.closest(group.members, tokens);
    if (best) {
      if (generalise(best, tokens)) this.opts.onChange?.(best);
      best.count += 1;
      best.used = this.clock;
      return best;
    }
    // Two templates of one app made from the same tokens would share an id: the first is kept.
    const id = templateId(app, tokens);
    const twin = this.byId.get(id);
    if (twin) {
      if (group.members.length === 0) group.release();
      return twin;
    }
    // The template keeps one copy of each word (`intern`): most are shared by many templates.
    const made = this.hold({ id, app, tokens: tokens.map(intern), count: 1, used: this.clock });
    this.opts.onChange?.(made);
    return made;
  }

  /**
   * The group a message of `app` with these tokens is compared in: app, length, first
   * constant word and the token after it (a variable there is `<*>`), as Drain's parse tree
   * descends by the leading tokens. The second word tells messages apart that share all but
   * it (`Failed password for …`, `Failed none for …`); past `MAX_CHILDREN` distinct second
   * words under one first, new ones share the `<*>` group (the second word was a value).
   */
  private groupOf(app: string, tokens: readonly string[]): Group {
    const at = tokens.findIndex((t) => !t.includes(WILDCARD));
    const first = at < 0 ? WILDCARD : (tokens[at] as string);
    const next = at < 0 ? undefined : tokens[at + 1];
    let second = next === undefined ? '' : next.includes(WILDCARD) ? WILDCARD : next;
    let byLength = this.groups.get(app);
    if (!byLength) {
      byLength = [];
      this.groups.set(app, byLength);
    }
    let byFirst = byLength[tokens.length];
    if (!byFirst) {
      byFirst = new Map();
      byLength[tokens.length] = byFirst;
    }
    let branch = byFirst.get(first);
    if (!branch) {
      const group = new Group(byFirst, intern(first), intern(second));
      branch = { group, more: null };
      byFirst.set(group.first, branch);
    }
    if (branch.group.second === second) return branch.group;
    let group = branch.more?.get(second);
    if (group) return group;
    // Past the cap a new second word is a value: the `<*>` group takes it (one place is kept for it).
    if (2 + (branch.more?.size ?? 0) >= MAX_CHILDREN) {
      second = WILDCARD;
      if (branch.group.second === second) return branch.group;
      group = branch.more?.get(second);
      if (group) return group;
    }
    group = new Group(byFirst, branch.group.first, intern(second));
    branch.more ??= new Map();
    branch.more.set(group.second, group);
    return group;
  }

  /**
   * Holds a new template: first forgets one beyond the caps (the rarest of its app's, or
   * one of the rarest of all), then puts it in its group.
   */
  private hold(t: Omit<Cluster, 'group'>): Cluster {
    const same = this.perApp.get(t.app);
    if (same && same.size >= (this.opts.maxTemplatesPerApp ?? MAX_TEMPLATES_PER_APP)) {
      const gone = rarest(same);
      if (gone) this.forget(gone);
    } else if (this.byId.size >= (this.opts.maxTemplates ?? MAX_TEMPLATES)) this.forgetOneOfAll();
    let held = this.perApp.get(t.app);
    if (!held) {
      held = new Set();
      this.perApp.set(t.app, held);
    }
    // The group after forgetting: forgetting may have let go of the one the message was compared in.
    const group = this.groupOf(t.app, t.tokens);
    const made: Cluster = { id: t.id, app: t.app, tokens: t.tokens, count: t.count, used: t.used, group };
    made.group.members.push(made);
    held.add(made);
    this.byId.set(made.id, made);
    return made;
  }

  /** Forgets the rarest of the templates held longest; the others looked at go to the back. */
  private forgetOneOfAll(): void {
    const looked: Cluster[] = [];
    for (const c of this.byId.values()) {
      looked.push(c);
      if (looked.length === EVICTION_SAMPLE) break;
    }
    const victim = rarest(looked);
    for (const c of looked) {
      if (c === victim) continue;
      this.byId.delete(c.id);
      this.byId.set(c.id, c);
    }
    if (victim) this.forget(victim);
  }

  /** Lets go of a template, and of its group and its app's tree once they hold none. */
  private forget(victim: Cluster): void {
    this.byId.delete(victim.id);
    const members = victim.group.members;
    const at = members.indexOf(victim);
    if (at >= 0) members.splice(at, 1);
    if (members.length === 0) victim.group.release();
    const held = this.perApp.get(victim.app);
    held?.delete(victim);
    if (held?.size === 0) {
      this.perApp.delete(victim.app);
      this.groups.delete(victim.app);
    }
    this.opts.onForget?.(victim);
  }

  /** The template of the group a message joins, or none when no template is like it enough. */
  private closest(group: readonly Cluster[], tokens: readonly string[]): Cluster | null {
    const needed = this.opts.similarity ?? SIMILARITY;
    let best: Cluster | null = null;
    let bestScore = -1;
    for (const c of group) {
      let total = 0;
      let same = 0;
      let wild = 0;
      let hard = false;
      for (let i = 0; i < tokens.length; i++) {
        const t = c.tokens[i] as string;
        const m = tokens[i] as string;
        if (t === WILDCARD || (t !== m && keyedValue(t, m) === t)) {
          wild += 1;
          continue;
        }
        const w = weight(t);
        total += w;
        if (t === m) same += w;
        else if (differsInKind(t, m)) {
          hard = true;
          break;
        }
      }
      if (hard) continue;
      // A template of variables only takes any message of its length: only an exact fit.
      const score = total === 0 ? (wild === tokens.length ? 1 : 0) : same / total;
      if (score >= needed && (score > bestScore || (score === bestScore && best && wild > countWild(best)))) {
        best = c;
        bestScore = score;
      }
    }
    return best;
  }
}

/** The rarest of the templates (of those, the one matched least recently). */
function rarest(of: Iterable<Cluster>): Cluster | null {
  let victim: Cluster | null = null;
  for (const c of of)
    if (!victim || c.count < victim.count || (c.count === victim.count && c.used < victim.used)) victim = c;
  return victim;
}

const countWild = (c: Cluster) => c.tokens.reduce((n, t) => n + (t === WILDCARD ? 1 : 0), 0);

/**
 * Positions where the message differs become variables (a key's value alone when both
 * hold one after the same `key=`: `tty=<*>`); answers whether any did.
 */
function generalise(c: Cluster, tokens: readonly string[]): boolean {
  let changed = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = c.tokens[i] as string;
    const m = tokens[i] as string;
    if (t === m || t === WILDCARD) continue;
    const general = keyedValue(t, m) ?? WILDCARD;
    if (general !== t) {
      c.tokens[i] = general;
      changed = true;
    }
  }
  return changed;
}

/** `key=<*>` when both tokens hold a value after the same `key=`, else undefined. */
function keyedValue(a: string, b: string): string | undefined {
  const eq = a.indexOf('=');
  if (eq <= 0 || eq === a.length - 1 || b.length <= eq + 1 || b.charCodeAt(eq) !== 61) return undefined;
  return a.startsWith(b.slice(0, eq)) ? `${a.slice(0, eq + 1)}${WILDCARD}` : undefined;
}

/**
 * A template's id: from its app and the tokens it was created with, so the same first
 * message gives the same id on every node and after every restart; 14 characters of
 * letters and digits.
 */
export function templateId(app: string, tokens: readonly string[]): string {
  return createHash('sha256')
    .update(app)
    .update('\u0000')
    .update(tokens.join(' '))
    .digest('base64url')
    .replace(/[-_]/g, '')
    .slice(0, 14);
}

/**
 * The one copy of a string that V8 keeps for it as a property name (its string table,
 * which lets go of strings nothing else holds). A template's tokens were each cut from
 * their message: 100,000 templates of common words held 71 MiB, interned 51.
 */
function intern(s: string): string {
  const o: Record<string, 0> = { [s]: 0 };
  for (const k in o) return k;
  return s;
}
