/**
 * JSON values as Spanner stores them, without a trip through JavaScript numbers: object keys sorted, no
 * whitespace, strings re-escaped, and numbers kept exactly — GoogleSQL keeps an integer within INT64 / UINT64 as
 * written and any other number as the nearest double, and the first of duplicate keys; PostgreSQL JSONB keeps
 * every number as NUMERIC (its text, exponents resolved) and the last of duplicate keys. `JSON.parse` would
 * round 12345678901234567890.
 */
import { Code, SpannerError } from './hooks';

type Node =
  | { t: 'number'; text: string }
  | { t: 'string'; value: string }
  | { t: 'literal'; text: 'true' | 'false' | 'null' }
  | { t: 'array'; items: Node[] }
  | { t: 'object'; entries: Array<[string, Node]> };

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const MAX_DEPTH = 100;

function bad(text: string): never {
  throw new SpannerError(
    Code.INVALID_ARGUMENT,
    `Invalid JSON value: ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`,
  );
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  ws(): void {
    while (this.i < this.s.length && ' \t\n\r'.includes(this.s[this.i] as string)) this.i++;
  }

  value(depth: number): Node {
    if (depth > MAX_DEPTH) bad(this.s);
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return { t: 'string', value: this.string() };
    for (const text of ['true', 'false', 'null'] as const)
      if (this.s.startsWith(text, this.i)) {
        this.i += text.length;
        return { t: 'literal', text };
      }
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) return bad(this.s);
    this.i += m[0].length;
    return { t: 'number', text: m[0] };
  }

  string(): string {
    const start = this.i;
    this.i++;
    while (this.i < this.s.length && this.s[this.i] !== '"') this.i += this.s[this.i] === '\\' ? 2 : 1;
    if (this.i >= this.s.length) bad(this.s);
    this.i++;
    try {
      return JSON.parse(this.s.slice(start, this.i)) as string;
    } catch {
      return bad(this.s);
    }
  }

  array(depth: number): Node {
    this.i++;
    const items: Node[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return { t: 'array', items };
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return { t: 'array', items };
      if (c !== ',') bad(this.s);
    }
  }

  object(depth: number): Node {
    this.i++;
    const entries: Array<[string, Node]> = [];
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return { t: 'object', entries };
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') bad(this.s);
      const key = this.string();
      this.ws();
      if (this.s[this.i++] !== ':') bad(this.s);
      entries.push([key, this.value(depth + 1)]);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return { t: 'object', entries };
      if (c !== ',') bad(this.s);
    }
  }
}

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/** A number's text as PostgreSQL NUMERIC prints it: exponents resolved, the written scale kept. */
function plainDecimal(text: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m || m[4] === undefined) return text;
  const [, sign, int, frac = '', e] = m;
  const exp = Number(e);
  const digits = `${int}${frac}`;
  const scale = Math.max(0, frac.length - exp);
  const shifted = exp - frac.length >= 0 ? `${digits}${'0'.repeat(exp - frac.length)}` : digits;
  const padded = shifted.padStart(scale + 1, '0');
  const whole = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, '');
  const fraction = scale > 0 ? padded.slice(padded.length - scale) : '';
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

function numberText(text: string, pg: boolean): string {
  if (pg) return plainDecimal(text);
  if (/^-?\d+$/.test(text)) {
    const n = BigInt(text);
    if (n >= INT64_MIN && n <= UINT64_MAX) return n.toString();
  }
  const d = Number(text);
  if (!Number.isFinite(d)) bad(text);
  return String(d);
}

function render(node: Node, pg: boolean): string {
  switch (node.t) {
    case 'number':
      return numberText(node.text, pg);
    case 'string':
      return JSON.stringify(node.value);
    case 'literal':
      return node.text;
    case 'array':
      return `[${node.items.map((n) => render(n, pg)).join(',')}]`;
    case 'object': {
      // Duplicate keys: GoogleSQL keeps the first value, PostgreSQL JSONB the last.
      const seen = new Map<string, Node>();
      for (const [k, v] of node.entries) if (pg || !seen.has(k)) seen.set(k, v);
      const keys = [...seen.keys()].sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${render(seen.get(k) as Node, pg)}`).join(',')}}`;
    }
  }
}

/** The stored text of a JSON value given as text. */
export function canonicalJsonText(text: string, pg: boolean): string {
  const p = new Parser(text);
  const node = p.value(0);
  p.ws();
  if (p.i !== text.length) bad(text);
  return render(node, pg);
}
