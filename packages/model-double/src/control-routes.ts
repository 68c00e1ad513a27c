import type { IncomingMessage, ServerResponse } from 'node:http';
import { ScriptError } from './parse-script.js';
import type { RecordedRequest } from './recorded-request.js';
import type { Script } from './script.js';
import { writeJson } from './respond.js';

/**
 * Control routes under `/_double/`, for tests that run the double out of
 * process (`npx model-double`): read the recorded requests, clear them, and
 * replace the script. They are not recorded and never consume a rule.
 */
export const CONTROL_PREFIX = '/_double/';

export interface ControlTarget {
  requests: RecordedRequest[];
  setScript(script: Script | null): void;
}

export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: Buffer,
  target: ControlTarget,
): Promise<void> {
  const route = `${req.method ?? 'GET'} ${path}`;
  switch (route) {
    case 'GET /_double/requests':
      await writeJson(res, 200, { requests: target.requests }, {});
      return;
    case 'DELETE /_double/requests': {
      const cleared = target.requests.length;
      target.requests.length = 0;
      await writeJson(res, 200, { cleared }, {});
      return;
    }
    case 'PUT /_double/script': {
      let value: unknown;
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch {
        await writeJson(res, 400, { problems: ['not valid JSON'] }, {});
        return;
      }
      try {
        target.setScript(value as Script | null);
      } catch (err) {
        if (!(err instanceof ScriptError)) throw err;
        await writeJson(res, 400, { problems: err.problems }, {});
        return;
      }
      await writeJson(res, 200, { rules: Array.isArray(value) ? value.length : 0 }, {});
      return;
    }
    default:
      await writeJson(res, 404, { problems: [`unknown control route: ${route}`] }, {});
  }
}
