/**
 * Column widths for a table `available` wide, from each column's natural width (what its
 * longest line needs). When they all fit, columns grow in proportion, at most to twice
 * their natural width (a two-column table spread over a landscape page reads badly).
 * Otherwise the columns narrower than an equal share keep their width and the wide ones
 * share what is left equally; no column goes below `min` unless even that cannot fit.
 */
export function fitColumns(natural: readonly number[], available: number, min: number): number[] {
  const n = natural.length;
  if (n === 0) return [];
  if (n * min >= available) return natural.map(() => available / n);
  const wanted = natural.map((w) => Math.max(w, min));
  const total = wanted.reduce((a, b) => a + b, 0);
  if (total <= available) return wanted.map((w) => w * Math.min(2, available / total));
  const widths = [...wanted];
  let open = wanted.map((_, i) => i);
  let remaining = available;
  // Each round settles the columns that fit in an equal share of what is left; that share
  // only grows as they leave, so the loop ends with at least one column sharing.
  for (;;) {
    const share = remaining / open.length;
    const fits = open.filter((i) => (wanted[i] ?? 0) <= share);
    if (fits.length === 0) {
      for (const i of open) widths[i] = share;
      return widths;
    }
    for (const i of fits) remaining -= wanted[i] ?? 0;
    open = open.filter((i) => !fits.includes(i));
  }
}
