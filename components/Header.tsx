import { Text } from 'ink';
import type { TuiSnapshot } from '../src/tui/tui-store.js';
import { formatElapsed, stateColor } from './theme.js';

const BAR_WIDTH = 20;

export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

/**
 * Batch, branch, state, wave, progress (integrated / total) and elapsed time, on one row
 * that is cut at the terminal's edge (the layout below counts on a single header row).
 */
export function Header({ snapshot, now }: { snapshot: TuiSnapshot; now: number }) {
  const s = snapshot;
  const gap = '  ';
  return (
    <Text wrap="truncate-end">
      <Text bold>lanes · {s.batchId}</Text>
      {gap}
      <Text dimColor>{s.branch}</Text>
      {gap}
      <Text color={stateColor(s.batchState)}>{s.batchState}</Text>
      {s.paused ? (
        <>
          {gap}
          <Text color="yellow">dispatch paused</Text>
        </>
      ) : null}
      {gap}
      wave {s.wave}/{s.waves}
      {gap}
      {progressBar(s.integrated, s.total)} {s.integrated}/{s.total} integrated{gap}
      <Text dimColor>{formatElapsed(now - s.startedAt)}</Text>
    </Text>
  );
}
