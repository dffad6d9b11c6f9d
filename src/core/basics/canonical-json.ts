import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so equal values give equal bytes. Written
 * straight to text (no sorted copy of the value): the digest of a 500-child plan is part
 * of `plan check`'s start-up time. The same text as JSON.stringify of a key-sorted copy,
 * except that index-like keys ("10", "9") are sorted too, where such a copy would list
 * them first; plan digests never have such keys (test/canonical-json.property.test.ts).
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (Array.isArray(value)) return `[${value.map((v) => write(v) ?? 'null').join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const text = write(record[key]);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) as string | undefined;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
