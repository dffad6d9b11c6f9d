// Fitting a row of parts into a terminal's width: the parts that matter most stay, the
// others go, and what stays keeps its order. The header and the key bar both use it, so a
// narrow terminal shortens them instead of cutting them at the edge.

export interface Part {
  text: string;
  /** Lower is kept longer; 0 is always kept. */
  priority: number;
}

/** The parts that fit in `width` joined by `gap`, dropping the highest priority numbers first. */
export function fitParts<P extends Part>(parts: readonly P[], width: number, gap = 2): P[] {
  const kept = [...parts];
  const length = () => partsWidth(kept, gap);
  while (length() > width) {
    let worst = -1;
    for (let i = 0; i < kept.length; i++)
      if (kept[i]!.priority > 0 && (worst < 0 || kept[i]!.priority >= kept[worst]!.priority)) worst = i;
    if (worst < 0) break;
    kept.splice(worst, 1);
  }
  return kept;
}

/** The width of the parts joined by `gap`. */
export function partsWidth(parts: readonly Part[], gap = 2): number {
  return parts.reduce((n, p) => n + [...p.text].length, 0) + gap * Math.max(0, parts.length - 1);
}

/** `text` cut into lines of at most `width` characters at spaces (a longer word is cut). */
export function wrapText(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if ([...next].length <= width) line = next;
    else {
      if (line !== '') out.push(line);
      line = word;
      while ([...line].length > width) {
        out.push([...line].slice(0, width).join(''));
        line = [...line].slice(width).join('');
      }
    }
  }
  out.push(line);
  return out;
}
