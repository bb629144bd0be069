import { useSyncExternalStore } from 'react';

/** Whether result rows wrap long messages (else one line each, cut with an ellipsis). */
const WRAP_KEY = 'logscope.wrapRows';
const listeners = new Set<() => void>();

function readWrap(): boolean {
  try {
    return window.localStorage.getItem(WRAP_KEY) === '1';
  } catch {
    return false;
  }
}

let wrap = readWrap();

function setWrap(on: boolean): void {
  wrap = on;
  try {
    window.localStorage.setItem(WRAP_KEY, on ? '1' : '0');
  } catch {
    // Storage may be unavailable: the choice lasts until reload.
  }
  for (const listener of listeners) listener();
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/** The reader's choice, remembered in their browser; every table on the page follows it. */
export const useWrap = (): boolean => useSyncExternalStore(subscribe, () => wrap);

/** The "Wrap lines" switch beside the column picker. */
export function WrapToggle() {
  const on = useWrap();
  return (
    <button
      type="button"
      role="switch"
      aria-checked={on}
      className={on ? 'switch small wrap-switch on' : 'switch small wrap-switch'}
      onClick={() => setWrap(!on)}
    >
      <span className="switch-track" aria-hidden="true" />
      Wrap lines
    </button>
  );
}
