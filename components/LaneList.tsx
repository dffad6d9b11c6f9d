import { Box, Text } from 'ink';
import { memo, useRef } from 'react';
import { wrapText } from '../src/tui/fit.js';
import { listWindow } from '../src/tui/list-window.js';
import type { LaneRow } from '../src/tui/tui-store.js';
import { formatTokens, formatUsage, tokensOf } from '../src/tui/usage-text.js';
import { formatElapsed, stateColor } from './theme.js';

/** The list's width: 44 columns from 96 up, less in a narrower terminal (80 → 28), the pane keeping ≥ 51. */
export function laneListWidth(columns: number): number {
  return Math.max(28, Math.min(44, columns - 52));
}

function healthTag(row: LaneRow): { text: string; short: string; color: string } | null {
  if (row.reviewPending) return { text: 'review', short: 'review', color: 'magenta' };
  if (row.health?.waiting) return { text: 'waiting', short: 'wait', color: 'magenta' };
  if (row.health?.stalled) return { text: 'stalled', short: 'stall', color: 'red' };
  if (row.health?.drift.length) return { text: 'scope drift', short: 'drift', color: 'red' };
  return null;
}

/** The tag in a row of `room` columns: its short word where the whole one leaves no room for the tokens. */
function fitTag(tag: ReturnType<typeof healthTag>, row: LaneRow, room: number): string {
  if (!tag) return '';
  const tokens = row.usage ? ` ${formatTokens(tokensOf(row.usage))}` : '';
  const least = `${row.qaFailures ? ` qa✗${row.qaFailures}` : ''}${tokens}`;
  return !tokens || tag.text.length + least.length <= room ? tag.text : tag.short;
}

function elapsed(row: LaneRow, now: number): string {
  if (row.startedAt === null) return '';
  return formatElapsed((row.endedAt ?? now) - row.startedAt);
}

/**
 * The dim end of a lane's row in `room` columns: attempt, QA failures, the tokens its agent
 * reported (none for a command) and the time. Where all do not fit, the tokens lose their
 * word first, the time goes next, then the attempt: what a lane spends outranks how long
 * it took.
 */
export function rowTail(row: LaneRow, now: number, room: number): string {
  const qa = row.qaFailures ? ` qa✗${row.qaFailures}` : '';
  const head = `${row.attempt ? ` #${row.attempt}` : '   '}${qa}`;
  const time = ` ${elapsed(row, now)}`;
  if (!row.usage) return head + time;
  const tokens = formatTokens(tokensOf(row.usage));
  const tries = [`${head} ${tokens} tok${time}`, `${head} ${tokens}${time}`, `${head} ${tokens}`];
  return tries.find((t) => [...t].length <= room) ?? `${qa} ${tokens}`;
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
  const tag = healthTag(row);
  const room = width - 3 - idWidth - stateWidth;
  // (the machine's column, and the space between it and a tag, before the tail)
  const machineCols = machineWidth > 0 ? machineWidth + 1 + (tag ? 1 : 0) : 0;
  const tagText = fitTag(tag, row, room - machineCols);
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text color={selected ? 'blueBright' : undefined}>{selected ? '›' : ' '} </Text>
        <Text bold={selected}>{row.taskId.slice(0, idWidth).padEnd(idWidth)} </Text>
        <Text color={stateColor(row.state)}>{row.state.padEnd(stateWidth)}</Text>
        {/* The tag before the numbers: a long row is cut at its end, never the tag. */}
        {tag ? <Text color={tag.color}>{tagText}</Text> : null}
        {machineWidth > 0 ? (
          <Text color="cyan">
            {tag ? ' ' : ''}
            {row.machine
              ? `@${row.machine.slice(0, machineWidth).padEnd(machineWidth)}`
              : ' '.repeat(machineWidth + 1)}
          </Text>
        ) : null}
        <Text dimColor>{rowTail(row, now, room - tagText.length - machineCols)}</Text>
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
  const idWidth = Math.min(14, Math.max(4, ...rows.map((r) => r.taskId.length)));
  // The states' column as wide as the longest state shown, so a narrow list keeps the tag.
  const stateWidth = Math.max(...rows.map((r) => r.state.length), 8) + 1;
  // A batch with machines: each lane's machine, cut to what the row has room for beside the
  // attempt (3 columns at least, 8 at most); the selected lane's line below names it whole.
  const machineRoom = width - (2 + idWidth + 1 + stateWidth) - 5;
  const longest = Math.max(0, ...rows.map((r) => r.machine?.length ?? 0));
  const machineWidth = longest === 0 ? 0 : Math.min(8, longest, Math.max(3, machineRoom));
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
