// Shapes of what the node answers (see http/console.ts and the README's endpoint sections).
export interface PeerLag {
  unconfirmed_messages: number;
  unconfirmed_records: number;
  oldest_unconfirmed_age: number;
}

export interface Replication {
  peers: Record<string, PeerLag>;
  journal_pending: number | null;
  misdirected: number;
  incarnation: string;
}

export interface Overview {
  identity: string;
  version: string;
  node_version: string;
  started_at: number;
  uptime_s: number;
  rollups: number[];
  histogram_rollups: number[];
  memory: { rss_bytes: number; heap_used_bytes: number };
  disk: { families: Record<string, { sst_bytes: number; memtable_bytes: number }>; by_kind: Record<string, number>; total_bytes: number };
  journal: { entries: number; first_seq: number | null; last_seq: number | null; cluster: Replication | null };
  rollup_backlog: { numeric_windows: number; histogram_periods: number; capped: boolean };
  cardinality: Cardinality;
  counters: Record<string, number>;
}

/** Series per account and the checks with the most (0 = no limit). */
export interface Cardinality {
  limits: { max_series_per_account: number; max_series_per_check: number };
  total: number;
  accounts: number;
  by_account: { account: number; series: number }[];
  top_checks: { uuid: string; account: number; check_name: string; series: number }[];
  refused_series: number;
}

export interface NodeView {
  id: string;
  address: string;
  port: number;
  apiport: number;
  weight: number;
  side: string | null;
  self: boolean;
  alive: boolean;
  gossip_age: number | null;
  share?: { primary: number; copies: number };
  overview?: Overview;
  error?: string;
}

export interface Nodes {
  identity: string;
  topology: { hash: string; write_copies: number };
  nodes: NodeView[];
}

export interface History {
  interval_s: number;
  t: number[];
  rates: Record<string, (number | null)[]>;
  gauges: Record<string, (number | null)[]>;
  peers: Record<string, Record<keyof PeerLag, (number | null)[]>>;
}

export interface FindRow {
  uuid: string;
  check_name: string;
  metric_name: string;
  type: string;
  account_id: number;
}

/** DF4 as /fetch and caql_v1 (format=DF4) answer. */
export interface Df4 {
  version: 'DF4';
  head: { count: number; start: number; period: number; warning?: string | string[]; error?: string[] };
  meta: { kind: string; label: string; tags?: string[] }[];
  data: unknown[][];
}

export interface ExtensionInfo {
  description: string;
  params: Record<string, { name: string; type: string }>;
}

/** `/state` `rebalance` (actors/cluster/rebalance-progress.ts). */
export interface RebalanceProgress {
  current: string;
  next: string;
  state: string;
  started: string | null;
  finished: string | null;
  elapsed_s: number;
  metrics_total: number;
  metrics_seen: number;
  metrics_sent: number;
  records_sent: number;
  bytes_sent: number;
  check_tag_updates_sent: number;
  records_received: number;
  bytes_received: number;
  rate_metrics_per_s: number;
  rate_bytes_per_s: number;
  percent: number;
  peers: Record<string, { current: string; next: string; state: string; ready: boolean } | null>;
}

/** A peer's walk for a rebuilding node (actors/cluster/rebuild.ts RebuildWalkStatus). */
export interface RebuildWalk {
  run: string;
  state: string;
  figures: { metrics_seen: number; metrics_sent: number; records_sent: number; bytes_sent: number };
  total_metrics: number;
  error?: string;
}

/** `/state` `rebuild`. */
export interface RebuildProgress {
  state: 'running' | 'done';
  run: string;
  started: string;
  elapsed_s: number;
  metrics_received: number;
  records_received: number;
  bytes_received: number;
  rate_bytes_per_s: number;
  rate_metrics_per_s: number;
  percent: number;
  peers: Record<string, RebuildWalk | null>;
}

/** The parts of `/state` the Topology page shows. */
export interface ClusterChanges {
  rebalance?: RebalanceProgress;
  rebuild?: RebuildProgress;
  rebuild_walks?: Record<string, RebuildWalk>;
}
