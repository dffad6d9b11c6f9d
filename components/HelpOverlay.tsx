import { Box, Text, useInput } from 'ink';
import { useState } from 'react';
import { helpLines } from '../src/tui/keymap.js';

/**
 * `?`: every key, generated from the same table as the handlers and the footer, wrapped to
 * the width it has and scrolled (j/k, ↓/↑) where the terminal is too short for all of it.
 * Any other key closes it.
 */
export function HelpOverlay({
  width,
  height,
  onClose,
  active,
}: {
  width: number;
  height: number;
  onClose: () => void;
  active: boolean;
}) {
  const [top, setTop] = useState(0);
  // The border takes two rows and four columns (with the padding); title and foot a row each.
  const lines = helpLines(width - 4);
  const page = Math.max(1, height - 4);
  const maxTop = Math.max(0, lines.length - page);
  const start = Math.min(top, maxTop);
  useInput(
    (input, key) => {
      if (input === 'j' || key.downArrow) setTop(Math.min(maxTop, start + 1));
      else if (input === 'k' || key.upArrow) setTop(Math.max(0, start - 1));
      else if (input === ' ' || key.pageDown) setTop(Math.min(maxTop, start + page));
      else if (input === 'b' || key.pageUp) setTop(Math.max(0, start - page));
      else onClose();
    },
    { isActive: active },
  );
  const end = Math.min(lines.length, start + page);
  return (
    <Box
      flexDirection="column"
      width={width}
      height={height}
      borderStyle="round"
      borderColor="blueBright"
      paddingX={1}
    >
      <Text bold wrap="truncate">
        keys{' '}
        <Text dimColor>
          ({start + 1}-{end} of {lines.length})
        </Text>
      </Text>
      {lines.slice(start, end).map((line, i) => (
        <Text key={start + i} wrap="truncate">
          <Text color="blueBright">{line.key}</Text>
          {line.text}
        </Text>
      ))}
      <Text dimColor wrap="truncate">
        {end < lines.length ? 'j/k scroll · any other key closes' : 'end · any other key closes this help'}
      </Text>
    </Box>
  );
}
