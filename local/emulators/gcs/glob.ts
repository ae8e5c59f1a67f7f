/**
 * `matchGlob` of objects.list: `*` matches within one path segment, `**` across segments (`**\/` also
 * matches no segment at all), `?` one character other than `/`, `[…]` a character class, `{a,b}` one of the
 * alternatives.
 */
import { invalid } from './errors';

function literalChar(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

function classAt(glob: string, i: number): [string, number] {
  const end = glob.indexOf(']', i + 2);
  if (end < 0) throw invalid(`Invalid matchGlob: unclosed [ in ${glob}`);
  const body = glob.slice(i + 1, end);
  const negated = body.startsWith('!') || body.startsWith('^');
  const chars = (negated ? body.slice(1) : body).replace(/[\\\]]/g, (c) => `\\${c}`);
  return [`[${negated ? '^' : ''}${chars}]`, end + 1];
}

/** Compiles a glob into a regular expression matching whole object names. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  let depth = 0;
  for (let i = 0; i < glob.length; ) {
    const c = glob[i] as string;
    if (glob.startsWith('**/', i)) {
      out += '(?:.*/)?';
      i += 3;
    } else if (glob.startsWith('**', i)) {
      out += '.*';
      i += 2;
    } else if (c === '*') {
      out += '[^/]*';
      i++;
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '[') {
      const [cls, next] = classAt(glob, i);
      out += cls;
      i = next;
    } else if (c === '{') {
      out += '(?:';
      depth++;
      i++;
    } else if (c === '}' && depth > 0) {
      out += ')';
      depth--;
      i++;
    } else if (c === ',' && depth > 0) {
      out += '|';
      i++;
    } else {
      out += literalChar(c);
      i++;
    }
  }
  if (depth !== 0) throw invalid(`Invalid matchGlob: unclosed { in ${glob}`);
  return new RegExp(`^${out}$`, 's');
}
