/** Class names, the falsy ones left out. */
export const cls = (...names: (string | false | null | undefined)[]) => names.filter(Boolean).join(' ');
