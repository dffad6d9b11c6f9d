import { Box } from 'ink';
import type { LaneSession } from '../src/hosts/host.js';
import { PaneView } from './PaneView.js';

/** The focused lane's terminal, or a grid of up to four. Only these panes are rendered. */
export function PaneArea({
  tasks,
  selected,
  sessionOf,
  width,
  height,
  attached,
}: {
  tasks: string[];
  selected: string | null;
  sessionOf: (task: string) => LaneSession | null;
  width: number;
  height: number;
  attached: boolean;
}) {
  if (tasks.length <= 1) {
    const task = tasks[0] ?? selected;
    return (
      <PaneView
        title={task ?? 'no lane'}
        session={task ? sessionOf(task) : null}
        width={width}
        height={height}
        focused
        attached={attached}
      />
    );
  }
  const columns = 2;
  const rowsOfPanes = Math.ceil(tasks.length / columns);
  const cellWidth = Math.floor(width / columns);
  const cellHeight = Math.floor(height / rowsOfPanes);
  return (
    <Box flexDirection="column">
      {Array.from({ length: rowsOfPanes }, (_, r) => (
        <Box key={r}>
          {tasks.slice(r * columns, r * columns + columns).map((task) => (
            <PaneView
              key={task}
              title={task}
              session={sessionOf(task)}
              width={cellWidth}
              height={cellHeight}
              focused={task === selected}
              attached={attached && task === selected}
            />
          ))}
        </Box>
      ))}
    </Box>
  );
}
