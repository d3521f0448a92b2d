// `ferrite cluster`'s control channel: one command per line on stdin, while the rig runs.
//   add [port]         start a new node (a new id, the next free port unless given) under the
//                      grown topology and rebalance onto it, as `ferrite resize -a` does
//   remove <node-id>   rebalance the node out, as `ferrite resize -r` does, then stop it
//   status             each node's rebalance state
//   stop               stop every node and NATS (as SIGINT does)
// One resize at a time: a command sent meanwhile is refused. Results are printed on stdout:
// `node <id> <url>` for a node added (the form the rig prints at start), `removed <id>`, and a
// line starting `failed:` with the reason when a command fails.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { planChange, TopologyError, type TopologyChange } from '../model/topology/index.js';
import { applyChange, waitForRebalance } from './resize.js';
import { urlOf, type Rig } from './cluster.js';

type Command = (rig: Rig, args: string[]) => Promise<void>;

const USAGE = 'commands: add [port] | remove <node-id> | status | stop';

const commands: Record<string, Command> = {
  async add(rig, args) {
    const port = args[0] === undefined ? rig.nextPort() : Number(args[0]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new TopologyError(`'${args[0]}' is not a port`);
    const change = planChange(rig.topology, [{ address: '127.0.0.1', port, id: randomUUID(), side: null }], [], randomUUID);
    const node = change.added[0]!;
    console.log(`adding node ${node.id} at ${urlOf(node)} (topology ${change.next.hash})`);
    // It joins: client requests sent to it meanwhile go to the nodes not yet switched.
    await rig.startNode(node, rig.writeTopology(change.next), ['--join']);
    await resize(rig, change);
    console.log(`node ${node.id} ${urlOf(node)}`);
  },
  async remove(rig, args) {
    if (args.length !== 1) throw new TopologyError('remove takes one node id');
    const change = planChange(rig.topology, [], [args[0]!], randomUUID);
    console.log(`removing node ${change.removed[0]!.id} (topology ${change.next.hash})`);
    await resize(rig, change);
    await rig.stopNode(change.removed[0]!.id);
    console.log(`removed ${change.removed[0]!.id}`);
  },
  async status(rig) {
    for (const n of rig.topology.nodes) {
      const state = await fetch(`${urlOf(n)}/rebalance/state`).then((r) => r.json() as Promise<{ state: string; current: string; next: string }>, () => null);
      console.log(`node ${n.id} ${urlOf(n)} ${state === null ? 'not answering' : `${state.state} current ${state.current} next ${state.next}`}`);
    }
  },
};

/** Loads and activates `change` everywhere, waits until every node runs it, and makes it the rig's topology. */
async function resize(rig: Rig, change: TopologyChange): Promise<void> {
  const print = (line: string) => console.log(line);
  await applyChange(change, print);
  await waitForRebalance(change, print, 1_000);
  rig.adopt(change.next);
}

/** Reads commands from `input` until it ends (the rig keeps running then). */
export function listenForCommands(rig: Rig, input: Readable, stop: () => void): void {
  let busy = false;
  createInterface({ input }).on('line', (line) => {
    const [name = '', ...args] = line.trim().split(/\s+/);
    if (name === '') return;
    if (name === 'stop') return stop();
    const command = commands[name];
    if (command === undefined) return console.log(`failed: unknown command '${name}'; ${USAGE}`);
    if (busy && name !== 'status') return console.log(`failed: a resize is under way; ${name} refused (wait for its last line)`);
    busy = name !== 'status';
    void command(rig, args)
      .catch((error: unknown) => console.log(`failed: ${(error as Error).message ?? String(error)}`))
      .finally(() => {
        if (name !== 'status') busy = false;
      });
  });
}
