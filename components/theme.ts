import type { BatchState, ChildState } from '../src/tui/tui-store.js';

// Colours of states, the same everywhere in the TUI.

export function stateColor(state: ChildState | BatchState): string {
  switch (state) {
    case 'integrated':
    case 'released':
    case 'completed':
      return 'green';
    case 'needs_human':
    case 'skipped_blocked':
    case 'budget_stopped':
      return 'yellow';
    case 'failed':
    case 'rejected':
    case 'cancelled':
      return 'red';
    case 'pending':
    case 'prepared':
    case 'dropped':
      return 'gray';
    default:
      return 'cyan';
  }
}

export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
