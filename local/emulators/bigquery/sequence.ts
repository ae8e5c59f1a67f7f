/**
 * `_CHANGE_SEQUENCE_NUMBER` as BigQuery documents it: up to four `/`-separated sections of 1–16 hex digits,
 * compared section by section as unsigned numbers.
 */

const FORMAT = /^[0-9A-Fa-f]{1,16}(\/[0-9A-Fa-f]{1,16}){0,3}$/;

/** A parsed sequence number: one unsigned value per section. */
export type SequenceNumber = readonly bigint[];

/** Parses a sequence number; undefined when the text does not follow the documented format. */
export function parseSequenceNumber(text: string): SequenceNumber | undefined {
  if (!FORMAT.test(text)) return undefined;
  return text.split('/').map((s) => BigInt(`0x${s}`));
}

/**
 * Compares two sequence numbers: the first differing section decides. When one is a prefix of the other the
 * documentation is silent; the emulator treats missing sections as 0, so `ABC` equals `ABC/0` and the tie goes
 * to the later ingestion.
 */
export function compareSequenceNumbers(a: SequenceNumber, b: SequenceNumber): -1 | 0 | 1 {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] ?? 0n;
    const y = b[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
