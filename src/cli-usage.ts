/**
 * The command line's answer to flags it cannot parse, in its own words: Node's `parseArgs`
 * messages quote unevenly (`as in '-- "--bogus"`) and do not say which help to read.
 */
import { errorMessage } from './errors.js';

/** The command word among `argv` (the first that is a known command), for "see switchboard CMD --help". */
function commandOf(argv: readonly string[], commands: readonly string[]): string | undefined {
  return argv.find((a) => commands.includes(a));
}

/**
 * One usage line for a `parseArgs` failure on `argv`: the flag, what is wrong with it, and which
 * `--help` to read. `commands` are the command words that have a help of their own.
 */
export function argsErrorText(err: unknown, argv: readonly string[], commands: readonly string[]): string {
  const command = commandOf(argv, commands);
  const help = `see switchboard ${command ? `${command} ` : ''}--help`;
  const code = (err as { code?: string }).code;
  const message = errorMessage(err);
  const flag = /'(-[^' ]*)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag)
    return `usage: unknown option ${flag}${command ? ` for ${command}` : ''} (${help}; text that starts with "-" goes after --)`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag) {
    if (/argument missing/.test(message)) return `usage: ${flag} needs a value (${help})`;
    if (/does not take an argument/.test(message)) return `usage: ${flag} takes no value (${help})`;
  }
  return `usage: ${message} (${help})`;
}
