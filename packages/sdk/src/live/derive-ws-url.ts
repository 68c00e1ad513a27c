/** `http://host:port/base` to `ws://host:port/base/v1/ws`. */
export function deriveWsUrl(url: string): string {
  const parsed = new URL(url);
  parsed.protocol = parsed.protocol === 'https:' ? 'wss:' : 'ws:';
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/v1/ws`;
  return parsed.toString();
}
