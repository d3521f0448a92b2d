// Check tag updates as a node takes them from a client: stamped, stored, and journaled to
// every other node in the same batch (so no node misses one), then published.
import { ferr } from '../../model/errors.js';
import { nextStamp, presentCheckTags, type CheckTagScope } from '../../model/check-tags.js';
import type { NodeApi } from '../api.js';
import type { JournaledCheckTags } from '../cluster/replication.js';

export interface CheckTagChange {
  add: string[];
  remove: string[];
  clear: boolean;
}

/** Applies `change` to the check's tags in `scope`; the tags present afterwards. */
export async function changeCheckTags(node: NodeApi, scope: CheckTagScope, uuid: string, change: CheckTagChange): Promise<string[]> {
  let publish = async (): Promise<void> => {};
  const state = await node.checkTags.update(
    scope,
    uuid,
    (current) => ({ stamp: nextStamp(current, Date.now()), ...change }),
    (batch, update) => {
      const doc: JournaledCheckTags = { scope, uuid, update };
      publish = node.stageForEveryNode(batch, 'checktags', doc);
    },
  );
  await publish();
  return presentCheckTags(state);
}

export async function checkTagsOf(node: NodeApi, scope: CheckTagScope, uuid: string): Promise<string[]> {
  // A rebuilding node gets its peers' check tags at the end of their walks: until then it may lack some.
  if (!node.gossip.serves(node.identity)) throw ferr('FER_ERR_REBUILDING', node.identity);
  return presentCheckTags(await node.checkTags.get(scope, uuid));
}
