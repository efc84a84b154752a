import pino from 'pino';
import {
  type Authority,
  type DispatchResult,
  type Envelope,
  parseEnvelope,
} from '../../src/contract/index.js';
import {
  authorityToWire,
  createWorkbenchHandler,
  type DispatchTarget,
  responseFrame,
  resultFromResponse,
  WORKBENCH_DISPATCH_METHOD,
} from '../../src/mesh/index.js';

/**
 * A test's call as the boundary parses it: the envelope, or a thrown error naming
 * what does not parse (a test writing a bad call by mistake fails loudly).
 */
export function parsedEnvelope(raw: unknown): Envelope {
  const parsed = parseEnvelope(raw);
  if (!parsed.ok) throw new Error(`test envelope does not parse: ${parsed.message}`);
  return parsed.envelope;
}

/**
 * One call through a workbench node's process boundary, the mesh service's handler
 * (parse, admit, run), with no network in between: what a forwarded call meets.
 */
export async function serveCall(
  host: DispatchTarget,
  raw: unknown,
  authority: Authority,
): Promise<DispatchResult> {
  const wire = authorityToWire(authority);
  if (wire === null) throw new Error('serveCall: the authority cannot cross the wire');
  const handler = createWorkbenchHandler(host, pino({ level: 'silent' }));
  const answer = await handler(
    {
      id: 'test-call',
      method: WORKBENCH_DISPATCH_METHOD,
      authority: wire,
      payload: Buffer.from(JSON.stringify(raw), 'utf8'),
      authenticated: true,
      peerNodeId: null,
    },
    { signal: new AbortController().signal, output: () => undefined },
  );
  return resultFromResponse(responseFrame('test-call', answer));
}
