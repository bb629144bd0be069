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
 * - Messages are grouped first by app (each app its own set of templates), token count and
 *   first constant token, as Drain's fixed-depth parse tree does (He et al., ICWS 2017), so
 *   a message is compared with the few templates that could hold it.
 * - Within a group a message joins the template sharing the largest part of its constant
 *   tokens; a position becomes a variable only when the rest agrees enough. A constant
 *   word made of letters only weighs more than one with digits or punctuation, because
 *   words are the text of a message and the rest its values (Brain, Yu et al. 2023, makes
 *   the same observation with token frequencies).
 * - A word where the template has another word is an enumeration until shown otherwise
 *   (`Powered On`, `Powered Off`; `Failed password`, `Failed none`): two words at one
 *   position make two templates, which share what was seen there (a slot). The third word
 *   there shows a variable (`for user root`, `news`, `cyrus`): the templates of the slot
 *   become one, the first made, and `onMerge` tells which ids it took in, so that their
 *   stored events can follow (features/patterns).
 *
 * Lines are capped (`MAX_TOKENS` tokens, `MAX_CHARS` characters): what is beyond is one
 * variable, so a 1 MiB or 10,000-token line costs what a long ordinary one does.
 */

import { differsInKind, isBareWord, keyedValue, oneWordApart, weight } from './template-compare.js';
import { intern, templateId } from './template-strings.js';
import { MAX_TOKENS, tokenize, WILDCARD } from './template-tokens.js';

export { templateId } from './template-strings.js';
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
/**
 * Templates in one group (app, length, first word), each of which a message of the group is
 * compared with: a flood of messages alike in their first word and length but not otherwise
 * (fresh words after `user login`) costs at most this many comparisons a message.
 */
export const MAX_TEMPLATES_PER_GROUP = 50;
/** Different words seen at one position that make it a variable (two are an enumeration). */
export const WORDS_OF_A_VARIABLE = 3;

export interface MinedTemplate {
  id: string;
  app: string;
  tokens: string[];
  count: number;
}

/**
 * Templates compared with each other (one app, length and first word), and where the
 * group hangs, to let go of it once its last template is forgotten.
 */
class Group {
  readonly members: Cluster[] = [];
  constructor(
    private readonly byFirst: Map<string, Group>,
    readonly first: string,
  ) {}

  /** Takes an empty group out of the tree. */
  release(): void {
    if (this.byFirst.get(this.first) === this) this.byFirst.delete(this.first);
  }
}

interface Cluster extends MinedTemplate {
  /** The miner's clock when it last matched: of the rarest, the least recent is forgotten first. */
  used: number;
  /**
   * What its constant tokens weigh together (`weight`, each not `<*>`), kept as its tokens
   * change (`generalise`): a message is compared by the positions where it differs only.
   */
  weighs: number;
  /** The group it is in, to leave it when forgotten. */
  group: Group;
  /**
   * The words seen at a position where this template and another one word apart differ,
   * by position: one set shared by the templates of that slot; none for most templates.
   */
  slots?: Map<number, Set<string>>;
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
  private readonly groups = new Map<string, Array<Map<string, Group> | undefined>>();
  private readonly byId = new Map<string, Cluster>();
  private readonly perApp = new Map<string, Set<Cluster>>();
  private clock = 0;
  /**
   * What `closest` found besides the template it answers, kept here rather than in an
   * object made per message: where that template took a word as its slot's last (the slot
   * became a variable), else -1; when it answers none, a template one word apart and the
   * position of that word.
   */
  private joinedAt = -1;
  /** Whether the message differs from that template anywhere but its `<*>` (it generalises). */
  private differs = false;
  private near: Cluster | null = null;
  private nearAt = -1;

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
      /** Told when templates of one slot become one: `into` took in `merged` (their ids). */
      onMerge?: (into: MinedTemplate, merged: readonly MinedTemplate[]) => void;
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
    const made = this.hold({
      id: t.id,
      app: t.app,
      tokens: t.tokens.slice(0, MAX_TOKENS).map(intern),
      count: t.count,
      used: 0,
    });
    // Templates one word apart share their slot again (its words, not how many were seen).
    for (const c of made.group.members) {
      const at = c === made ? -1 : oneWordApart(c.tokens, made.tokens);
      if (at >= 0) {
        this.share(c, made, at);
        break;
      }
    }
  }

  /**
   * Another node merged these templates into `into` (a slot's third word): they are let
   * go of here too, their counts joining it, so their messages take its id.
   */
  absorb(into: string, merged: readonly string[]): void {
    const kept = this.byId.get(into);
    for (const id of merged) {
      const gone = this.byId.get(id);
      if (!gone || gone === kept) continue;
      if (kept) kept.count += gone.count;
      this.forget(gone, false);
    }
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
    for (const byLength of this.groups.values()) for (const byFirst of byLength) n += byFirst?.size ?? 0;
    return n;
  }

  /** The template of a message from `app`; `known`: values pipelines extracted from it. */
  match(app: string, message: string, known?: readonly string[]): MinedTemplate {
    const tokens = tokenize(message, known);
    const group = this.groupOf(app, tokens);
    this.clock += 1;
    const best = this.closest(group.members, tokens);
    const { joinedAt, near, nearAt } = this;
    if (best) {
      if (joinedAt >= 0) this.mergeSlot(best, joinedAt, tokens[joinedAt] as string);
      if (this.differs && generalise(best, tokens)) this.opts.onChange?.(best);
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
    // One word apart from another: the two share the slot of the words seen there.
    if (near && near.group === made.group) this.share(near, made, nearAt);
    this.opts.onChange?.(made);
    return made;
  }

  /** `made` joins the slot `near` has at `at` (made if none), each with its word there. */
  private share(near: Cluster, made: Cluster, at: number): void {
    near.slots ??= new Map();
    let seen = near.slots.get(at);
    if (!seen) {
      seen = new Set([near.tokens[at] as string]);
      near.slots.set(at, seen);
    }
    seen.add(made.tokens[at] as string);
    made.slots ??= new Map();
    made.slots.set(at, seen);
  }

  /**
   * A slot's last word came (it is a variable): the other templates of the slot are taken
   * into `into`, which the message generalises at the position.
   */
  private mergeSlot(into: Cluster, at: number, word: string): void {
    const seen = into.slots?.get(at);
    if (!seen) return;
    seen.add(word);
    into.slots?.delete(at);
    const merged = into.group.members.filter((c) => c !== into && c.slots?.get(at) === seen);
    for (const c of merged) {
      into.count += c.count;
      this.forget(c, false);
    }
    if (merged.length > 0) this.opts.onMerge?.(into, merged);
  }

  /**
   * The group a message of `app` with these tokens is compared in: app, length and first
   * constant word, as Drain's parse tree descends by the leading token.
   */
  private groupOf(app: string, tokens: readonly string[]): Group {
    let first = WILDCARD;
    for (const t of tokens)
      if (!t.includes(WILDCARD)) {
        first = t;
        break;
      }
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
    let group = byFirst.get(first);
    if (!group) {
      group = new Group(byFirst, intern(first));
      byFirst.set(group.first, group);
    }
    return group;
  }

  /**
   * Holds a new template: first forgets one beyond the caps (the rarest of those its app
   * has held longest, or of all), then puts it in its group.
   */
  private hold(t: Omit<Cluster, 'group' | 'weighs'>): Cluster {
    const same = this.perApp.get(t.app);
    if (same && same.size >= (this.opts.maxTemplatesPerApp ?? MAX_TEMPLATES_PER_APP)) {
      const gone = rarestHeldLongest(same);
      if (gone) this.forget(gone);
    } else if (this.byId.size >= (this.opts.maxTemplates ?? MAX_TEMPLATES)) this.forgetOneOfAll();
    let held = this.perApp.get(t.app);
    if (!held) {
      held = new Set();
      this.perApp.set(t.app, held);
    }
    // The group after forgetting: forgetting may have let go of the one the message was compared in.
    const group = this.groupOf(t.app, t.tokens);
    // A message is compared with every template of its group: a full group forgets its rarest.
    if (group.members.length >= MAX_TEMPLATES_PER_GROUP) {
      const gone = rarest(group.members);
      if (gone) this.forget(gone);
    }
    const made: Cluster = {
      id: t.id,
      app: t.app,
      tokens: t.tokens,
      count: t.count,
      used: t.used,
      weighs: constantWeight(t.tokens),
      group,
    };
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

  /**
   * Lets go of a template, and of its group and its app's tree once they hold none;
   * `told`: whether `onForget` hears of it (not when it was merged into another).
   */
  private forget(victim: Cluster, told = true): void {
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
    if (told) this.opts.onForget?.(victim);
  }

  /**
   * The template of the group a message joins, or none when no template is like it enough;
   * then maybe one a word apart (an enumeration's other word, `near`).
   */
  private closest(group: readonly Cluster[], tokens: readonly string[]): Cluster | null {
    const needed = this.opts.similarity ?? SIMILARITY;
    let best: Cluster | null = null;
    this.joinedAt = -1;
    this.near = null;
    this.nearAt = -1;
    let bestScore = -1;
    for (let k = 0; k < group.length; k++) {
      const c = group[k] as Cluster;
      // Where the message has the template's token, that token counts in full: only where
      // they differ is anything read.
      let total = c.weighs;
      let differ = 0;
      let wild = 0;
      let exact = true;
      let differs = false;
      let hard = false;
      let words = 0;
      let wordAt = -1;
      for (let i = 0; i < tokens.length; i++) {
        const t = c.tokens[i] as string;
        const m = tokens[i] as string;
        if (t === m) {
          if (t === WILDCARD) wild += 1;
          continue;
        }
        if (t !== WILDCARD) differs = true;
        if (t === WILDCARD || keyedValue(t, m) === t) {
          wild += 1;
          exact = false;
          // A key's value (`key=<*>`): a variable here, so none of the template's constants.
          if (t !== WILDCARD) total -= weight(t);
          continue;
        }
        differ += weight(t);
        if (differsInKind(t, m)) {
          hard = true;
          break;
        } else if (isBareWord(m) && isBareWord(t)) {
          words += 1;
          wordAt = i;
          // Two words apart: neither joins nor is one word apart.
          if (words === 2) break;
        }
      }
      if (hard || words > 1) continue;
      // A template of variables only takes any message of its length: only an exact fit.
      const score = total === 0 ? (exact ? 1 : 0) : (total - differ) / total;
      if (score < needed) continue;
      let joinedAt = -1;
      if (words > 0) {
        // Words apart: one more word of a slot that has seen enough makes it a variable.
        const seen = words === 1 ? c.slots?.get(wordAt) : undefined;
        if (seen && !seen.has(tokens[wordAt] as string) && seen.size + 1 >= WORDS_OF_A_VARIABLE)
          joinedAt = wordAt;
        else {
          if (words === 1 && this.near === null) {
            this.near = c;
            this.nearAt = wordAt;
          }
          continue;
        }
      }
      if (score > bestScore || (score === bestScore && best !== null && wild > countWild(best))) {
        best = c;
        this.joinedAt = joinedAt;
        this.differs = differs;
        bestScore = score;
      }
    }
    return best;
  }
}

/**
 * The rarest of the `EVICTION_SAMPLE` templates an app has held longest (its set keeps
 * them in the order they came); the others looked at go to the back. Looking at all of an
 * app's 5,000 for each new one made a flood of fresh messages cost ~100 µs each.
 */
function rarestHeldLongest(held: Set<Cluster>): Cluster | null {
  const looked: Cluster[] = [];
  for (const c of held) {
    looked.push(c);
    if (looked.length === EVICTION_SAMPLE) break;
  }
  const victim = rarest(looked);
  for (const c of looked) {
    if (c === victim) continue;
    held.delete(c);
    held.add(c);
  }
  return victim;
}

/** The rarest of the templates (of those, the one matched least recently). */
function rarest(of: Iterable<Cluster>): Cluster | null {
  let victim: Cluster | null = null;
  for (const c of of)
    if (!victim || c.count < victim.count || (c.count === victim.count && c.used < victim.used)) victim = c;
  return victim;
}

/** What the tokens that are not `<*>` weigh together. */
function constantWeight(tokens: readonly string[]): number {
  let w = 0;
  for (const t of tokens) if (t !== WILDCARD) w += weight(t);
  return w;
}

function countWild(c: Cluster): number {
  let n = 0;
  for (const t of c.tokens) if (t === WILDCARD) n++;
  return n;
}

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
      c.weighs += (general === WILDCARD ? 0 : weight(general)) - weight(t);
      changed = true;
    }
  }
  return changed;
}
