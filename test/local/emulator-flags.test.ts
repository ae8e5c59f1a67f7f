/**
 * `npm run emulator -- <name>` reads its flags strictly: a typo, a word where a number goes, a flag without its
 * value or a value after a switch is refused with the flag named, before anything listens. Before, `--port
 * abc` and `--prot 9010` started the emulator on a port nobody asked for, and `--dialect postgres` created a
 * GoogleSQL database, all without a word.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  assertKnownFlags,
  choiceFlag,
  type EmulatorCli,
  flagName,
  givenFlags,
  intFlag,
  listFlag,
  parseFlags,
  stringFlag,
  switchFlag,
} from '../../local/emulators/cli';

const CLI = join(__dirname, '..', '..', 'local', 'emulators', 'cli.ts');

describe('flag readers', () => {
  it('name the flag as typed', () => {
    expect(flagName('minWriteIntervalMs')).toBe('--min-write-interval-ms');
    expect(flagName('port')).toBe('--port');
  });

  it('read whole numbers and refuse anything else, naming the flag', () => {
    const o = parseFlags(['--port', '9010', '--admin-port', 'abc', '--churn-ms', '-5', '--big', '1e3']);
    expect(intFlag(o, 'port', 0)).toBe(9010);
    expect(intFlag(o, 'absent', 7)).toBe(7);
    expect(() => intFlag(o, 'adminPort', 0)).toThrow('--admin-port takes a whole number, got "abc"');
    expect(() => intFlag(o, 'big', 0)).toThrow('--big takes a whole number, got "1e3"');
    expect(() => intFlag({ n: '99999999999999999999' }, 'n', 0)).toThrow('--n takes a whole number');
    // `--churn-ms -5`: "-5" starts with a dash but not "--", so it is the value, and refused.
    expect(() => intFlag(o, 'churnMs', 0)).toThrow('--churn-ms takes a whole number, got "-5"');
  });

  it('refuse a value flag given alone and a switch given a value', () => {
    const o = parseFlags(['--data-dir', '--no-change-streams', 'yes']);
    expect(() => stringFlag(o, 'dataDir')).toThrow('--data-dir needs a value');
    expect(() => givenFlags(o, 'dataDir')).toThrow('--data-dir needs a value');
    expect(() => switchFlag(o, 'noChangeStreams')).toThrow('--no-change-streams takes no value, got "yes"');
    expect(switchFlag(parseFlags(['--no-change-streams']), 'noChangeStreams')).toBe(true);
    expect(switchFlag({}, 'noChangeStreams')).toBe(false);
  });

  it('give only the flags present, lists split on commas, choices in any case', () => {
    const o = parseFlags(['--data-dir', 'd', '--queue', 'a,b', '--dialect', 'PostgreSQL']);
    expect(givenFlags(o, 'dataDir', 'appEngineUrl')).toEqual({ dataDir: 'd' });
    expect(listFlag(o, 'queue')).toEqual(['a', 'b']);
    expect(listFlag(o, 'bucket')).toEqual([]);
    expect(choiceFlag(o, 'dialect', ['googlesql', 'postgresql'], 'googlesql')).toBe('postgresql');
    expect(choiceFlag({}, 'dialect', ['googlesql', 'postgresql'], 'googlesql')).toBe('googlesql');
    expect(() =>
      choiceFlag({ dialect: 'postgres' }, 'dialect', ['googlesql', 'postgresql'], 'googlesql'),
    ).toThrow('--dialect takes one of googlesql, postgresql, got "postgres"');
  });

  it('refuse a flag the usage does not name, listing those it does', () => {
    const cli: EmulatorCli = {
      usage: 'usage: npm run emulator -- x [--port 1] [--data-dir dir]',
      portFlags: {},
      start: () => Promise.reject(new Error('not started in this test')),
    };
    expect(() => assertKnownFlags('x', cli, parseFlags(['--port', '1', '--data-dir', 'd']))).not.toThrow();
    expect(() => assertKnownFlags('x', cli, parseFlags(['--prot', '1']))).toThrow(
      'the x emulator takes no --prot; it takes --port, --data-dir',
    );
  });
});

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [require.resolve('tsx/cli'), CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, METADATA_SERVER_DETECTION: 'none' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('npm run emulator -- <name> with a bad flag', () => {
  it.each([
    [['gcs', '--prot', '9199'], 'the gcs emulator takes no --prot; it takes --port, --admin-port'],
    [['tasks', '--port', '81x3'], '--port takes a whole number, got "81x3"'],
    [['bigquery', '--rest-port', 'http'], '--rest-port takes a whole number, got "http"'],
    [['lineage', '--data-dir'], '--data-dir needs a value'],
    [
      ['spanner', '--database', 'projects/p/instances/i/databases/d', '--dialect', 'postgres'],
      '--dialect takes one of googlesql, google_standard_sql, postgresql, got "postgres"',
    ],
    [['spanner', '--dialect', 'postgresql'], '--dialect is the dialect of the --database it creates'],
    [['all', '--ports-from'], '--ports-from needs a value'],
    [['all', '--ports-from', 'next'], '--ports-from takes a whole number, got "next"'],
  ])(
    '%j exits 2 naming the flag, and nothing starts',
    async (args, message) => {
      const r = await run(args);
      expect(r.out).toContain(message);
      expect(r.out).not.toContain('ready');
      expect(r.code).toBe(2);
    },
    30_000,
  );
});
