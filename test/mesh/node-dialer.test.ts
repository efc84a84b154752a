import t from 'tap';
import type { MeshTlsConfig } from '../../src/config/index.js';
import { clientChannelOptions } from '../../src/mesh/limits.js';
import { dialChannelOptions, endpointKey } from '../../src/mesh/node-dialer.js';

/**
 * The one dialler's pure parts: the channel options of a dial (the mesh's own, and the
 * TLS name to check when it is not the dialled host) and the `host:port` key.
 */

const tls: MeshTlsConfig = { identity: null, caFile: null };
const OVERRIDE = 'grpc.ssl_target_name_override';
const AUTHORITY = 'grpc.default_authority';

t.test('the channel options of a dial', async (t) => {
  const cases: {
    name: string;
    target: { host: string; port: number; serverName?: string };
    tls: MeshTlsConfig | null;
    checked: string | null;
  }[] = [
    { name: 'plaintext', target: { host: '10.0.0.7', port: 7000 }, tls: null, checked: null },
    {
      name: 'plaintext, a seed name: nothing to check',
      target: { host: '10.0.0.7', port: 7000, serverName: 'wb.internal' },
      tls: null,
      checked: null,
    },
    {
      name: 'TLS to the name itself (a worker dialling its agent)',
      target: { host: 'agent.example', port: 7000 },
      tls,
      checked: null,
    },
    {
      name: 'TLS to the seed name as given',
      target: { host: 'wb.internal', port: 7000, serverName: 'wb.internal' },
      tls,
      checked: null,
    },
    {
      name: "TLS to a replica's address: its certificate is checked against the seed name",
      target: { host: '10.0.0.7', port: 7000, serverName: 'wb.internal' },
      tls,
      checked: 'wb.internal',
    },
  ];
  for (const c of cases) {
    const options = dialChannelOptions(c.target, c.tls);
    t.match(options, clientChannelOptions(), `${c.name}: the mesh's channel options`);
    t.equal(options[OVERRIDE], c.checked ?? undefined, `${c.name}: the TLS name`);
    t.equal(options[AUTHORITY], c.checked ?? undefined, `${c.name}: the authority`);
  }
});

t.test('the key of a dialled node brackets IPv6', async (t) => {
  t.equal(endpointKey({ host: '127.0.0.1', port: 1 }), '127.0.0.1:1');
  t.equal(endpointKey({ host: 'agent.example', port: 7000 }), 'agent.example:7000');
  t.equal(endpointKey({ host: '::1', port: 7000 }), '[::1]:7000');
});
