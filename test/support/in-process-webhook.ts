import { pino } from 'pino';
import { MemoryHostnameIndex } from '../../webhook/admission/hostname-index.ts';
import { createMutator } from '../../webhook/admission/mutate.ts';
import { SiteSchemas } from '../../webhook/admission/site-schemas.ts';
import { createValidator } from '../../webhook/admission/validate.ts';
import { createWebhookListener } from '../../webhook/http/app.ts';
import { WebhookMetrics } from '../../webhook/http/metrics.ts';

/**
 * The webhook's request listener as the server runs it (mutate, validate with a synced hostname
 * index, convert), in this process: for supertest or an http server of the test's own. Log lines go
 * to `logLines` when given (at debug level), else nowhere.
 */
export function inProcessWebhook(options: { logLines?: string[] } = {}) {
  const schemas = new SiteSchemas();
  const hostnames = new MemoryHostnameIndex();
  hostnames.synced = true;
  const metrics = new WebhookMetrics();
  const lines = options.logLines;
  const logger = lines
    ? pino({ level: 'debug' }, { write: (line: string) => lines.push(line) })
    : pino({ level: 'silent' });
  const listener = createWebhookListener({
    mutate: createMutator({ schemas, baseDomain: 'sites.example.com' }),
    validate: createValidator({ schemas, hostnames }),
    metrics,
    logger,
  });
  return { listener, metrics };
}
