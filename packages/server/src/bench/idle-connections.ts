/**
 * Idle WebSocket clients (a child process of the benchmark): opens N sockets,
 * authenticates each (Bubble: `client.auth` -> `server.ready`; baseline: any
 * first message -> `ready`), answers `{ready: n}`, then holds them open and
 * silent until the parent sends `'close'`.
 */
import WebSocket from 'ws';

export interface IdleJob {
  wsUrl: string;
  token: string;
  connections: number;
}

async function run(job: IdleJob): Promise<void> {
  const sockets: WebSocket[] = [];
  let opened = 0;
  const openOne = (): Promise<void> =>
    new Promise((resolve, reject) => {
      // Spread over client addresses of the loopback range, as many clients would be (the server caps connections per address).
      const socket = new WebSocket(job.wsUrl, {
        perMessageDeflate: false,
        localAddress: `127.0.0.${2 + (opened++ % 200)}`,
      });
      sockets.push(socket);
      socket.on('open', () => socket.send(JSON.stringify({ type: 'client.auth', token: job.token })));
      socket.once('message', (data: Buffer) => {
        const type = (JSON.parse(data.toString('utf8')) as { type: string }).type;
        if (type === 'server.ready' || type === 'ready') resolve();
        else reject(new Error(`unexpected first frame ${data.toString('utf8')}`));
      });
      socket.on('close', (code) => reject(new Error(`closed with ${code} before ready`)));
      socket.on('error', reject);
    });
  for (let i = 0; i < job.connections; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, job.connections - i) }, openOne));
  }
  process.send?.({ ready: sockets.length });
  process.once('message', () => {
    for (const socket of sockets) socket.terminate();
    process.exit(0);
  });
}

if (process.send !== undefined) {
  process.once('message', (job: IdleJob) => {
    run(job).catch((error: unknown) => process.send?.({ error: String(error) }, () => process.exit(1)));
  });
}
