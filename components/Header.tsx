import { Text } from 'ink';
import { fitParts, partsWidth } from '../src/tui/fit.js';
import type { Part } from '../src/tui/fit.js';
import type { TuiSnapshot } from '../src/tui/tui-store.js';
import { formatElapsed, stateColor } from './theme.js';
import { formatUsage } from '../src/tui/usage-text.js';

const BAR_WIDTH = 20;

export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

interface HeaderPart extends Part {
  color?: string;
  bold?: boolean;
  dim?: boolean;
}

/**
 * Batch, branch, state, wave, progress (integrated / total) and elapsed time, on one row
 * (the layout below counts on a single header row). Where the row does not fit, the
 * branch and the bar go first, then the wave; the batch, its state, the count and the
 * clock stay. The clock stops when the batch ends.
 */
export function Header({ snapshot, now, width }: { snapshot: TuiSnapshot; now: number; width: number }) {
  const s = snapshot;
  const parts: HeaderPart[] = [
    { text: `lanes · ${s.batchId}`, priority: 0, bold: true },
    { text: s.branch, priority: 6, dim: true },
    { text: s.batchState, priority: 0, color: stateColor(s.batchState) },
    ...(s.paused ? [{ text: 'dispatch paused', priority: 1, color: 'yellow' }] : []),
    // A machine that does not answer: its lanes wait (reconnecting) or are parked (lost).
    ...s.machinesAway.map((m) => ({
      text: `${m.name} ${m.state}`,
      priority: 1,
      color: m.state === 'lost' ? 'red' : 'yellow',
    })),
    { text: `wave ${s.wave}/${s.waves}`, priority: 4 },
    // What the lanes' agents reported they spent (absent while none did: a lane says "—").
    ...(s.usage ? [{ text: formatUsage(s.usage), priority: 3 }] : []),
    { text: `${s.integrated}/${s.total} integrated`, priority: 2 },
    { text: formatElapsed((s.endedAt ?? now) - s.startedAt), priority: 1, dim: true },
  ];
  const kept = fitParts(parts, width);
  // The bar goes first of all: it is drawn before the count where everything else fits.
  const bar = `${progressBar(s.integrated, s.total)} `;
  const count = kept.find((p) => p.text.endsWith(' integrated'));
  if (count && kept.length === parts.length && partsWidth(kept) + bar.length <= width)
    count.text = bar + count.text;
  return (
    <Text wrap="truncate-end">
      {kept.map((p, i) => (
        <Text key={i}>
          {i === 0 ? '' : '  '}
          <Text bold={p.bold} dimColor={p.dim} color={p.color}>
            {p.text}
          </Text>
        </Text>
      ))}
    </Text>
  );
}
