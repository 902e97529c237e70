// JSON-lines logging to stdout (pino). Inquiry text is never logged; an email address anywhere in
// a record (an error's message and stack included) is masked (src/privacy.ts).
import { type DestinationStream, type Logger, pino } from 'pino';
import { maskDeep } from './privacy.js';

/** A logger to stdout, or to `destination`. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'studio-inquiry' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // The serialized error is a plain copy (JSON) so that its message, stack and causes are masked too.
    serializers: { err: (error: Error) => maskDeep(JSON.parse(JSON.stringify(pino.stdSerializers.err(error)))) },
    formatters: { log: (record) => maskDeep(record) as Record<string, unknown> },
    hooks: {
      // The message string too: formatters.log sees only the record's fields.
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? (maskDeep(arg) as string) : arg)) as Parameters<typeof method>);
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
