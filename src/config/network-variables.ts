/**
 * The network: what `fetch` and the egress proxy may reach and with which secrets, the
 * addresses the node listens on, and how the mesh's peers authenticate (token, TLS).
 * Part of `CONFIG_VARIABLES` (`variables.ts`), in the order the table lists them.
 *
 * @module
 */

import type { ConfigVariable } from './config-variable.js';

/** The variables of this part of the registry. */
export const NETWORK_VARIABLES = [
  {
    name: 'MEMQL_FETCH_ALLOW_PRIVATE',
    default: '',
    defaultText: 'empty: no private ranges',
    type: 'comma-separated CIDRs (IPv4 or IPv6)',
    description:
      'Private address ranges `fetch` and the egress proxy (commands with network) may reach, e.g. `127.0.0.0/8`; all others stay blocked, and cloud metadata always. Each entry is `address/prefix` with the prefix required (host bits are ignored), in plain notation: dotted decimal IPv4 without leading zeros, IPv6 without brackets or a zone. A bad entry stops the node at start (exit 2).',
  },
  {
    name: 'MEMQL_FETCH_MAX_BYTES',
    default: '10485760',
    type: 'positive integer (bytes)',
    description: 'Largest response body `fetch` accepts.',
  },
  {
    name: 'MEMQL_FETCH_TIMEOUT_MS',
    default: '30000',
    type: 'positive integer (ms)',
    description: 'Time limit of one `fetch`.',
  },
  {
    name: 'MEMQL_EGRESS_CEILING',
    default: '',
    defaultText: 'empty: no run may have network',
    type: 'comma-separated host rules: `host`, `*.suffix`, either with `:port`',
    description:
      'The most network any run may be given, e.g. `pypi.org,files.pythonhosted.org,registry.npmjs.org,github.com:443`. A run is given hosts within it at creation or later (`network` of `POST /v1/runs`, `PUT /v1/runs/:runId/network`); a host outside it is refused (`egress_not_allowed`). Rules name hosts, never addresses; a wildcard matches the names below its suffix. Set it on agent nodes (which check each change) and on workbench nodes (which enforce it again, so lowering it takes effect without touching the runs).',
  },
  {
    name: 'MEMQL_EGRESS_SECRETS',
    default: undefined,
    defaultText: 'unset: no secrets',
    type: 'JSON object: `{"<name>": {"hosts": [rules], "header": "<name>", "prefix"?: "<text>", "file": "<path>" | "env": "<VARIABLE>"}}`',
    description:
      'Secrets a run may opt into by name (`network.secrets`): the egress proxy adds the header to requests to those hosts only, and the value never enters the sandbox. The value is read at start from `file` (a mounted Kubernetes Secret; one trailing newline is dropped) or from the environment variable `env` (`valueFrom.secretKeyRef`), `prefix` put before it (e.g. `"Bearer "`). Only references belong here, never a value, so it is plain configuration (a ConfigMap value), not a Secret; still, no error quotes it, in case a value was pasted in by mistake. Agent nodes in remote mode read the names only.',
  },
  {
    name: 'MEMQL_EGRESS_RESOLVE',
    default: '',
    defaultText: 'empty: DNS',
    type: 'comma-separated `host=address` (an entry per address)',
    description:
      "Names the egress proxy resolves to the given addresses instead of asking DNS, e.g. a package mirror on the operator's network: `pypi.internal=10.0.0.7`. The addresses are still checked: a private one needs its range in `MEMQL_FETCH_ALLOW_PRIVATE`, and cloud metadata is never reached.",
  },
  {
    name: 'MEMQL_EGRESS_CA_FILE',
    default: '',
    defaultText: 'empty: the system CAs only',
    type: 'path of a PEM file of certificates',
    description:
      "CA certificates commands with network trust beside the system's (the sandbox's trust bundle), and the egress proxy trusts upstream for the hosts it adds a secret for: a private package index's CA, say. Read at start; a file that cannot be read or holds no certificate stops the node (exit 2).",
  },
  {
    name: 'MEMQL_GRPC_LISTEN',
    default: '0.0.0.0:50060',
    type: '`host:port`; IPv6 in brackets; port 0 picks a free port',
    description:
      'Address of the `NodeService` and `grpc.health.v1` server. A workbench node refuses to start (exit 2) on an address other than loopback (127.0.0.0/8, `::1`, `localhost`) unless `MEMQL_MESH_TOKEN` or mutual TLS is configured or `MEMQL_MESH_INSECURE` is set.',
  },
  {
    name: 'MEMQL_GRPC_ADVERTISE',
    default: undefined,
    defaultText: 'unset: `MEMQL_GRPC_LISTEN` when its host is not `0.0.0.0` or `::`',
    type: '`host:port`; IPv6 in brackets',
    description:
      "Where the other agent replicas reach this agent node's gRPC listener, recorded beside each worker host connected here so that a call arriving at another replica is forwarded here over the mesh (authenticated by `MEMQL_MESH_TOKEN`). On Kubernetes, the pod's IP and the gRPC port (`$(POD_IP):50060`). With neither this nor a specific listen host, the workers connected here serve only the calls that arrive here.",
  },
  {
    name: 'MEMQL_HTTP_LISTEN',
    default: '127.0.0.1:8080',
    type: '`host:port`; IPv6 in brackets; port 0 picks a free port',
    description: 'Address of the HTTP API and operator console.',
  },
  {
    name: 'MEMQL_METRICS_LISTEN',
    default: undefined,
    defaultText: 'unset: no metrics server',
    type: '`host:port`; IPv6 in brackets; port 0 picks a free port',
    description: 'Address of the Prometheus metrics endpoint.',
  },
  {
    name: 'MEMQL_MESH_TOKEN',
    default: undefined,
    defaultText: 'unset: peers are not authenticated by token',
    type: 'at least 16 characters, no whitespace',
    description: 'Shared secret nodes present to each other.',
    secret: true,
  },
  {
    name: 'MEMQL_TLS_CERT_FILE',
    default: undefined,
    defaultText: 'unset: no TLS identity',
    type: 'path',
    description:
      'PEM certificate of this node for mesh TLS; set together with `MEMQL_TLS_KEY_FILE`.',
  },
  {
    name: 'MEMQL_TLS_KEY_FILE',
    default: undefined,
    defaultText: 'unset: no TLS identity',
    type: 'path',
    description: 'PEM private key matching `MEMQL_TLS_CERT_FILE`.',
  },
  {
    name: 'MEMQL_TLS_CA_FILE',
    default: undefined,
    defaultText: 'unset: system roots',
    type: 'path',
    description:
      "PEM CA bundle that peers' certificates must chain to. With `MEMQL_TLS_CERT_FILE` and `MEMQL_TLS_KEY_FILE` it makes mutual TLS: a serving node requires and verifies its callers' certificates.",
  },
  {
    name: 'MEMQL_MESH_INSECURE',
    default: 'false',
    type: 'boolean',
    description:
      'Lets a workbench node serve the mesh on a non-loopback `MEMQL_GRPC_LISTEN` with neither `MEMQL_MESH_TOKEN` nor mutual TLS; without it such a node refuses to start. Anyone who can reach the port can then run commands, so use it only on a network where every host is trusted; every start logs a warning.',
  },
] as const satisfies readonly ConfigVariable[];
