import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { PodNetwork } from '../../devenv/pod-network.ts';

const POD = {
  metadata: { name: 'hello-1', namespace: 'demo' },
  spec: {
    containers: [{ name: 'nginx', ports: [{ containerPort: 8080 }], volumeMounts: [{ name: 'content' }] }],
    volumes: [{ name: 'content', configMap: { name: 'hello' } }],
  },
  status: { phase: 'Running', podIP: '10.244.0.1' },
};

/** The two reads the pod network makes: pods by IP (a field selector) and a ConfigMap. */
function fakeApi(state: { content: string | undefined }) {
  return {
    async must(_method: string, _path: string, _body: unknown, options: { query: { fieldSelector: string } }) {
      return { items: options.query.fieldSelector === `status.podIP=${POD.status.podIP}` ? [POD] : [] };
    },
    async get(path: string) {
      if (path !== '/api/v1/namespaces/demo/configmaps/hello' || state.content === undefined) {
        return { status: 404, body: {} };
      }
      return { status: 200, body: { data: { 'index.html': state.content } } };
    },
  } as unknown as KubeHttp;
}

/** Reads until `n` bytes came. */
async function readN(socket: Socket, n: number): Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  while (buffered.length < n) {
    const chunk = await new Promise<Buffer>((resolve, reject) => {
      socket.once('data', resolve);
      socket.once('close', () => reject(new Error('closed')));
    });
    buffered = Buffer.concat([buffered, chunk]);
  }
  return buffered;
}

/** A SOCKS5 CONNECT to ip:port through the proxy: the reply code and the connected socket. */
async function socksConnect(proxy: string, ip: string, port: number): Promise<{ code: number; socket: Socket }> {
  const url = new URL(proxy);
  const socket = connect(Number(url.port), url.hostname);
  socket.write(Buffer.from([0x05, 0x01, 0x00]));
  expect([...(await readN(socket, 2))]).to.deep.equal([0x05, 0x00]);
  const address = ip.split('.').map(Number);
  socket.write(Buffer.from([0x05, 0x01, 0x00, 0x01, ...address, port >> 8, port & 255]));
  const reply = await readN(socket, 10);
  return { code: reply[1] ?? -1, socket };
}

/** GET `path` from ip:port through the proxy, on a connection of its own. */
async function get(
  proxy: string,
  target: string,
  path: string,
): Promise<{ status: number; type: string; body: string }> {
  const [ip = '', port = ''] = target.split(':');
  const { code, socket } = await socksConnect(proxy, ip, Number(port));
  expect(code).to.equal(0x00);
  return new Promise((resolve, reject) => {
    const req = request({ createConnection: () => socket, path, headers: { host: 'hello.demo.example' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('devenv: the pod network (SOCKS5) serves simulated pods as their nginx would', () => {
  const state = { content: '<h1>v1</h1>' as string | undefined };
  let network: PodNetwork;

  before(async () => {
    network = await new PodNetwork(fakeApi(state)).start();
  });
  after(async () => network.stop());

  it("a connection to a pod's IP and container port: `/` is the ConfigMap's index.html, read on every request", async () => {
    expect(network.url).to.match(/^socks5:\/\/127\.0\.0\.1:\d+$/);
    const pod = '10.244.0.1:8080';
    expect(await get(network.url, pod, '/')).to.deep.equal({ status: 200, type: 'text/html', body: '<h1>v1</h1>' });
    state.content = '<h1>v2</h1>';
    expect((await get(network.url, pod, '/index.html')).body).to.equal('<h1>v2</h1>');
    expect((await get(network.url, pod, '/other.html')).status).to.equal(404);
  });

  it('an address no running pod listens on is refused (SOCKS reply 5), as a network refuses it', async () => {
    for (const [ip, port] of [
      ['10.244.0.9', 8080],
      ['10.244.0.1', 80],
    ] as const) {
      const { code, socket } = await socksConnect(network.url, ip, port);
      expect(code, `${ip}:${port}`).to.equal(0x05);
      socket.destroy();
    }
  });

  it('once the ConfigMap is gone the pod keeps serving the files it had, as a mounted volume keeps them', async () => {
    state.content = '<h1>last</h1>';
    expect((await get(network.url, '10.244.0.1:8080', '/')).body).to.equal('<h1>last</h1>');
    state.content = undefined;
    expect((await get(network.url, '10.244.0.1:8080', '/')).body).to.equal('<h1>last</h1>');
  });
});
