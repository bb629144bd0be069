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

import { MAX_TOKENS, tokenize, WILDCARD } from './template-tokens.js';

export { knownValues, MAX_CHARS, MAX_TOKENS, maskToken, tokenize, WILDCARD } from './template-tokens.js';

/** Templates kept per app; beyond it the rarest of the app's is forgotten. */
export const MAX_TEMPLATES_PER_APP = 5000;
/**
 * Templates kept in all, over every app (an `app` of many values, each with templates of
 * its own, is bounded too); beyond it the rarest of the `EVICTION_SAMPLE` held longest is
 * forgotten, and the others go to the back.
 */
export const MAX_TEMPLATES = 100_000;
export const EVICTION_SAMPLE = 32;
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

const WORD = /^[A-Za-z]+$/;

/** How much a constant token says about a message: words most, values least. */
const weight = (token: string) => (WORD.test(token) ? 2 : 1);

/**
 * Two tokens at one position that no variable can make alike: the same masked value in
 * another frame (`(uid=<*>)`, `LOGIN(uid=<*>)`), or a key without a value and the same
 * key with one (`rhost=` and `rhost=<*>`: a value absent is a form of its own, not one
 * more value). Only a position whose tokens are plain words or values becomes a
 * variable: a value in a frame beside a whole value (`cache_<*>_part0`, `<*>`) is one.
 */
function differsInKind(a: string, b: string): boolean {
  if (a.includes(WILDCARD) && b.includes(WILDCARD)) return a !== WILDCARD && b !== WILDCARD;
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
      let exact = true;
      let hard = false;
      for (let i = 0; i < tokens.length; i++) {
        const t = c.tokens[i] as string;
        const m = tokens[i] as string;
        if (t === WILDCARD || (t !== m && keyedValue(t, m) === t)) {
          wild += 1;
          if (t !== m) exact = false;
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
      const score = total === 0 ? (exact ? 1 : 0) : same / total;
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
