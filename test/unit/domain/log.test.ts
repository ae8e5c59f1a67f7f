import { SluiceError } from '../../../shared/domain/errors';
import { createLogger, formatLogLine } from '../../../shared/domain/log';

function capture() {
  const lines: string[] = [];
  return { lines, sink: (l: string) => lines.push(l), parsed: () => lines.map((l) => JSON.parse(l)) };
}

describe('log', () => {
  it('writes one JSON object per line with severity, message and the operator ids as labels', () => {
    const out = capture();
    const log = createLogger(out.sink, { pipeline: 'orders' }).child({
      partition: 'abc',
      window: 'abc@1',
      task: 't1',
      attempt: 2,
      maxAttempts: 100,
    });
    log.info('window done', { records: 12, position: 5n });
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).not.toContain('\n');
    expect(out.parsed()[0]).toEqual({
      severity: 'INFO',
      message: 'window done',
      records: 12,
      position: '5',
      'logging.googleapis.com/labels': {
        pipeline: 'orders',
        partition: 'abc',
        window: 'abc@1',
        task: 't1',
        attempt: '2 of 100',
      },
    });
  });

  it('filters by minimum severity and maps every level', () => {
    const out = capture();
    const log = createLogger(out.sink, {}, 'DEBUG');
    log.debug('d');
    log.notice('n');
    log.warn('w');
    expect(out.parsed().map((l) => l.severity)).toEqual(['DEBUG', 'NOTICE', 'WARNING']);
    const quiet = capture();
    createLogger(quiet.sink).debug('hidden');
    expect(quiet.lines).toEqual([]);
  });

  it('reports errors with their kind and stack for Error Reporting', () => {
    const out = capture();
    createLogger(out.sink, { attempt: 1, maxAttempts: -1, trace: 'projects/p/traces/t' }).error(
      'write failed',
      new SluiceError('conflict', 'lost race'),
    );
    const [line] = out.parsed();
    expect(line.severity).toBe('ERROR');
    expect(line.error).toEqual({ kind: 'conflict', message: 'lost race' });
    expect(line.stack_trace).toContain('lost race');
    expect(line['@type']).toContain('ReportedErrorEvent');
    expect(line['logging.googleapis.com/labels']).toEqual({ attempt: '1' });
    expect(line['logging.googleapis.com/trace']).toBe('projects/p/traces/t');
    const plain = JSON.parse(formatLogLine('ERROR', 'x', {}, {}, 'text'));
    expect(plain.error).toEqual({ kind: 'retryable', message: 'text' });
    expect(plain.stack_trace).toBeUndefined();
  });

  it('never lets fields override the envelope, and survives circular fields', () => {
    const line = JSON.parse(
      formatLogLine('INFO', 'real', { pipeline: 'p' }, { message: 'fake', severity: 'DEBUG' }),
    );
    expect(line).toMatchObject({ message: 'real', severity: 'INFO' });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const safe = JSON.parse(formatLogLine('WARNING', 'loop', { pipeline: 'p' }, { circular }));
    expect(safe).toEqual({
      severity: 'WARNING',
      message: 'loop',
      'logging.googleapis.com/labels': { pipeline: 'p' },
      unserializable: true,
    });
  });
});
