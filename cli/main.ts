/**
 * `npx sluice <command>`: the operator's command line, over the operator function's HTTP routes (the
 * backfill function; README, "Operating"). `--url` (or `SLUICE_OPERATOR_URL`) names the function; against a
 * deployment it authenticates with an identity token from Application Default Credentials, against the local
 * stack (`http://127.0.0.1:…`) it calls plainly.
 */
import { checkConfig } from './check-config';
import { type CommandIO, type Invocation, runCommand, UsageProblem } from './commands';
import { OperatorClient, OperatorError } from './operator-client';

/** Usage text. */
export const USAGE = `usage: npx sluice <command> [--url <operator URL>] [--token <identity token>] [--json]
commands:
  status                                   pipeline state, watermark and lag, partitions, errors
  backfill start <table…> [--wait]         [--targets replica,history] [--priority low|medium|high]
                                           [--read-timestamp <RFC 3339>] [--data-boost] [--max-partitions <n>]
  backfill list | show <id> | cancel <id>   show: the job, then each table's state, partitions and rows
  partitions retry [--partition <id>]      retry failed partitions (all, or one)
  dead-letters list [--table <t>] [--all] [--page-token <t>]
                                           what the pipeline set aside: the stream's records and the
                                           writer's mutations (source writer …); pending ones only
                                           unless --all (replayed and discarded too)
  dead-letters replay [<id>…]              re-apply stream letters after the cause is fixed (exit 1 if
                                           any failed); writer letters are not replayable
  dead-letters discard <id…> | --table <t> [--reason <text>]
                                           set aside for good letters later changes superseded: kept,
                                           never replayed, no longer pending (404 unknown id, 409 replayed)
  tables forget <table> [--targets replica,history]
                                           a BigQuery table removed on purpose starts anew (then retry)
  check-config infra/Pulumi.<stack>.yaml   check a stack file as the Pulumi program does (no Pulumi CLI, no URL):
                                           every problem with its key, exit 1; a summary and exit 0 when valid
Every command prints a table or summary for a person; --json prints the function's answer as it is.
The URL defaults to $SLUICE_OPERATOR_URL: the stack output backfillUrl, or the local stack's
functions.backfill. Exit codes: 0 done, 1 the call or the backfill failed, 2 bad command line,
3 status found something wrong (a stopped pipeline, a failed partition, a failing table, pending dead
letters, a stalled lease, retention in danger: each is printed, and summed up in the unhealthy: line).`;

const SWITCHES = new Set(['wait', 'json', 'dataBoost', 'help', 'all']);
const WORDS: Record<string, number> = { status: 1, backfill: 2, partitions: 2, 'dead-letters': 2, tables: 2 };

/** Splits argv into the command words, positional arguments and flags. */
export function parseArgs(argv: string[]): Invocation {
  const flags: Invocation['flags'] = {};
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq > 0 ? arg.slice(2, eq) : arg.slice(2)).replace(/-([a-z])/g, (_, c: string) =>
      c.toUpperCase(),
    );
    if (SWITCHES.has(name)) flags[name] = true;
    else if (eq > 0) flags[name] = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--'))
        throw new UsageProblem(`--${arg.slice(2)} needs a value`);
      flags[name] = next;
      i++;
    }
  }
  const length = WORDS[words[0] ?? ''] ?? 1;
  return { command: words.slice(0, length), positional: words.slice(length), flags };
}

/** Runs the CLI; resolves the exit code. */
export async function main(
  argv: string[],
  env: Record<string, string | undefined>,
  io: CommandIO,
): Promise<number> {
  let inv: Invocation;
  try {
    inv = parseArgs(argv);
    if (inv.flags.help || inv.command.length === 0) {
      io.out(USAGE);
      return inv.flags.help ? 0 : 2;
    }
    if (inv.command[0] === 'check-config') {
      const [file, ...extra] = inv.positional;
      if (!file || extra.length > 0) throw new UsageProblem('check-config <stack file>');
      return checkConfig(file, io.out);
    }
    const url = typeof inv.flags.url === 'string' ? inv.flags.url : env.SLUICE_OPERATOR_URL;
    if (!url) throw new UsageProblem('no operator URL: pass --url <url> or set SLUICE_OPERATOR_URL');
    const token = typeof inv.flags.token === 'string' ? inv.flags.token : undefined;
    return await runCommand(new OperatorClient({ url, ...(token ? { token } : {}) }), inv, io);
  } catch (err) {
    if (err instanceof UsageProblem) {
      io.out(`${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof OperatorError) {
      io.out(`error: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

/** Runs the CLI on this process's arguments and terminal, and exits with its code. */
export function cli(): void {
  const tty = process.stdout.isTTY === true;
  const io: CommandIO = {
    out: (line) => process.stdout.write(`${line}\n`),
    ...(tty ? { progress: (line: string) => process.stdout.write(`\r\x1b[K${line}`) } : {}),
  };
  main(process.argv.slice(2), process.env, io).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
