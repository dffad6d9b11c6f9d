import { Box, Text, useInput } from 'ink';
import { useState } from 'react';

// A scrollable text view for the diff (`d`) and the QA log (`l`). Lines carry their own
// colour: a diff is coloured by its line kinds.

export interface ViewerLine {
  text: string;
  color?: string;
}

export function diffLines(text: string): ViewerLine[] {
  return text.split('\n').map((line) => {
    if (line.startsWith('+++') || line.startsWith('---')) return { text: line, color: 'white' };
    if (line.startsWith('+')) return { text: line, color: 'green' };
    if (line.startsWith('-')) return { text: line, color: 'red' };
    if (line.startsWith('@@')) return { text: line, color: 'cyan' };
    if (line.startsWith('diff ') || line.startsWith('index ')) return { text: line, color: 'yellow' };
    return { text: line };
  });
}

export interface TextViewerProps {
  title: string;
  lines: ViewerLine[];
  height: number;
  onClose: () => void;
  active: boolean;
}

export function TextViewer({ title, lines, height, onClose, active }: TextViewerProps) {
  const [top, setTop] = useState(0);
  const page = Math.max(1, height - 3);
  const maxTop = Math.max(0, lines.length - page);
  useInput(
    (input, key) => {
      if (input === 'q' || key.escape) onClose();
      else if (input === 'j' || key.downArrow) setTop((t) => Math.min(maxTop, t + 1));
      else if (input === 'k' || key.upArrow) setTop((t) => Math.max(0, t - 1));
      else if (input === ' ' || key.pageDown) setTop((t) => Math.min(maxTop, t + page));
      else if (input === 'b' || key.pageUp) setTop((t) => Math.max(0, t - page));
      else if (input === 'g') setTop(0);
      else if (input === 'G') setTop(maxTop);
    },
    { isActive: active },
  );
  return (
    <Box flexDirection="column" height={height} borderStyle="round" borderColor="blueBright">
      <Text bold wrap="truncate">
        {title}{' '}
        <Text dimColor>
          ({Math.min(lines.length, top + 1)}-{Math.min(lines.length, top + page)} of {lines.length}) j/k
          space/b q
        </Text>
      </Text>
      {lines.slice(top, top + page).map((line, i) => (
        <Text key={top + i} color={line.color} wrap="truncate">
          {line.text === '' ? ' ' : line.text}
        </Text>
      ))}
    </Box>
  );
}
