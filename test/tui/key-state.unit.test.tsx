import { Text, useInput } from 'ink';
import { cleanup, render } from 'ink-testing-library';
import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { useKeyState } from '../../components/key-state.js';
import { until } from '../helpers/until.js';

// A key's state change is drawn before the event loop turns (components/key-state.ts): its
// frame does not wait behind the I/O the coordinator's thread has queued meanwhile.

afterEach(() => cleanup());

function Counter({ hook }: { hook: typeof useState<number> | typeof useKeyState<number> }) {
  const [n, setN] = hook(0);
  useInput((input) => {
    if (input === 'j') setN((i) => i + 1);
  });
  return <Text>at {n}</Text>;
}

/** Runs the microtasks queued now (and those they queue), but no timer, immediate or I/O. */
async function microtasksOnly(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('key state', () => {
  it('draws a key with useKeyState before the event loop turns, as useState does not', async () => {
    const viaKeyState = render(<Counter hook={useKeyState} />);
    const viaState = render(<Counter hook={useState} />);
    viaKeyState.stdin.write('j');
    viaState.stdin.write('j');
    await microtasksOnly();
    expect(viaKeyState.lastFrame()).toBe('at 1');
    expect(viaState.lastFrame()).toBe('at 0'); // (React's default priority: a scheduler task)
    await until(() => viaState.lastFrame() === 'at 1', 'the useState frame, once the loop turned');
  });

  it('keeps its value across renders and skips an update to the same value', async () => {
    let renders = 0;
    function Same() {
      const [n, setN] = useKeyState(5);
      renders++;
      useInput((input) => setN(input === 'j' ? (i) => i + 1 : 5));
      return <Text>n {n}</Text>;
    }
    const app = render(<Same />);
    const before = renders;
    app.stdin.write('x'); // (set to 5: what it is)
    await microtasksOnly();
    expect(renders).toBe(before);
    app.stdin.write('j');
    await microtasksOnly();
    expect(app.lastFrame()).toBe('n 6');
  });
});
