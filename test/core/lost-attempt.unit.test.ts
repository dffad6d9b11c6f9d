import { describe, expect, it } from 'vitest';
import { diedOfSignal } from '../../src/core/rules/lost-attempt.js';

describe('an exit found after a restart', () => {
  it('is lost when a signal ended it (sh records 128+n)', () => {
    expect(diedOfSignal({ code: 137, signal: null })).toBe(true); // KILL
    expect(diedOfSignal({ code: 129, signal: null })).toBe(true); // HUP
    expect(diedOfSignal({ code: null, signal: 'SIGTERM' })).toBe(true);
  });
  it('is an exit of the work otherwise (QA runs on it)', () => {
    expect(diedOfSignal({ code: 0, signal: null })).toBe(false);
    expect(diedOfSignal({ code: 1, signal: null })).toBe(false);
    expect(diedOfSignal({ code: 128, signal: null })).toBe(false);
    expect(diedOfSignal({ code: 255, signal: null })).toBe(false);
  });
});
