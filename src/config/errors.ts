// The configuration's one error, and the one-line form its messages take: apart from src/config.ts
// so that the modules parsing a part of the configuration (src/config/) import it without a cycle.

/** A character shown as its \u escape. */
const escapeChar = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * The text on one line whatever it quotes: a line break (a value pasted with one) or another
 * control character is shown as its \u escape, so a start-up error cannot print lines of its own.
 */
export const oneLine = (text: string): string => text.replace(/[\p{Cc}\u2028\u2029]/gu, escapeChar);

/** A configuration value that cannot be used; its message is the one line printed at start-up. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(oneLine(`${variable}: ${problem}`));
    this.name = 'ConfigError';
  }
}
