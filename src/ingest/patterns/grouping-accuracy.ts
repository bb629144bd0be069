/**
 * Grouping accuracy as the Loghub benchmark defines it (Zhu et al., ICSE-SEIP 2019): a
 * message is grouped right when the messages of its predicted group are exactly those of
 * its true group; GA is the share of messages grouped right. FGA (Jiang et al., 2024) is
 * the F1 of groups: a predicted group is right when it equals a true group.
 */
export function groupingAccuracy(
  truth: readonly string[],
  predicted: readonly string[],
): { ga: number; fga: number; groups: number; trueGroups: number } {
  if (truth.length !== predicted.length) throw new Error('truth and predicted differ in length');
  const members = (labels: readonly string[]) => {
    const m = new Map<string, number[]>();
    labels.forEach((l, i) => {
      const list = m.get(l);
      if (list) list.push(i);
      else m.set(l, [i]);
    });
    return m;
  };
  const byTruth = members(truth);
  const byPredicted = members(predicted);
  let right = 0;
  let rightGroups = 0;
  for (const list of byPredicted.values()) {
    const t = truth[list[0] as number] as string;
    const same = byTruth.get(t) as number[];
    // Right when the predicted group holds exactly the messages of one true group.
    if (same.length === list.length && list.every((i) => truth[i] === t)) {
      right += list.length;
      rightGroups += 1;
    }
  }
  const n = truth.length || 1;
  const precision = byPredicted.size ? rightGroups / byPredicted.size : 0;
  const recall = byTruth.size ? rightGroups / byTruth.size : 0;
  return {
    ga: right / n,
    fga: precision + recall ? (2 * precision * recall) / (precision + recall) : 0,
    groups: byPredicted.size,
    trueGroups: byTruth.size,
  };
}
