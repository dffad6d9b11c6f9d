// Colour for people, plain text for pipes: ANSI only on a TTY and never under NO_COLOR.

const useColor = () =>
  Boolean(process.stdout.isTTY) && !('NO_COLOR' in process.env && process.env.NO_COLOR !== '');

function wrap(code: string) {
  return (text: string) => (useColor() ? `\x1b[${code}m${text}\x1b[0m` : text);
}

export const bold = wrap('1');
export const dim = wrap('2');
export const red = wrap('31');
export const green = wrap('32');
export const yellow = wrap('33');
export const cyan = wrap('36');

export function colorState(state: string): string {
  if (state === 'completed' || state === 'integrated' || state === 'released') return green(state);
  if (state === 'needs_human' || state === 'skipped_blocked' || state === 'budget_stopped')
    return yellow(state);
  if (state === 'failed' || state === 'rejected' || state === 'cancelled') return red(state);
  if (state === 'pending' || state === 'prepared' || state === 'dropped') return dim(state);
  return cyan(state);
}
