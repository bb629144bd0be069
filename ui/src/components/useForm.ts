import { type ChangeEvent, useCallback, useRef, useState } from 'react';

type Values = Record<string, string | boolean>;
type KeysOf<T, V> = { [K in keyof T]: T[K] extends V ? K : never }[keyof T];
type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/**
 * A form's values: `text(name)` and `check(name)` give an input, select or checkbox its
 * value and onChange; `reset()` goes back to the first values (or `next`).
 */
export function useForm<T extends Values>(initial: T | (() => T)) {
  const [values, setValues] = useState<T>(initial);
  const first = useRef(values);
  const set = useCallback(<K extends keyof T>(name: K, value: T[K]) => {
    setValues((v) => ({ ...v, [name]: value }));
  }, []);
  const reset = useCallback((next?: Partial<T>) => setValues({ ...first.current, ...next }), []);
  const text = <K extends KeysOf<T, string>>(name: K) => ({
    value: values[name] as string,
    onChange: (e: ChangeEvent<Control>) => set(name, e.target.value as T[K]),
  });
  const check = <K extends KeysOf<T, boolean>>(name: K) => ({
    checked: values[name] as boolean,
    onChange: (e: ChangeEvent<HTMLInputElement>) => set(name, e.target.checked as T[K]),
  });
  return { values, set, reset, text, check };
}
