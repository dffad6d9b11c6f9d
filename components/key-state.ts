import { useRef, useSyncExternalStore } from 'react';

// State that a key changes and whose frame should not wait: useState's updates from Ink's
// input handler get React's default priority, so their render waits for a scheduler task,
// behind whatever I/O the coordinator's thread has queued (10-50 ms while a hundred lanes
// integrate: docs/PERFORMANCE.md "Keys while a hundred lanes end"). A value read through
// useSyncExternalStore is rendered synchronously, in a microtask right after the key.

type Update<T> = T | ((old: T) => T);

interface KeyState<T> {
  value: T;
  listeners: Set<() => void>;
  subscribe: (listener: () => void) => () => void;
  get: () => T;
  set: (update: Update<T>) => void;
}

function keyState<T>(initial: T): KeyState<T> {
  const state: KeyState<T> = {
    value: initial,
    listeners: new Set(),
    subscribe: (listener) => {
      state.listeners.add(listener);
      return () => state.listeners.delete(listener);
    },
    get: () => state.value,
    set: (update) => {
      const next = typeof update === 'function' ? (update as (old: T) => T)(state.value) : update;
      if (Object.is(next, state.value)) return;
      state.value = next;
      for (const listener of state.listeners) listener();
    },
  };
  return state;
}

/** Like useState (T not a function), with updates rendered at once (see above). */
export function useKeyState<T>(initial: T): [T, (update: Update<T>) => void] {
  const state = useRef<KeyState<T> | null>(null);
  state.current ??= keyState(initial);
  const { subscribe, get, set } = state.current;
  return [useSyncExternalStore(subscribe, get), set];
}
