// `ferrite` command line: `ferrite serve` runs one node.
import { Command, InvalidArgumentError } from 'commander';
import { pino, type Logger } from 'pino';
import { CarbonListener } from '../http/carbon-listener.js';
import type { AccountId } from '../model/types.js';
import { startNode } from '../actors/boot.js';
import type { FerriteNode } from '../actors/node/node.js';
import { buildServer } from '../http/server.js';
import { ConfigError, type FerriteConfig } from '../model/config.js';
import { TopologyError } from '../model/topology/index.js';
import { TransportError } from '../transport/nats.js';
import { DataDirError } from '../storage/open-error.js';
import { runCluster, type ClusterOptions } from './cluster.js';
import { ResizeError, runResize, type ResizeOptions } from './resize.js';
import { VERSION } from '../model/version.js';
import { envName, loadConfig } from './config-sources.js';
import { runBackup, runRestore } from './backup.js';
import { BackupError, type BackupManifest } from '../storage/backup.js';

const int = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('not a non-negative integer');
  return Number(value);
};

const program = new Command('ferrite').description('ferrite: a clustered time-series metric store').version(VERSION);

program
  .command('serve')
  .description('run one node')
  .option('--config <file>', 'JSON config file (keys as in the README)')
  .option('--host <host>', 'listen address (default 127.0.0.1)')
  .option('--port <port>', 'listen port (default 8112; 0 = any free port)', int)
  .option('--data-dir <dir>', 'RocksDB directory (default ./data)')
  .option('--node-id <uuid>', 'node uuid (default: chosen at first start and remembered; required with --topology)')
  .option('--topology <file>', 'cluster topology, JSON or IRONdb XML (default: standalone)')
  .option('--nats <url>', 'NATS server, e.g. nats://127.0.0.1:4222 (required by a topology of several nodes)')
  .option('--peer-timeout-ms <ms>', 'longest wait for a peer or JetStream to answer one request (default 5000)', int)
  .option('--extensions-dir <dir>', 'directory of .lua extensions served under /extension/lua')
  .option('--partitions <n>', 'metric partitions (default 16)', int)
  .option('--ingest-workers <n>', 'worker threads parsing write bodies (default: cores - 1; 0 = the main thread)', int)
  .option('--shards <n>', 'shard worker threads, each owning a share of the partitions and its own RocksDB directory (default: cores - 1, at least 1)', int)
  .option('--sync-writes', 'acknowledge writes only once their WAL is fsynced (group commit); survives power loss')
  .option('--rebuild', 'fetch from the peers everything this node owns before serving (a node whose data directory was lost); not repeated once done')
  .option('--join', 'a new node of a cluster in a rebalance: forward client requests to nodes not yet running this topology until all do; not repeated once done')
  .option('--conflict-resolver <name>', 'abs_biggest | abs_smallest | biggest | smallest, or last_<one of those> (higher MetricList generation wins first)')
  .option('--log-level <level>', 'fatal | error | warn | info | debug | trace | silent')
  .option('--default-account <id>', 'account of /api/v1/* queries, /api/put and carbon without an x-svc-account-id header', int)
  .option('--default-check-uuid <uuid>', 'check uuid /api/put and carbon samples are filed under')
  .option('--max-series-per-account <n>', 'series one account may hold on this node; samples creating more are rejected per line (default 0 = no limit)', int)
  .option('--max-series-per-check <n>', 'series one check uuid may hold on this node (default 0 = no limit)', int)
  .option('--carbon-port <port>', 'listen for carbon plaintext on this TCP port (default: off; 0 = any free port)', int)
  .addHelpText('after', `\nEvery option of the config file can also be set as an environment variable,\ne.g. dataDir as ${envName('dataDir')}. Precedence: flags > environment > file > defaults.`)
  .action(async (flags: Partial<FerriteConfig> & { config?: string }) => {
    let config: FerriteConfig;
    try {
      config = loadConfig(flags, process.env);
    } catch (error) {
      console.error(error instanceof ConfigError ? error.message : String((error as Error).message ?? error));
      process.exit(2);
    }
    try {
      await serve(config);
    } catch (error) {
      if (!(error instanceof TopologyError || error instanceof TransportError || error instanceof DataDirError)) throw error;
      console.error(error.message);
      process.exit(2);
    }
  });

program
  .command('cluster')
  .description('run a local cluster: a JetStream nats-server and N nodes on loopback under one topology')
  .option('--nodes <n>', 'nodes', int, 3)
  .option('--write-copies <n>', 'copies of each metric (W)', int, 2)
  .option('--base-port <port>', 'node i serves HTTP on base-port + i', int, 8112)
  .option('--data-dir <dir>', 'data for every node, the topology and NATS (default: a new temp dir)')
  .option('--log-level <level>', 'log level of the nodes', 'warn')
  .addHelpText('after', '\nWhile it runs, one command per line on stdin: add [port] (a new node, rebalanced onto),\nremove <node-id> (rebalanced off, then stopped), status, stop.')
  .action(async (o: ClusterOptions) => {
    try {
      await runCluster(o);
    } catch (error) {
      console.error((error as Error).message);
      process.exit(2);
    }
  });

const collect = (value: string, previous: string[]): string[] => [...previous, value];

program
  .command('resize')
  .description('grow or shrink a running cluster: plan the new topology, load it on every node, activate the rebalance')
  .requiredOption('-b, --bootstrap <node>', 'a node of the cluster: http://host:port or host[:port] (port 8112 by default)')
  .option('-a, --add <address:port,node-id[,side]>', 'a node to add (repeatable); a new node id is made when left out', collect, [])
  .option('-r, --remove <node-id>', 'a node to remove (repeatable; at most write_copies − 1)', collect, [])
  .option('--weight <n>', 'virtual nodes of each added node (default: the first current node\'s weight)', int)
  .option('-o, --out <file>', 'write the new topology (JSON) here, to start the new nodes with')
  .option('-y, --yes', 'load and activate it (without: a dry run that only prints the change)', false)
  .option('-w, --wait', 'with --yes: print progress until every node is IDLE under the new topology', false)
  .addHelpText('after', '\nStart each new node first, with --topology set to the new topology (see --out), or after: the rebalance\nwaits at VOTE until every node of both topologies has the new topology loaded.')
  .action(async (o: ResizeOptions) => {
    try {
      await runResize(o);
    } catch (error) {
      if (!(error instanceof ResizeError)) throw error;
      console.error(error.message);
      process.exit(2);
    }
  });

async function serve(config: FerriteConfig): Promise<void> {
  const log = pino({ level: config.logLevel });
  const node = await startNode(config, log);
  const app = buildServer(node, log);
  const address = await app.listen({ host: config.host, port: config.port });
  const carbon = await startCarbon(node, log, config);
  log.info({ address, dataDir: config.dataDir, identity: node.identity, partitions: config.partitions, carbonPort: carbon?.port }, 'ferrite listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: draining requests, sealing buffers');
    try {
      await carbon?.close();
      await app.close(); // stops accepting and waits for in-flight requests
      await node.stop(); // seals every buffer, truncates the journal, closes RocksDB
      log.info('stopped');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'unclean shutdown; the journal will be replayed at next start');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** The carbon plaintext listener, when `carbonPort` is set (config validation requires the account and check then). */
async function startCarbon(node: FerriteNode, log: Logger, config: FerriteConfig): Promise<CarbonListener | null> {
  if (config.carbonPort === null) return null;
  const scope = { account: config.defaultAccount! as AccountId, uuid: config.defaultCheckUuid!, checkName: '' };
  return CarbonListener.start(node, log, config.host, config.carbonPort, scope);
}

program
  .command('backup')
  .description('copy a node\'s data as of now: from a running node (its URL) or a stopped node\'s data directory')
  .argument('<source>', 'node URL (http://host:port) or data directory')
  .argument('<dest>', 'new, empty directory for the backup (on the node\'s machine when source is a URL)')
  .action(async (source: string, dest: string) => {
    await reportBackup(() => runBackup(source, dest), `backup of ${source} written to ${dest}`);
  });

program
  .command('restore')
  .description('restore a backup into a new data directory (then start a node on it)')
  .argument('<backup>', 'directory written by ferrite backup')
  .argument('<data-dir>', 'new, empty data directory')
  .action(async (backup: string, dataDir: string) => {
    await reportBackup(async () => runRestore(backup, dataDir), `${backup} restored into ${dataDir}`);
  });

async function reportBackup(run: () => Promise<BackupManifest>, done: string): Promise<void> {
  try {
    const m = await run();
    console.log(`${done}: ${m.shards} shard stores and the node store, ${m.bytes} bytes, taken ${m.created_at} in ${m.seconds} s`);
  } catch (error) {
    if (!(error instanceof BackupError || error instanceof DataDirError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
}

await program.parseAsync(process.argv);
