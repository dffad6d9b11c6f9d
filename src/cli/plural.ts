// "1 child in 1 wave", "8 children in 4 waves": a number and its noun, agreeing.

export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
