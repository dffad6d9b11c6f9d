import { Box, Text } from 'ink';
import { memo, useRef } from 'react';
import { wrapText } from '../src/tui/fit.js';
import { rowColumns, rowParts } from '../src/tui/lane-row.js';
import { listWindow } from '../src/tui/list-window.js';
import type { LaneRow } from '../src/tui/tui-store.js';
import { formatUsage } from '../src/tui/usage-text.js';
import { formatElapsed, stateColor } from './theme.js';

/** The list's width: 44 columns from 96 up, less in a narrower terminal (80 → 28), the pane keeping ≥ 51. */
export function laneListWidth(columns: number): number {
  return Math.max(28, Math.min(44, columns - 52));
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

const NONE: string[] = [];

interface LaneEntryProps {
  row: LaneRow;
  selected: boolean;
  now: number;
  width: number;
  idWidth: number;
  stateWidth: number;
  machineWidth: number;
  reasonLines: string[];
  wayLines: string[];
  spentLine: string | null;
}

/**
 * One lane's entry. The store keeps a lane's row object while nothing in it changed
 * (src/tui/tui-store.ts), so with a hundred lanes a redraw renders only the rows that did.
 */
const LaneEntry = memo(function LaneEntry(props: LaneEntryProps) {
  const { row, selected, now, width, idWidth, stateWidth, machineWidth, reasonLines, wayLines, spentLine } =
    props;
  // (what gives way where the row's words do not all fit: src/tui/lane-row.ts)
  const parts = rowParts(row, { idWidth, stateWidth, machineWidth }, width, elapsed(row, now));
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text color={selected ? 'blueBright' : undefined}>{selected ? '›' : ' '} </Text>
        <Text bold={selected}>{parts.id}</Text>
        <Text color={stateColor(row.state)}>{parts.state}</Text>
        {/* The tag before the numbers: what gives way is in the tail, the tag keeps a word. */}
        {parts.tag ? <Text color={parts.tag.color}>{parts.tag.text}</Text> : null}
        {parts.machine ? <Text color="cyan">{parts.machine}</Text> : null}
        <Text dimColor>{parts.tail}</Text>
      </Text>
      {selected
        ? reasonLines.map((line, k) => (
            <Text key={`r${k}`} color="yellow" wrap="truncate-end">
              {'   '}
              {line}
            </Text>
          ))
        : null}
      {selected
        ? wayLines.map((line, k) => (
            <Text key={`w${k}`} dimColor wrap="truncate-end">
              {'   '}
              {line}
            </Text>
          ))
        : null}
      {selected && spentLine ? (
        <Text dimColor wrap="truncate-end">
          {'   '}
          {spentLine}
        </Text>
      ) : null}
    </Box>
  );
});

/**
 * Every child: state (coloured), health, attempt, QA failures, tokens, elapsed, and the
 * selected lane's spending (tokens, and the agent's cost where it gives one) and reason. More lanes than rows: a window of consecutive lanes that follows the
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
  // The columns, the same in every row: the id column narrows where a row's tokens need it.
  const { idWidth, stateWidth, machineWidth } = rowColumns(rows, width);
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
  // (clipped in height only: every row truncates itself to the width, and a horizontal clip
  // has Ink slice every row of every frame again)
  return (
    <Box flexDirection="column" width={width} height={height} overflowY="hidden">
      {win.scrolled ? (
        <Text dimColor wrap="truncate">
          {win.start > 0 ? `  ↑ ${win.start} more` : ' '}
        </Text>
      ) : null}
      {rows.slice(win.start, win.end).map((row, j) => {
        const isSelected = win.start + j === selected;
        return (
          <LaneEntry
            key={row.taskId}
            row={row}
            selected={isSelected}
            // (a lane whose clock stands still is not drawn again each second)
            now={row.startedAt !== null && row.endedAt === null ? now : 0}
            width={width}
            idWidth={idWidth}
            stateWidth={stateWidth}
            machineWidth={machineWidth}
            reasonLines={isSelected ? reasonLines : NONE}
            wayLines={isSelected ? wayLines : NONE}
            spentLine={isSelected ? spentLine : null}
          />
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
