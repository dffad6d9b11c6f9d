import { Box, Text } from 'ink';
import { useRef } from 'react';
import { wrapText } from '../src/tui/fit.js';
import { listWindow } from '../src/tui/list-window.js';
import type { LaneRow } from '../src/tui/tui-store.js';
import { formatUsage } from '../src/tui/usage-text.js';
import { formatElapsed, stateColor } from './theme.js';

/** The list's width: 44 columns from 96 up, less in a narrower terminal (80 → 28), the pane keeping ≥ 51. */
export function laneListWidth(columns: number): number {
  return Math.max(28, Math.min(44, columns - 52));
}

function healthTag(row: LaneRow): { text: string; color: string } | null {
  if (row.reviewPending) return { text: 'review', color: 'magenta' };
  if (row.health?.waiting) return { text: 'waiting', color: 'magenta' };
  if (row.health?.stalled) return { text: 'stalled', color: 'red' };
  if (row.health?.drift.length) return { text: 'scope drift', color: 'red' };
  return null;
}

function elapsed(row: LaneRow, now: number): string {
  if (row.startedAt === null) return '';
  return formatElapsed((row.endedAt ?? now) - row.startedAt);
}

/** What a parked child's user can do next (the keys; the CLI's are in `lanes status`). */
export function waysOn(reason: string | null): string {
  const fix = reason?.startsWith('lane_conflict:') ? 'resolve the markers in the lane' : 'fix the lane';
  return `${fix}, then r resume or R retry; D drops it`;
}

/**
 * Every child: state (coloured), health, attempt, QA failures, elapsed, and the selected
 * lane's spending (tokens, and the agent's cost where it gives one) and reason. More lanes than rows: a window of consecutive lanes that follows the
 * selection (src/tui/list-window.ts), with how many are above and below it.
 */
export function LaneList({
  rows,
  selected,
  now,
  width,
  height,
}: {
  rows: LaneRow[];
  selected: number;
  now: number;
  width: number;
  height: number;
}) {
  const idWidth = Math.min(14, Math.max(4, ...rows.map((r) => r.taskId.length)));
  // The states' column as wide as the longest state shown, so a narrow list keeps the tag.
  const stateWidth = Math.max(...rows.map((r) => r.state.length), 8) + 1;
  // A batch with machines: each lane's machine, cut to what the row has room for beside the
  // attempt (3 columns at least, 8 at most); the selected lane's line below names it whole.
  const room = width - (2 + idWidth + 1 + stateWidth) - 5;
  const longest = Math.max(0, ...rows.map((r) => r.machine?.length ?? 0));
  const machineWidth = longest === 0 ? 0 : Math.min(8, longest, Math.max(3, room));
  const current = rows[selected];
  // The selected lane's reason and ways on, wrapped to the list (three rows each at most):
  // the keys they name are not cut in a narrow list.
  const wrap = (text: string) => wrapText(text, width - 3).slice(0, 3);
  const reasonLines = current?.reason ? wrap(current.reason) : [];
  const wayLines = current?.state === 'needs_human' ? wrap(waysOn(current.reason)) : [];
  // The selected lane's spending: what its agent reported, or "—" (a command reports none).
  const spentLine = current
    ? `spent ${formatUsage(current.usage)}${current.machine ? ` · on ${current.machine}` : ''}`
    : null;
  const extra = reasonLines.length + wayLines.length + (spentLine ? 1 : 0);
  const top = useRef(0);
  const win = listWindow(rows.length, selected, height - extra, top.current);
  top.current = win.start;
  return (
    <Box flexDirection="column" width={width} height={height} overflow="hidden">
      {win.scrolled ? (
        <Text dimColor wrap="truncate">
          {win.start > 0 ? `  ↑ ${win.start} more` : ' '}
        </Text>
      ) : null}
      {rows.slice(win.start, win.end).map((row, j) => {
        const i = win.start + j;
        const tag = healthTag(row);
        return (
          <Box key={row.taskId} flexDirection="column">
            <Text wrap="truncate">
              <Text color={i === selected ? 'blueBright' : undefined}>{i === selected ? '›' : ' '} </Text>
              <Text bold={i === selected}>{row.taskId.slice(0, idWidth).padEnd(idWidth)} </Text>
              <Text color={stateColor(row.state)}>{row.state.padEnd(stateWidth)}</Text>
              {/* The tag before the numbers: a long row is cut at its end, never the tag. */}
              {tag ? <Text color={tag.color}>{tag.text}</Text> : null}
              {machineWidth > 0 ? (
                <Text color="cyan">
                  {tag ? ' ' : ''}
                  {row.machine
                    ? `@${row.machine.slice(0, machineWidth).padEnd(machineWidth)}`
                    : ' '.repeat(machineWidth + 1)}
                </Text>
              ) : null}
              <Text dimColor>
                {row.attempt ? ` #${row.attempt}` : '   '}
                {row.qaFailures ? ` qa✗${row.qaFailures}` : ''} {elapsed(row, now)}
              </Text>
            </Text>
            {i === selected
              ? reasonLines.map((line, k) => (
                  <Text key={`r${k}`} color="yellow" wrap="truncate-end">
                    {'   '}
                    {line}
                  </Text>
                ))
              : null}
            {i === selected
              ? wayLines.map((line, k) => (
                  <Text key={`w${k}`} dimColor wrap="truncate-end">
                    {'   '}
                    {line}
                  </Text>
                ))
              : null}
            {i === selected && spentLine ? (
              <Text dimColor wrap="truncate-end">
                {'   '}
                {spentLine}
              </Text>
            ) : null}
          </Box>
        );
      })}
      {win.scrolled ? (
        <Text dimColor wrap="truncate">
          {win.end < rows.length ? `  ↓ ${rows.length - win.end} more` : ' '}
        </Text>
      ) : null}
    </Box>
  );
}
