import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import {
  address,
  bool,
  CommandLine,
  duration,
  formatDuration,
  list,
  listenPort,
  nonNegativeInt,
  oneOf,
  port,
  positiveInt,
  subcommand,
} from '../../cli/flags.ts';
import { run } from '../../cli/main.ts';
import { UsageError } from '../../cli/usage.ts';

const FORM = 'must be a duration such as 90s, 10m or 1h30m (units ns, us, ms, s, m, h)';

/** What Go 1.x's time.ParseDuration returns for each text: nanoseconds, or its error. */
const GO_PARSE_DURATION: Array<[string, bigint | string]> = [
  ['0', 0n],
  ['+0', 0n],
  ['-0', 0n],
  ['0s', 0n],
  ['0ms', 0n],
  ['90s', 90000000000n],
  ['10m', 600000000000n],
  ['1h', 3600000000000n],
  ['1h30m', 5400000000000n],
  ['1.5h', 5400000000000n],
  ['0.5m', 30000000000n],
  ['500ms', 500000000n],
  ['2h45m30.5s', 9930500000000n],
  ['1h1m1s1ms1us1ns', 3661001001001n],
  ['300us', 300000n],
  ['300µs', 300000n],
  ['1μs', 1000n],
  ['1500ns', 1500n],
  ['.5s', 500000000n],
  ['5.s', 5000000000n],
  ['1.0000000001s', 1000000000n],
  ['0.333333333333s', 333333333n],
  ['-5s', -5000000000n],
  ['+5s', 5000000000n],
  ['2160h', 7776000000000000n],
  ['9223372036854775807ns', 9223372036854775807n],
  ['-9223372036854775808ns', -9223372036854775808n],
  ['2562047h', 9223369200000000000n],
  ['5', 'time: missing unit in duration "5"'],
  ['1.5', 'time: missing unit in duration "1.5"'],
  ['1m5', 'time: missing unit in duration "1m5"'],
  ['1.5.5s', 'time: missing unit in duration "1.5.5s"'],
  ['90d', 'time: unknown unit "d" in duration "90d"'],
  ['1w', 'time: unknown unit "w" in duration "1w"'],
  ['1 h', 'time: unknown unit " h" in duration "1 h"'],
  ['1h ', 'time: unknown unit "h " in duration "1h "'],
  ['1hm', 'time: unknown unit "hm" in duration "1hm"'],
  ['1e3s', 'time: unknown unit "e" in duration "1e3s"'],
  ['1,5s', 'time: unknown unit "," in duration "1,5s"'],
  ['', 'time: invalid duration ""'],
  ['.', 'time: invalid duration "."'],
  ['.s', 'time: invalid duration ".s"'],
  ['s', 'time: invalid duration "s"'],
  [' 1h', 'time: invalid duration " 1h"'],
  ['-', 'time: invalid duration "-"'],
  ['soon', 'time: invalid duration "soon"'],
  ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
  ['2562048h', 'time: invalid duration "2562048h"'],
];

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(UsageError);
    return (error as Error).message;
  }
  return expect.fail('no UsageError');
}

describe('cli/flags: durations as Go reads them', () => {
  it('accepts what time.ParseDuration accepts, with its value, in milliseconds', () => {
    for (const [text, go] of GO_PARSE_DURATION) {
      if (typeof go !== 'bigint') continue;
      expect(duration('--d', text, { min: Number.NEGATIVE_INFINITY }), JSON.stringify(text)).to.equal(Number(go) / 1e6);
    }
  });

  it('refuses what time.ParseDuration refuses, naming the flag and what Go finds wrong', () => {
    for (const [text, go] of GO_PARSE_DURATION) {
      if (typeof go === 'bigint') continue;
      const message = usageError(() => duration('--d', text));
      expect(message, JSON.stringify(text)).to.match(new RegExp(`^--d ${FORM.replace(/[()]/g, '\\$&')}: `));
      const unit = /unknown unit (".*") in/.exec(go)?.[1];
      if (go.includes('missing unit')) {
        expect(message).to.have.string(`${JSON.stringify(text)} has a number without a unit`);
      } else if (unit !== undefined) {
        expect(message).to.have.string(`unknown unit ${unit} in ${JSON.stringify(text)}`);
      } else if (/^\d+(ns|h)$/.test(text)) {
        expect(message).to.have.string(`${JSON.stringify(text)} is longer than 2562047h`);
      } else {
        expect(message).to.have.string(`: got ${JSON.stringify(text)}`);
      }
    }
  });

  it('a bare number is refused as Go refuses it, and so is a day', () => {
    expect(usageError(() => duration('--resync-period', '30'))).to.equal(
      `--resync-period ${FORM}: "30" has a number without a unit`,
    );
    expect(usageError(() => duration('--ca-overlap', '90d'))).to.equal(
      `--ca-overlap ${FORM}: unknown unit "d" in "90d"`,
    );
  });

  it('a flag sets its shortest: 0 unless it says otherwise, never negative', () => {
    expect(duration('--x', '0')).to.equal(0);
    expect(usageError(() => duration('--x', '-1s'))).to.equal('--x must be at least 0s, got "-1s"');
    expect(usageError(() => duration('--check-interval', '999ms', { min: 1000 }))).to.equal(
      '--check-interval must be at least 1s, got "999ms"',
    );
    expect(duration('--check-interval', '1s', { min: 1000 })).to.equal(1000);
    expect(usageError(() => duration('--review-deadline', '0s', { positive: true }))).to.equal(
      '--review-deadline must be longer than 0s',
    );
    expect(duration('--review-deadline', '1ns', { positive: true })).to.equal(0.000001);
  });

  it('formats milliseconds as a Go duration that reads back', () => {
    for (const ms of [0, 1, 500, 1000, 2000, 90_000, 600_000, 5_400_000, 3_601_500, 7_776_000_000]) {
      expect(duration('--x', formatDuration(ms)), String(ms)).to.equal(ms);
    }
    expect([0, 500, 5000, 600_000, 5_400_000].map(formatDuration)).to.deep.equal(['0s', '500ms', '5s', '10m', '1h30m']);
  });
});

describe('cli/flags: numbers, ports, addresses, lists, choices', () => {
  it('whole numbers are decimal digits only: no blank, sign, exponent or hex', () => {
    expect(positiveInt('--n', '1')).to.equal(1);
    expect(nonNegativeInt('--n', '0')).to.equal(0);
    expect(positiveInt('--n', '64', 64)).to.equal(64);
    for (const bad of ['', ' ', ' 1', '1 ', '+1', '-1', '1e3', '0x10', '1.0', 'many']) {
      expect(
        usageError(() => nonNegativeInt('--n', bad)),
        bad,
      ).to.equal(`--n must be a whole number of at least 0, got ${JSON.stringify(bad)}`);
    }
  });

  it('one rule for 0: a positive count refuses it, a non-negative one takes it', () => {
    expect(usageError(() => positiveInt('--workers', '0'))).to.equal(
      '--workers must be a whole number of at least 1, got "0"',
    );
    expect(nonNegativeInt('--kube-api-qps', '0')).to.equal(0);
    expect(usageError(() => positiveInt('--review-workers', '65', 64))).to.equal(
      '--review-workers must be a whole number from 1 to 64, got "65"',
    );
  });

  it('a port to listen on may be 0 (any free port); a port to reach may not', () => {
    expect(listenPort('--port', '0')).to.equal(0);
    expect(listenPort('--port', '65535')).to.equal(65535);
    expect(usageError(() => listenPort('--port', '65536'))).to.equal(
      '--port must be a whole number from 0 to 65535, got "65536"',
    );
    expect(port('--site-port', '8080')).to.equal(8080);
    expect(usageError(() => port('--site-port', '0'))).to.equal(
      '--site-port must be a whole number from 1 to 65535, got "0"',
    );
  });

  it('addresses are HOST:PORT, :PORT, [IPv6]:PORT or 0', () => {
    expect(address('--a', '127.0.0.1:8080')).to.deep.equal({ host: '127.0.0.1', port: 8080 });
    expect(address('--a', ':9090')).to.deep.equal({ port: 9090 });
    expect(address('--a', '[::1]:1')).to.deep.equal({ host: '::1', port: 1 });
    expect(address('--a', '0')).to.equal('off');
    expect(usageError(() => address('--a', '8080'))).to.equal(
      '--a must be HOST:PORT (":8080", "127.0.0.1:8080", "[::1]:8080") or 0, not "8080"',
    );
  });

  it('lists drop blanks and empty items; choices name the flag and the words', () => {
    expect(list(' a, b,,c ,')).to.deep.equal(['a', 'b', 'c']);
    expect(list('')).to.deep.equal([]);
    expect(oneOf('-o', 'json', ['text', 'json'])).to.equal('json');
    expect(usageError(() => oneOf('-o', 'yaml', ['text', 'json']))).to.equal(
      '-o must be one of text, json, got "yaml"',
    );
    expect(bool('--metrics-secure', 'false')).to.equal(false);
    expect(usageError(() => bool('--metrics-secure', 'yes'))).to.equal(
      '--metrics-secure must be true or false, got "yes"',
    );
  });

  it('a subcommand is one of its names', () => {
    expect(subcommand(['bootstrap', '--x'], ['bootstrap'])).to.deep.equal(['bootstrap', ['--x']]);
    expect(usageError(() => subcommand(['frob'], ['bootstrap']))).to.equal('unknown subcommand "frob"');
    expect(usageError(() => subcommand([], ['bootstrap']))).to.equal('missing subcommand "bootstrap"');
  });
});

describe('cli/flags: one declaration for parsing and help', () => {
  const line = new CommandLine(
    'thing',
    {
      name: { type: 'string', value: 'NAME', required: true, help: 'what it is called' },
      tag: { type: 'string', multiple: true, default: [], value: 'T', help: 'a tag; repeatable' },
      period: { type: 'string', default: '10m', help: 'how often' },
      quiet: { type: 'boolean', default: false, help: 'say nothing' },
      output: { type: 'string', short: 'o', default: 'text', value: 'text|json', help: 'the format' },
      knob: { type: 'string', default: '3', help: 'rarely set', detail: true },
    },
    'PATH...',
  );

  it('the synopsis shows every flag but the detail ones, required ones bare, repeatable ones with ...', () => {
    expect(line.synopsis()).to.equal(
      'staticsite thing --name NAME [--tag T]... [--period 10m] [--quiet] [-o text|json] PATH...',
    );
  });

  it('the help lists every flag with its help and default', () => {
    expect(line.help().split('\n')).to.deep.equal([
      '  --name NAME             what it is called',
      '  --tag T                 a tag; repeatable',
      '  --period 10m            how often (default 10m)',
      '  --quiet                 say nothing',
      '  -o, --output text|json  the format (default text)',
      '  --knob 3                rarely set (default 3)',
    ]);
  });

  it('parses what it declares, defaults included, and refuses what it does not', () => {
    expect(line.parse(['--name', 'n', '-o', 'json', 'a', 'b'])).to.deep.equal({
      values: { name: 'n', output: 'json', tag: [], period: '10m', quiet: false, knob: '3' },
      positionals: ['a', 'b'],
    });
    expect(usageError(() => line.parse(['x']))).to.equal('--name is required (what it is called)');
    expect(() => line.parse(['--name', 'n', '--nope'])).to.throw("Unknown option '--nope'");
  });
});

describe('cli: the README shows each command as its --help does', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const reference = readme.slice(readme.indexOf('## CLI reference'), readme.indexOf('## Calling the webhook directly'));

  it('every command: its usage line in the CLI reference table, and --help lists each flag', async () => {
    const list = (await runCli('--help')).stdout;
    const names = [...list.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1] ?? '');
    expect(names).to.have.length.above(5);
    for (const name of names) {
      const help = (await runCli(name, '--help')).stdout;
      const usage = /^usage: (.*)$/m.exec(help)?.[1] ?? '';
      expect(reference, name).to.include(`| \`${usage.replaceAll('|', '\\|')}\` |`);
      const module = (await import(`../../cli/${name}-command.ts`)) as { help: string };
      expect(help, name).to.include(module.help);
    }
  });
});

describe('cli: the docs pages of the processes name every flag', () => {
  for (const [name, page] of [
    ['certs', 'docs/certs.md'],
    ['controller', 'docs/controller.md'],
  ] as const) {
    it(`${page}: each flag of staticsite ${name}`, async () => {
      const text = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');
      const { help } = (await import(`../../cli/${name}-command.ts`)) as { help: string };
      const flags = [...help.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1] ?? '');
      expect(flags).to.have.length.above(10);
      expect(flags.filter((flag) => !text.includes(`\`${flag}`))).to.deep.equal([]);
    });
  }
});

async function runCli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}
