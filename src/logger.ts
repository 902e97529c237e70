// JSON-lines logging to stdout (pino). Inquiry text is never logged above debug level.
import { type Logger, pino } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'studio-inquiry' }, timestamp: pino.stdTimeFunctions.isoTime });
}
