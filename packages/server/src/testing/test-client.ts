import { request as httpRequest } from 'node:http';

export interface TestResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | undefined;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (for malformed input). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Connect from this local address (another 127.x.y.z stands for another client address). */
  localAddress?: string;
}

/**
 * A small HTTP client over node:http for tests: never throws on a status,
 * parses JSON answers, and can send bodies fetch would refuse to.
 */
export function httpCall(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<TestResponse> {
  const url = new URL(path, baseUrl);
  const payload =
    options.rawBody !== undefined
      ? options.rawBody
      : options.body !== undefined
        ? JSON.stringify(options.body)
        : undefined;
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (payload !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] ??= Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, headers, agent: false, ...(options.localAddress ? { localAddress: options.localAddress } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          if (text !== '') {
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.end(payload);
    else req.end();
  });
}

/** A client bound to a base URL and (optionally) a token. */
export function client(baseUrl: string, token?: string) {
  const call = (method: string, path: string, body?: unknown, extra: Omit<RequestOptions, 'token' | 'body'> = {}) =>
    httpCall(baseUrl, method, path, { token, body, ...extra });
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown) => call('POST', path, body),
    put: (path: string, body?: unknown) => call('PUT', path, body),
    delete: (path: string) => call('DELETE', path),
    call,
  };
}

export type TestClient = ReturnType<typeof client>;

/** How long `GET /healthz` takes to answer, in ms (fails unless it answers 200 within 5 s). */
export async function healthzMs(baseUrl: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
  if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
  return performance.now() - started;
}
