// Which lanes the lane list shows when there are more than rows: a run of consecutive
// lanes that holds the selection, moved only as far as needed to keep it in view (so j/k
// move the marker, not the list, until it reaches an edge).

export interface ListWindow {
  start: number;
  end: number;
  /** More lanes than rows: a row above and below the run says how many are hidden. */
  scrolled: boolean;
}

export function listWindow(count: number, selected: number, rows: number, previousStart: number): ListWindow {
  if (count <= rows) return { start: 0, end: count, scrolled: false };
  const page = Math.max(1, rows - 2);
  let start = Math.min(Math.max(0, previousStart), count - page);
  if (selected < start) start = selected;
  else if (selected >= start + page) start = selected - page + 1;
  start = Math.max(0, Math.min(start, count - page));
  return { start, end: start + page, scrolled: true };
}
