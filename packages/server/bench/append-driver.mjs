// Sends N appends over K keep-alive connections to a running Bubble server, then prints how many got 201.
// Used by limits-instructions.sh; plain Node, no dependencies.
import http from 'node:http';

const [url, token, threadId, total, connections] = [
  process.argv[2],
  process.argv[3],
  process.argv[4],
  Number(process.argv[5]),
  Number(process.argv[6]),
];
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
let sent = 0;
let created = 0;
const appendOne = (i) =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify({ type: 'bench.tick', data: { i } });
    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    };
    const req = http.request(`${url}/v1/threads/${threadId}/events`, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 201) created += 1;
        resolve();
      });
    });
    req.on('error', reject);
    req.end(body);
  });
const worker = async () => {
  while (sent < total) await appendOne(sent++);
};
await Promise.all(Array.from({ length: connections }, worker));
agent.destroy();
console.log(JSON.stringify({ created }));
