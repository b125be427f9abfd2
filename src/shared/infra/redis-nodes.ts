/** A seed node of a Redis Cluster (REDIS_CLUSTER_NODES). */
export interface RedisNode {
  host: string;
  port: number;
}

/**
 * Parses REDIS_CLUSTER_NODES: comma-separated `host:port` seed nodes (`[v6-address]:port` for IPv6).
 * Returns the nodes and, for each malformed entry, a message naming it.
 */
export function parseRedisNodes(name: string, value: string): { nodes: RedisNode[]; problems: string[] } {
  const nodes: RedisNode[] = [];
  const problems: string[] = [];
  const entries = value.split(',').map((s) => s.trim());
  for (const entry of entries) {
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(entry);
    const port = m ? Number(m[3]) : NaN;
    if (!m || port < 1 || port > 65535) {
      problems.push(`${name}: ${JSON.stringify(entry)} is not a host:port seed node (e.g. 10.0.0.1:7000,10.0.0.2:7000)`);
      continue;
    }
    nodes.push({ host: m[1] ?? m[2], port });
  }
  return { nodes, problems };
}

/** The REDIS_CLUSTER_NODES form of `nodes` (what parseRedisNodes reads). */
export function formatRedisNodes(nodes: RedisNode[]): string {
  return nodes.map((n) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(',');
}
