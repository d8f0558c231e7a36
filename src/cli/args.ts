/**
 * Turning argv into a command and a layer of configuration.
 *
 * Parsed with Node's own `util.parseArgs`, not commander: commander 15 needs Node 22 and we
 * support Node 20, and parseArgs ships with Node, so it costs no dependency. We run it with
 * `tokens: true` and `strict: false`, then apply the strict rules ourselves over the tokens
 * (unknown option, option without its value, switch given a value, stray argument): the rules
 * are the same as strict mode's, but each failure gets our one-line message instead of Node's.
 *
 * Values are not interpreted here: `--duration 1.5s` becomes `{ trialMs: '1.5s' }` and the
 * config resolver parses and checks it, exactly as it would the same text in a config file.
 */
import { parseArgs } from 'node:util';
import {
  closest,
  conflict,
  missingArgument,
  missingValue,
  unexpectedArgument,
  unexpectedValue,
  unknownCommand,
  unknownOption,
  unknownScenario,
} from '../config/errors.js';
import { CONFIG_FLAGS, type ConfigFlag } from '../config/flags.js';
import type { PartialConfig } from '../config/schema.js';

export const COMMANDS = [
  'run',
  'list',
  'check-strategy',
  'report',
  'compare',
  'scenario',
  'demo',
  'help',
  'explain',
] as const;
export type CommandName = (typeof COMMANDS)[number];

/** What the command line asks for. Values are the strings typed; nothing is resolved yet. */
export type ParsedCommand =
  | { readonly command: 'help'; readonly topic?: CommandName; readonly scenario?: string }
  | { readonly command: 'version' }
  | { readonly command: 'run' | 'demo'; readonly flags: PartialConfig; readonly configFile?: string }
  | { readonly command: 'scenario'; readonly name: string; readonly flags: PartialConfig; readonly configFile?: string }
  | { readonly command: 'list' }
  | { readonly command: 'check-strategy'; readonly spec: string; readonly options: readonly string[] }
  | { readonly command: 'report'; readonly dir: string; readonly wide?: boolean }
  | { readonly command: 'explain'; readonly dir: string }
  | {
      readonly command: 'compare';
      /** The runs as typed: results directories or results.json paths (at least 2). */
      readonly runs: readonly string[];
      readonly merge: boolean;
      /** `--json FILE`: the comparison as JSON; `-` is stdout (instead of the table). */
      readonly json?: string;
      /** `--out DIR`: report.html and compare.json. */
      readonly out?: string;
      /** `--stage NAME`, repeatable: only these stages. */
      readonly stages: readonly string[];
    };

interface OptionDef {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** For "needs a value, like ..." messages. */
  readonly example?: string;
}

const GLOBAL_OPTIONS: Record<string, OptionDef> = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
};

const CONFIG_OPTIONS: Record<string, OptionDef> = Object.fromEntries([
  ['config', { type: 'string', example: 'deferlab.json' }],
  ...CONFIG_FLAGS.map((f): [string, OptionDef] => [
    f.flag.slice(2),
    { type: f.value ? 'string' : 'boolean', multiple: f.repeatable, example: f.example },
  ]),
]);

/** Per command: its options and its positional arguments (`[]` = none). */
const GRAMMAR: Record<
  CommandName,
  { options: Record<string, OptionDef>; positionals: readonly string[]; example: string }
> = {
  run: { options: { ...GLOBAL_OPTIONS, ...CONFIG_OPTIONS }, positionals: [], example: 'run --cpus 4' },
  demo: { options: { ...GLOBAL_OPTIONS, ...CONFIG_OPTIONS }, positionals: [], example: 'demo' },
  scenario: { options: { ...GLOBAL_OPTIONS, ...CONFIG_OPTIONS }, positionals: ['NAME'], example: 'scenario cpu-hog' },
  list: { options: GLOBAL_OPTIONS, positionals: [], example: 'list' },
  'check-strategy': {
    options: { ...GLOBAL_OPTIONS, option: { type: 'string', multiple: true, example: 'key=value' } },
    positionals: ['FILE'],
    example: 'check-strategy ./my-strategy.ts',
  },
  report: {
    options: { ...GLOBAL_OPTIONS, wide: { type: 'boolean' } },
    positionals: ['DIR'],
    example: 'report deferlab-results/20250101-120000',
  },
  compare: {
    options: {
      ...GLOBAL_OPTIONS,
      merge: { type: 'boolean' },
      json: { type: 'string', example: 'compare.json' },
      out: { type: 'string', example: 'compare-out' },
      stage: { type: 'string', multiple: true, example: 'one_way' },
    },
    positionals: ['DIR', 'DIR'],
    example: 'compare results/laptop results/server',
  },
  help: { options: GLOBAL_OPTIONS, positionals: [], example: 'help run' },
  explain: { options: GLOBAL_OPTIONS, positionals: ['DIR'], example: 'explain deferlab-results/20250101-120000' },
};

const WHAT: Record<string, string> = {
  NAME: 'a scenario NAME',
  FILE: 'a strategy FILE',
  DIR: 'a results DIR',
};

/**
 * qperf spells its sweep option `-oo`, which is not a valid parseArgs short option: respelled
 * `--sweep` in place. Returns the indices respelled, so that messages name what the user typed.
 */
function respellQperf(args: string[]): Set<number> {
  const respelled = new Set<number>();
  for (let i = 0; i < args.length && args[i] !== '--'; i++) {
    if (!/^--?oo(=|$)/.test(args[i])) continue;
    args[i] = args[i].replace(/^--?oo/, '--sweep');
    respelled.add(i);
  }
  return respelled;
}

function isCommand(name: string): name is CommandName {
  return (COMMANDS as readonly string[]).includes(name);
}

/** A value that is really the next option (`--cpus --hz 100`); negative numbers are values. */
function looksLikeOption(value: string): boolean {
  return value.startsWith('-') && value !== '-' && !/^-\d/.test(value);
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

/** The flags layer: each config flag given, at its field's path. A repeated flag: the last wins. */
function flagsLayer(values: ReadonlyMap<string, string[] | true>): PartialConfig {
  if (values.has('out') && values.has('no-output')) {
    throw conflict('--out and --no-output contradict each other', 'give one of them', true);
  }
  if (values.has('control') && values.has('no-control')) {
    throw conflict('--control and --no-control contradict each other', 'give one of them', true);
  }
  const layer: Record<string, unknown> = {};
  for (const flag of CONFIG_FLAGS) {
    const given = values.get(flag.flag.slice(2));
    if (given === undefined) continue;
    setPath(layer, flag.path, flagValue(flag, given));
  }
  return layer as PartialConfig;
}

function flagValue(flag: ConfigFlag, given: string[] | true): unknown {
  if (given === true) return flag.sets;
  return flag.repeatable ? given : given[given.length - 1];
}

/** What the parser may know besides the grammar. */
export interface ParseContext {
  /** The scenario names, for the message when `scenario` is given none. */
  readonly scenarios?: readonly string[];
}

/** `a, b or c` */
function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/**
 * Parse argv (without `node` and the script). Context: main thread. Returns the command;
 * throws a DeferlabError (exit status 2, usage) for anything malformed.
 */
export function parseArgv(argv: readonly string[], context: ParseContext = {}): ParsedCommand {
  const args = [...argv];
  let command: CommandName = 'run';
  let named = false;
  if (args.length > 0 && !args[0].startsWith('-')) {
    named = true;
    const name = args.shift() as string;
    if (!isCommand(name)) throw unknownCommand(name, COMMANDS, closest(name, COMMANDS));
    command = name;
  }
  const respelled = respellQperf(args);
  const grammar = GRAMMAR[command];
  const { tokens } = parseArgs({
    args,
    options: Object.fromEntries(
      Object.entries(grammar.options).map(([name, def]) => [
        name,
        def.short ? { type: def.type, short: def.short } : { type: def.type },
      ]),
    ),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });

  // --help and --version win over everything else on the line, as users expect.
  // `scenario NAME --help`: that scenario's help.
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name !== 'help') continue;
    if (!named) return { command: 'help' };
    const name = command === 'scenario' ? tokens.find((t) => t.kind === 'positional')?.value : undefined;
    // `scenario nosuch --help`: the name is wrong, not a request for the generic help.
    if (name !== undefined && context.scenarios && !context.scenarios.includes(name))
      throw unknownScenario(name, context.scenarios);
    return name === undefined
      ? { command: 'help', topic: command }
      : { command: 'help', topic: command, scenario: name };
  }
  for (const token of tokens) {
    if (token.kind === 'option' && token.name === 'version') return { command: 'version' };
  }

  const values = new Map<string, string[] | true>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const def = grammar.options[token.name];
    if (!def) {
      const known = Object.keys(grammar.options).map((n) => `--${n}`);
      const isLong = token.rawName.startsWith('--');
      throw unknownOption(token.rawName, command, isLong ? closest(token.rawName, known) : undefined);
    }
    const flag = `--${token.name}`;
    // qperf's -oo: messages name it as the user typed it.
    const typed = respelled.has(token.index) ? argv[token.index + (named ? 1 : 0)].split('=')[0] : undefined;
    if (def.type === 'boolean') {
      if (token.value !== undefined) throw unexpectedValue(flag, token.value);
      values.set(token.name, true);
      continue;
    }
    if (token.value === undefined) throw missingValue(flag, def.example ?? 'VALUE', undefined, typed);
    if (!token.inlineValue && looksLikeOption(token.value))
      throw missingValue(flag, def.example ?? 'VALUE', token.value, typed);
    const list = values.get(token.name);
    values.set(token.name, Array.isArray(list) ? [...list, token.value] : [token.value]);
  }

  if (command === 'help') {
    const topic = positionals[0];
    // `help scenario NAME`, as `scenario NAME --help`.
    const max = topic === 'scenario' ? 2 : 1;
    if (positionals.length > max)
      throw unexpectedArgument('help', positionals[max], max === 2 ? 'at most scenario NAME' : 'at most one COMMAND');
    if (topic === undefined) return { command: 'help' };
    if (!isCommand(topic)) throw unknownCommand(topic, COMMANDS, closest(topic, COMMANDS));
    const name = positionals[1];
    if (name === undefined) return { command: 'help', topic };
    if (context.scenarios && !context.scenarios.includes(name)) throw unknownScenario(name, context.scenarios);
    return { command: 'help', topic, scenario: name };
  }

  const wanted = grammar.positionals;
  if (command === 'compare' && positionals.length < 2) {
    throw missingArgument(
      command,
      `at least 2 results DIRs (got ${positionals.length}${positionals.length ? `: ${positionals[0]}` : ''})`,
      grammar.example,
    );
  }
  if (positionals.length < wanted.length) {
    const missing = wanted[positionals.length];
    const names = context.scenarios ?? [];
    const what =
      missing === 'NAME' && names.length > 0
        ? `${WHAT.NAME} (${orList(names)}; 'deferlab scenario --help' describes them)`
        : WHAT[missing];
    throw missingArgument(command, what, grammar.example);
  }
  if (positionals.length > wanted.length && command !== 'compare') {
    const takes = wanted.length === 0 ? 'no arguments' : `one ${wanted[0]}`;
    throw unexpectedArgument(command, positionals[wanted.length], takes);
  }

  const configFile = (values.get('config') as string[] | undefined)?.at(-1);
  switch (command) {
    case 'run':
    case 'demo':
      return { command, flags: flagsLayer(values), ...(configFile === undefined ? {} : { configFile }) };
    case 'scenario':
      return {
        command,
        name: positionals[0],
        flags: flagsLayer(values),
        ...(configFile === undefined ? {} : { configFile }),
      };
    case 'list':
      return { command };
    case 'check-strategy':
      return { command, spec: positionals[0], options: (values.get('option') as string[] | undefined) ?? [] };
    case 'report':
      return { command, dir: positionals[0], ...(values.has('wide') ? { wide: true } : {}) };
    case 'explain':
      return { command, dir: positionals[0] };
    case 'compare': {
      const last = (name: string) => (values.get(name) as string[] | undefined)?.at(-1);
      const json = last('json');
      const out = last('out');
      return {
        command,
        runs: positionals,
        merge: values.has('merge'),
        ...(json === undefined ? {} : { json }),
        ...(out === undefined ? {} : { out }),
        stages: (values.get('stage') as string[] | undefined) ?? [],
      };
    }
  }
}
