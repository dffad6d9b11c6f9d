import { Box, Text } from 'ink';
import type { TuiSnapshot } from '../src/tui/tui-store.js';
import { formatElapsed, stateColor } from './theme.js';

const BAR_WIDTH = 20;

export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

/** Batch, branch, state, wave, progress (integrated / total) and elapsed time. */
export function Header({ snapshot, now }: { snapshot: TuiSnapshot; now: number }) {
  const s = snapshot;
  return (
    <Box flexDirection="column">
      <Box gap={2}>
        <Text bold>lanes · {s.batchId}</Text>
        <Text dimColor>{s.branch}</Text>
        <Text color={stateColor(s.batchState)}>{s.batchState}</Text>
        <Text>
          wave {s.wave}/{s.waves}
        </Text>
        <Text>
          {progressBar(s.integrated, s.total)} {s.integrated}/{s.total} integrated
        </Text>
        <Text dimColor>{formatElapsed(now - s.startedAt)}</Text>
        {s.paused ? <Text color="yellow">dispatch paused</Text> : null}
      </Box>
    </Box>
  );
}
