/**
 * A server for port-route tests, run as a background process in a run's sandbox
 * (`python3 -u server.py <port>`, after writing {@link PORT_SERVER} to `server.py`):
 * GET answers the path and the Authorization it saw (`/big/<n>`: n bytes of a known
 * pattern), POST answers the body reversed, a WebSocket upgrade echoes one text
 * message. It prints `listening` once it serves.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';

export const PORT_SERVER = `import base64, hashlib, http.server, socketserver, sys
def bigBody(n):
    return (bytes(range(256)) * (n // 256 + 1))[:n]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if self.headers.get("Upgrade", "").lower() == "websocket":
            key = self.headers["Sec-WebSocket-Key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
            accept = base64.b64encode(hashlib.sha1(key.encode()).digest()).decode()
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", accept)
            self.end_headers()
            self.wfile.flush()
            first = self.rfile.read(2)
            mask = self.rfile.read(4)
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(first[1] & 127)))
            out = b"echo " + data
            self.wfile.write(bytes([0x81, len(out)]) + out)
            self.wfile.flush()
            return
        if self.path.startswith("/big/"):
            body = bigBody(int(self.path[5:]))
        else:
            body = ("path %s auth %s\\n" % (self.path, self.headers.get("Authorization"))).encode()
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        data = self.rfile.read(int(self.headers["content-length"]))
        self.send_response(201)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[::-1])
    def log_message(self, *a):
        pass
socketserver.TCPServer.allow_reuse_address = True
server = socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H)
print("listening", flush=True)
server.serve_forever()
`;

/** The head of the answer to a WebSocket upgrade (a refusal, when the route refuses). */
export async function webSocketHead(target: URL, token: string): Promise<string> {
  const socket = connect(Number(target.port), target.hostname);
  await once(socket, 'connect');
  socket.write(
    `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nAuthorization: Bearer ${token}\r\n` +
      `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  let got = '';
  while (!got.includes('\r\n\r\n')) {
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    got += chunk.toString();
  }
  socket.destroy();
  return got.slice(0, got.indexOf('\r\n\r\n'));
}

/** A WebSocket exchange of one text message over `socket`, after the handshake. */
export async function webSocketEcho(target: URL, token: string, text: string) {
  const socket = connect(Number(target.port), target.hostname);
  await once(socket, 'connect');
  const key = randomBytes(16).toString('base64');
  socket.write(
    `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nAuthorization: Bearer ${token}\r\n` +
      `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  let got = Buffer.alloc(0);
  const more = async () => {
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    got = Buffer.concat([got, chunk]);
  };
  while (!got.includes('\r\n\r\n')) await more();
  const end = got.indexOf('\r\n\r\n') + 4;
  const head = got.subarray(0, end).toString();
  got = got.subarray(end);
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  socket.write(
    Buffer.concat([
      Buffer.from([0x81, 0x80 | payload.length]),
      mask,
      Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!)),
    ]),
  );
  while (got.length < 2 || got.length < 2 + (got[1]! & 127)) await more();
  socket.destroy();
  return { head, message: got.subarray(2, 2 + (got[1]! & 127)).toString() };
}

/** The body `/big/<n>` answers: the bytes 0..255 over and over, `n` of them. */
export function bigBody(n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = i % 256;
  return out;
}
